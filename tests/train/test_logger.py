"""Metric loggers: Burn's file layout, truncation per epoch, reading numeric entries back."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from ferrum.train import FileMetricLogger, InMemoryMetricLogger, MetricLogger, Split
from ferrum.train.metric import MetricEntry, NumericEntry


def test_file_layout_is_split_epoch_metric(tmp_path: Path) -> None:
    logger = FileMetricLogger(tmp_path)
    logger.log(
        [MetricEntry("Loss", "0.5", "0.5,64"), MetricEntry("Top-5 Accuracy", "", "90.0,64")], 1, Split.Train
    )
    logger.log([MetricEntry("Loss", "0.25", "0.25,36")], 1, Split.Train)
    logger.log([MetricEntry("Loss", "0.75", "0.75,10")], 1, Split.Valid)
    logger.end_epoch(1, Split.Train)
    logger.end_epoch(1, Split.Valid)
    assert (tmp_path / "train" / "epoch-1" / "Loss.log").read_text() == "0.5,64\n0.25,36\n"
    assert (tmp_path / "train" / "epoch-1" / "Top-5_Accuracy.log").read_text() == "90.0,64\n"
    assert (tmp_path / "valid" / "epoch-1" / "Loss.log").read_text() == "0.75,10\n"
    assert logger.epochs() == 1
    assert isinstance(logger, MetricLogger)


def test_reading_flushes_the_open_file_and_a_new_epoch_opens_a_new_one(tmp_path: Path) -> None:
    logger = FileMetricLogger(tmp_path)
    logger.log([MetricEntry("Loss", "", "1.0,2")], 1, Split.Train)
    assert logger.read_numeric("Loss", 1, Split.Train) == [NumericEntry(1.0, 2)]
    logger.log([MetricEntry("Loss", "", "3.0,2")], 2, Split.Train)
    logger.end_epoch(2, Split.Train)
    assert logger.read_numeric("Loss", 2, Split.Train) == [NumericEntry(3.0, 2)]
    assert logger.read_numeric("Loss", 3, Split.Train) == []
    assert logger.epochs() == 2


def test_an_epoch_logged_again_is_rewritten(tmp_path: Path) -> None:
    first = FileMetricLogger(tmp_path)
    first.log([MetricEntry("Loss", "", "9.0")], 3, Split.Valid)
    first.end_epoch(3, Split.Valid)
    again = FileMetricLogger(tmp_path)
    again.log([MetricEntry("Loss", "", "1.0")], 3, Split.Valid)
    again.end_epoch(3, Split.Valid)
    assert again.read_numeric("Loss", 3, Split.Valid) == [NumericEntry(1.0)]


def test_a_damaged_log_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "valid" / "epoch-1" / "Loss.log"
    path.parent.mkdir(parents=True)
    path.write_text("0.5,3\nnot a number\n")
    with pytest.raises(ValueError, match=rf"{path}, line 2: not a numeric metric entry"):
        FileMetricLogger(tmp_path).read_numeric("Loss", 1, Split.Valid)


def test_in_memory_logger_keeps_entries_by_metric_split_and_epoch() -> None:
    logger = InMemoryMetricLogger()
    logger.log([MetricEntry("Loss", "", "0.5,2")], 1, Split.Train)
    logger.log([MetricEntry("Loss", "", "0.7,2")], 2, Split.Train)
    assert logger.read_numeric("Loss", 2, Split.Train) == [NumericEntry(0.7, 2)]
    assert logger.read_numeric("Loss", 2, Split.Valid) == []


@pytest.mark.skipif(sys.platform == "win32", reason="planting symbolic links needs privileges on Windows")
def test_a_link_planted_as_a_log_file_is_refused_not_truncated(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    path = tmp_path / "run" / "train" / "epoch-1" / "Loss.log"
    path.parent.mkdir(parents=True)
    path.symlink_to(victim)
    logger = FileMetricLogger(tmp_path / "run")
    with pytest.raises(OSError, match=rf"refusing to write through a symbolic link: {path}$"):
        logger.log([MetricEntry("Loss", "", "0.5,2")], 1, Split.Train)
    assert victim.read_text() == "precious"
