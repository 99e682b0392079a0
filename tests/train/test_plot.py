"""Metric plots: the history read from the logs, the PNG files, the command line and the worker process."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from ferrum.train import FileMetricLogger, Split
from ferrum.train.metric import MetricEntry
from ferrum.train.plot import plot_file, read_history, write_plots
from ferrum.train.plot.__main__ import main
from ferrum.train.plot.background import BackgroundPlotter, start_plotter

from tests.support.train_setup import learner, training


def write_logs(directory: Path, epochs: int = 2) -> None:
    logger = FileMetricLogger(directory)
    for epoch in range(1, epochs + 1):
        for split, n in ((Split.Train, 4), (Split.Valid, 2)):
            for i in range(n):
                loss = f"{1.0 / (epoch + i)},{10 + i}"
                logger.log([MetricEntry("Loss", "", loss), MetricEntry("Note", "", "text")], epoch, split)
            logger.end_epoch(epoch, split)


def test_history_has_count_weighted_epoch_means_and_every_iteration(tmp_path: Path) -> None:
    write_logs(tmp_path)
    history = read_history(tmp_path)
    assert list(history) == ["Loss"]  # "Note" is not numeric
    train = history["Loss"][Split.Train]
    weights = [10, 11, 12, 13]
    expected = sum(w / (1 + i) for i, w in enumerate(weights)) / sum(weights)
    assert train.epochs[0][0] == 1 and train.epochs[0][1] == pytest.approx(expected)
    assert [x for x, _ in train.iterations] == [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0]
    assert [e for e, _ in read_history(tmp_path, last_epoch=1)["Loss"][Split.Valid].epochs] == [1]


def test_a_half_written_last_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "train" / "epoch-1" / "Loss.log"
    path.parent.mkdir(parents=True)
    path.write_text("0.5,2\n0.25,2\n0.1")
    assert read_history(tmp_path)["Loss"][Split.Train].epochs == [(1, 0.375)]


def test_write_plots_draws_one_png_per_numeric_metric(tmp_path: Path) -> None:
    from matplotlib.image import imread

    write_logs(tmp_path)
    assert write_plots(tmp_path) == [tmp_path / "plots" / "Loss.png"]
    image = imread(plot_file(tmp_path, "Loss"))
    assert image.shape[:2] == (360, 990)  # 11 x 4 inches at 90 dpi: two panels side by side
    assert write_plots(tmp_path, ["Accuracy"]) == []


def test_command_line_redraws_from_the_logs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_logs(tmp_path)
    assert main([str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "plots" / "Loss.png")
    assert main([str(tmp_path / "missing")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main([str(tmp_path / "empty")]) == 1
    assert "no numeric metric logs" in capsys.readouterr().err


def test_python_dash_m_runs_the_command(tmp_path: Path) -> None:
    write_logs(tmp_path)
    done = subprocess.run(
        [sys.executable, "-W", "error", "-m", "ferrum.train.plot", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("Loss.png") and done.stderr == ""


def test_the_worker_process_answers_each_request(tmp_path: Path) -> None:
    write_logs(tmp_path)
    done = subprocess.run(
        [sys.executable, "-W", "error", "-m", "ferrum.train.plot.worker", str(tmp_path), "Loss"],
        input="plot 1\nnonsense\nplot\n",
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "done\ndone\n", "")
    assert plot_file(tmp_path, "Loss").is_file()


def test_background_plotter_coalesces_requests_and_finishes_on_close(tmp_path: Path) -> None:
    write_logs(tmp_path, epochs=3)
    plotter = BackgroundPlotter(tmp_path, ["Loss"])
    for epoch in (1, 2, 3):
        plotter.request(epoch)
    plotter.close()
    assert plot_file(tmp_path, "Loss").stat().st_size > 0
    assert not list((tmp_path / "plots").glob("*.part*"))


@pytest.mark.skipif(sys.platform == "win32", reason="planting symbolic links needs privileges on Windows")
def test_write_plots_never_writes_through_a_planted_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim.png"
    victim.write_bytes(b"precious")
    run = tmp_path / "run"
    write_logs(run)
    (run / "plots").mkdir()
    for name in ("Loss.png.part.png", "Loss.png"):
        (run / "plots" / name).symlink_to(victim)
    assert write_plots(run) == [run / "plots" / "Loss.png"]
    assert victim.read_bytes() == b"precious"
    assert sorted(p.name for p in (run / "plots").iterdir()) == ["Loss.png"]
    assert not plot_file(run, "Loss").is_symlink() and plot_file(run, "Loss").stat().st_size > 0


def test_the_worker_does_not_import_a_ferrum_folder_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    marker = tmp_path / "imported"
    impostor = tmp_path / "cwd" / "ferrum"
    impostor.mkdir(parents=True)
    (impostor / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    write_logs(tmp_path / "run")
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    # The check is real: started with -m from here, Python imports the impostor.
    subprocess.run([sys.executable, "-m", "ferrum.train.plot.worker"], capture_output=True, check=False)
    assert marker.exists()
    marker.unlink()
    plotter = BackgroundPlotter(tmp_path / "run", ["Loss"])
    plotter.request(2)
    deadline = time.monotonic() + 120
    while plotter.drawn != 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    plotter.close()
    assert plotter.drawn == 2 and plot_file(tmp_path / "run", "Loss").is_file()
    assert not marker.exists()


def test_close_draws_in_process_only_when_the_worker_lags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import time

    import ferrum.train.plot as plot

    write_logs(tmp_path)
    calls: list[int | None] = []

    def record(directory: Path, names: list[str] | None = None, last_epoch: int | None = None) -> list[Path]:
        calls.append(last_epoch)
        return []

    monkeypatch.setattr(plot, "write_plots", record)
    up_to_date = BackgroundPlotter(tmp_path, ["Loss"])
    up_to_date.request(2)
    deadline = time.monotonic() + 120
    while up_to_date.drawn != 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    up_to_date.close()
    assert calls == [] and plot_file(tmp_path, "Loss").is_file()
    lagging = BackgroundPlotter(tmp_path, ["Loss"])
    lagging.request(1)  # still starting up when closed
    lagging.close()
    assert calls == [1]
    idle = BackgroundPlotter(tmp_path, ["Loss"])
    idle.close()  # nothing requested: nothing to draw
    assert calls == [1]


def test_a_failing_drawing_is_logged_not_raised(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    write_logs(tmp_path)
    (tmp_path / "plots").write_text("a file where the folder goes")
    plotter = BackgroundPlotter(tmp_path, ["Loss"])
    plotter.request(2)
    plotter.close()
    assert "drawing the plots failed" in caplog.text


def test_without_matplotlib_training_says_once_how_to_get_plots(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import ferrum.train.plot.background as background

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a)
    )
    monkeypatch.setattr(background, "_hinted", False)
    assert start_plotter(Path("."), ["Loss"]) is None
    assert start_plotter(Path("."), ["Loss"]) is None
    assert capsys.readouterr().err.count("plots need matplotlib: pip install 'ferrum-dl[plot]'") == 1
    assert start_plotter(Path("."), []) is None


def test_the_learner_leaves_a_plot_per_numeric_metric(tmp_path: Path) -> None:
    training(tmp_path, epochs=2).with_plots(True).launch(learner())
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == ["Accuracy.png", "Loss.png"]
