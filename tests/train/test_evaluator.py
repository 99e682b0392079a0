"""Burn's evaluator: metric values, the log layout, the summary, progress, text metrics and bad input."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
import pytest
from ferrum import D1, D2, Device, Int, Tensor
from ferrum.backend import Autodiff, Backend, NdArray
from ferrum.data.dataloader import Batcher, DataLoader, DataLoaderBuilder
from ferrum.data.dataset import InMemDataset
from ferrum.module import Module, Param
from ferrum.nn import Linear, LinearConfig
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.optim import SgdConfig
from ferrum.train import (
    EvaluationSummary,
    EvaluatorBuilder,
    Interrupter,
    Learner,
    PlainRenderer,
    Split,
    SupervisedTraining,
    TrainOutput,
)
from ferrum.train.metric import (
    AccuracyMetric,
    CharErrorRate,
    HammingScore,
    LossMetric,
    NumericEntry,
    WordErrorRate,
)

from tests.support.metric_reference import NotNumeric
from tests.support.train_setup import Batch, Recorder, TinyNet, TrainB, loaders, tiny_net

B = TypeVar("B", bound=Backend)
I = TypeVar("I", bound=Backend)  # noqa: E741 - Burn's name for the inner backend


def log_entries(path: Path) -> list[NumericEntry]:
    return [NumericEntry.deserialize(line) for line in path.read_text().splitlines()]


def quiet() -> PlainRenderer:
    return PlainRenderer(interval=3600.0, stream=io.StringIO())


def classifier(seed: int = 5) -> TinyNet[NdArray]:
    TrainB.seed(seed)
    return tiny_net(TrainB.device()).valid()


def numpy_batches(
    model: TinyNet[NdArray], loader: DataLoader[Batch[NdArray]]
) -> list[tuple[float, float, int]]:
    """Each batch's (loss, accuracy in %, size), computed with NumPy from the model's logits."""
    found = []
    for batch in loader:
        logits = model.forward(batch.x).to_numpy().astype(np.float64)
        targets = np.array(batch.targets.to_data().to_list())
        log_probs = logits - logits.max(1, keepdims=True)
        log_probs -= np.log(np.exp(log_probs).sum(1, keepdims=True))
        loss = -log_probs[np.arange(len(targets)), targets].mean()
        found.append((float(loss), 100.0 * float((logits.argmax(1) == targets).mean()), len(targets)))
    return found


def weighted(values: list[tuple[float, int]]) -> float:
    return sum(v * n for v, n in values) / sum(n for _, n in values)


# ---- numeric metrics


def test_metric_values_are_the_models_loss_and_accuracy_over_the_loader(tmp_path: Path) -> None:
    model = classifier()
    _, loader = loaders(n_valid=40)  # batches of 16, 16 and 8: the epoch value weighs them
    expected = numpy_batches(model, loader)
    result = (
        EvaluatorBuilder(tmp_path)
        .metrics(AccuracyMetric(), LossMetric())
        .renderer(quiet())
        .build(model)
        .eval("Plain", loader)
    )
    assert [n for _, _, n in expected] == [16, 16, 8]
    logged_loss = log_entries(tmp_path / "test" / "plain" / "epoch-1" / "Loss.log")
    logged_accuracy = log_entries(tmp_path / "test" / "plain" / "epoch-1" / "Accuracy.log")
    for (loss, accuracy, count), loss_entry, accuracy_entry in zip(
        expected, logged_loss, logged_accuracy, strict=True
    ):
        assert loss_entry.count == count and loss_entry.value == pytest.approx(loss, rel=1e-5)
        assert accuracy_entry.count == count and accuracy_entry.value == pytest.approx(accuracy)
    summary = result.summary
    assert summary.metric("Loss") == pytest.approx(weighted([(v, n) for v, _, n in expected]), rel=1e-5)
    assert summary.metric("Accuracy") == pytest.approx(weighted([(a, n) for _, a, n in expected]))
    assert (summary.name, summary.items, summary.iterations) == ("Plain", 40, 3)
    assert result.stop_reason is None


def test_an_autodiff_model_is_evaluated_on_the_inner_backend(tmp_path: Path) -> None:
    TrainB.seed(5)
    autodiff = tiny_net(TrainB.device(), dropout=0.9)  # dropout is off on the inner backend
    evaluator = EvaluatorBuilder(tmp_path).metrics(LossMetric()).renderer(quiet()).build(autodiff)
    assert not any(device.is_autodiff for device in evaluator.model.devices())
    _, loader = loaders()
    expected = numpy_batches(classifier(), loader)  # the same weights, built on the inner backend
    loss = evaluator.eval("Plain", loader).summary.metric("Loss")
    assert loss == pytest.approx(weighted([(v, n) for v, _, n in expected]), rel=1e-5)


# ---- the artifact directory


def test_logs_are_written_where_burn_writes_them(tmp_path: Path) -> None:
    _, loader = loaders()
    evaluator = (
        EvaluatorBuilder(tmp_path)
        .metrics(AccuracyMetric(), LossMetric())
        .renderer(quiet())
        .build(classifier())
    )
    evaluator.eval(" Noise Plain ", loader)  # Burn's folder: trimmed, spaces as '-', lowercase
    evaluator.eval("Rotated", loader)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "test").rglob("*.log")) == [
        "test/noise-plain/epoch-1/Accuracy.log",
        "test/noise-plain/epoch-1/Loss.log",
        "test/rotated/epoch-1/Accuracy.log",
        "test/rotated/epoch-1/Loss.log",
    ]
    log = (tmp_path / "evaluation.log").read_text()
    assert (
        "evaluating TinyNet on ' Noise Plain ' (32 items)" in log and "evaluation 'Rotated': Accuracy " in log
    )
    # An evaluation of the same name replaces the earlier one's logs, and nothing else.
    evaluator.eval("rotated", loader)
    assert len(log_entries(tmp_path / "test" / "rotated" / "epoch-1" / "Loss.log")) == 2
    assert len(log_entries(tmp_path / "test" / "noise-plain" / "epoch-1" / "Loss.log")) == 2
    assert not (tmp_path / "train").exists() and not (tmp_path / "valid").exists()


def test_a_name_that_would_leave_the_artifact_directory_stays_in_it(tmp_path: Path) -> None:
    _, loader = loaders()
    evaluator = EvaluatorBuilder(tmp_path / "run").metrics(LossMetric()).renderer(quiet()).build(classifier())
    evaluator.eval("../escape", loader)
    assert (tmp_path / "run" / "test" / "..-escape" / "epoch-1" / "Loss.log").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


# ---- the summary


def test_the_summary_is_printed_and_saved_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, loader = loaders()
    builder = EvaluatorBuilder(tmp_path).metrics(LossMetric(), AccuracyMetric()).renderer(quiet())
    result = builder.build(classifier()).eval("Plain", loader)
    assert "Evaluation Summary" not in capsys.readouterr().out
    assert not (tmp_path / "test" / "plain" / "summary.txt").exists()

    result = builder.summary().build(classifier()).eval("Plain", loader)
    printed = capsys.readouterr().out
    summary = result.summary
    assert list(summary.metrics) == ["Accuracy", "Loss"]  # alphabetically, as Burn's summary
    assert printed.strip() == str(summary)
    assert (tmp_path / "test" / "plain" / "summary.txt").read_text().strip() == str(summary)
    lines = str(summary).splitlines()
    assert lines[0] == f"{'=' * 24} Evaluation Summary {'=' * 24}"
    assert "Name: Plain" in lines and "Items: 32" in lines and "TinyNet" in str(summary)
    assert lines[-2] == f"| Accuracy | {summary.metric('Accuracy'):<9.3f}|"
    assert lines[-1] == f"| Loss     | {summary.metric('Loss'):<9.3f}|"
    with pytest.raises(
        KeyError, match=r"no value of metric 'CER' in evaluation 'Plain' \(it has \['Accuracy', 'Loss'\]\)"
    ):
        summary.metric("CER")


def test_the_summary_formats_small_values_as_burn() -> None:
    text = str(EvaluationSummary("Plain", 8, 1, {"Loss": 0.00123}))
    assert text.splitlines()[-1] == "| Loss   | 1.230e-3 |"


# ---- progress


def test_the_renderer_receives_the_progress_and_is_returned(tmp_path: Path) -> None:
    recorder = Recorder()
    _, loader = loaders()
    result = (
        EvaluatorBuilder(tmp_path)
        .metrics(AccuracyMetric(), LossMetric())
        .renderer(recorder)
        .build(classifier())
        .eval("Plain", loader)
    )
    assert result.renderer is recorder  # Burn's eval returns the renderer, for the next evaluation
    kinds = [kind for kind, _, _ in recorder.calls]
    assert kinds == ["start", "update", "update", "end"]
    for _, progress, _ in recorder.calls:
        assert (progress.split, progress.evaluation, progress.epoch, progress.epoch_total) == (
            Split.Test,
            "Plain",
            1,
            1,
        )
    assert [p.progress.items_processed for _, p, _ in recorder.calls] == [0, 16, 32, 32]
    assert [p.iteration for _, p, _ in recorder.calls] == [0, 1, 2, 2]
    _, _, states = recorder.calls[2]
    assert [state.name for state in states] == ["Accuracy", "Loss"]
    assert states[1].running is not None
    assert states[1].running.value == pytest.approx(result.summary.metric("Loss"), rel=1e-6)


def test_plain_lines_name_the_evaluation(tmp_path: Path) -> None:
    out = io.StringIO()
    _, loader = loaders()
    renderer = PlainRenderer(interval=3600.0, stream=out)
    EvaluatorBuilder(tmp_path).metrics(LossMetric()).renderer(renderer).build(classifier()).eval(
        "Plain", loader
    )
    assert out.getvalue().startswith("[test] Plain  done: 32 items in ")
    assert "Loss " in out.getvalue()


def test_the_progress_bar_is_named_after_the_evaluation(tmp_path: Path) -> None:
    pytest.importorskip("tqdm")
    from ferrum.train.renderer import ProgressBarRenderer

    out = io.StringIO()
    _, loader = loaders()
    renderer = ProgressBarRenderer(stream=out)
    EvaluatorBuilder(tmp_path).metrics(LossMetric()).renderer(renderer).build(classifier()).eval(
        "Plain", loader
    )
    assert "test Plain: 100%" in out.getvalue() and "32/32" in out.getvalue()


def test_a_summary_without_metrics_is_saved_all_the_same(tmp_path: Path) -> None:
    _, loader = loaders()
    result = EvaluatorBuilder(tmp_path).summary().renderer(quiet()).build(classifier()).eval("Plain", loader)
    assert result.summary.metrics == {} and result.summary.items == 32
    assert (tmp_path / "test" / "plain" / "summary.txt").read_text().strip() == str(result.summary)


def test_an_interrupted_evaluation_says_why_and_counts_what_it_saw(tmp_path: Path) -> None:
    class StopAfterFirst(Recorder):
        def __init__(self, interrupter: Interrupter) -> None:
            super().__init__()
            self.interrupter = interrupter

        def update(self, progress: Any, metrics: Any) -> None:
            super().update(progress, metrics)
            self.interrupter.stop("enough")

    model = classifier()
    _, loader = loaders()
    builder = EvaluatorBuilder(tmp_path).metrics(LossMetric())
    result = builder.renderer(StopAfterFirst(builder.interrupter())).build(model).eval("Plain", loader)
    assert result.stop_reason == "interrupted (enough)"
    assert (result.summary.items, result.summary.iterations) == (16, 1)
    first_loss, _, _ = numpy_batches(model, loader)[0]
    assert result.summary.metric("Loss") == pytest.approx(first_loss, rel=1e-5)


# ---- text metrics


VOCAB = 6
PAD = 0
# The decoder's scores: token t is read as the argmax of row t; 3 is misread as 4, 5 as 2.
READS = np.array([0, 1, 2, 4, 4, 2])


@dataclass(frozen=True)
class Transcription(Generic[B]):
    """A text output: predicted and reference token sequences (CER and WER read them), and a loss."""

    loss: Tensor[B, D1]
    output: Tensor[B, D2, Int]
    targets: Tensor[B, D2, Int]

    def sync(self) -> Transcription[Any]:
        def inner(t: Any) -> Any:
            return t.inner() if t.device().is_autodiff else t

        return Transcription(inner(self.loss), inner(self.output), inner(self.targets))


@dataclass
class Utterance(Generic[B]):
    heard: Tensor[B, D2, Int]  # what the decoder reads, [batch, length]
    said: Tensor[B, D2, Int]  # the reference, [batch, length]


class Decoder(Module[B]):
    scores: Param[Tensor[B, D2]]  # [vocab, vocab]

    def transcribe(self, batch: Utterance[B]) -> Transcription[B]:
        size, length = batch.heard.dims()
        logits = self.scores.val().select(0, batch.heard.reshape((size * length,)))
        loss = (
            CrossEntropyLossConfig()
            .init(logits.device())
            .forward(logits, batch.said.reshape((size * length,)))
        )
        output = logits.argmax(1).reshape((size, length))
        return Transcription(loss, output, batch.said)

    def train_step(
        self: Decoder[Autodiff[I]], batch: Utterance[Autodiff[I]]
    ) -> TrainOutput[Transcription[Autodiff[I]]]:
        item = self.transcribe(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def inference_step(self, batch: Utterance[B]) -> Transcription[B]:
        return self.transcribe(batch)


def decoder(device: Device[B]) -> Decoder[B]:
    scores = np.full((VOCAB, VOCAB), -1.0, np.float32)
    scores[np.arange(VOCAB), READS] = 1.0
    return Decoder(Param(Tensor.from_numpy(scores, device)))


class UtteranceBatcher(Batcher[tuple[list[int], list[int]], Utterance[B]]):
    def __init__(self, device: Device[B]) -> None:
        self.device = device

    def batch(self, items: list[tuple[list[int], list[int]]]) -> Utterance[B]:
        width = max(len(tokens) for pair in items for tokens in pair)

        def padded(rows: list[list[int]]) -> Tensor[B, D2, Int]:
            return Tensor.from_ints([row + [PAD] * (width - len(row)) for row in rows], self.device)

        return Utterance(padded([heard for heard, _ in items]), padded([said for _, said in items]))


UTTERANCES = [
    ([1, 3, 5], [1, 3, 5]),  # read 1 4 2: two substitutions of 3
    ([2, 2, 1, 4], [2, 2, 1, 4]),  # read exactly
    ([5, 1], [5, 1, 1]),  # read 2 1 against 5 1 1: a substitution and a deletion
    ([4, 4, 3, 1, 2], [4, 3, 1, 2]),  # read 4 4 4 1 2 against 4 3 1 2: an insertion and a substitution
    ([1], [2]),  # read 1: a substitution
]


def levenshtein(a: list[int], b: list[int]) -> int:
    """The reference edit distance, by the textbook table."""
    table = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = min(
                table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + (a[i - 1] != b[j - 1])
            )
    return table[len(a)][len(b)]


def error_rates(batch_size: int) -> list[tuple[float, int]]:
    """Each batch's (error rate in %, reference tokens): the decoder's readings against the references."""
    rates = []
    for start in range(0, len(UTTERANCES), batch_size):
        pairs = UTTERANCES[start : start + batch_size]
        edits = sum(levenshtein([int(READS[t]) for t in heard], said) for heard, said in pairs)
        tokens = sum(len(said) for _, said in pairs)
        rates.append((100.0 * edits / tokens, tokens))
    return rates


def utterances(device: Device[B], batch_size: int = 2) -> DataLoader[Utterance[B]]:
    return DataLoaderBuilder(UtteranceBatcher(device)).batch_size(batch_size).build(InMemDataset(UTTERANCES))


def test_the_reference_edit_distance_and_readings_are_as_commented() -> None:
    readings = [[int(READS[t]) for t in heard] for heard, _ in UTTERANCES]
    assert readings == [[1, 4, 2], [2, 2, 1, 4], [2, 1], [4, 4, 4, 1, 2], [1]]
    distances = [levenshtein(r, said) for r, (_, said) in zip(readings, UTTERANCES, strict=True)]
    assert distances == [2, 0, 2, 2, 1]
    assert error_rates(2) == [(100.0 * 2 / 7, 7), (100.0 * 4 / 7, 7), (100.0, 1)]


def test_text_metrics_are_fed_from_text_outputs(tmp_path: Path) -> None:
    recorder = Recorder()
    result = (
        EvaluatorBuilder(tmp_path)
        .metrics(LossMetric())
        .metrics_text(CharErrorRate(PAD), WordErrorRate(PAD))
        .renderer(recorder)
        .build(decoder(NdArray.device()))
        .eval("Dev clean", utterances(NdArray.device()))
    )
    expected = error_rates(2)
    folder = tmp_path / "test" / "dev-clean" / "epoch-1"
    for name in ("CER", "WER"):
        logged = log_entries(folder / f"{name}.log")
        assert [entry.count for entry in logged] == [n for _, n in expected]
        assert [entry.value for entry in logged] == pytest.approx([rate for rate, _ in expected])
    # Text metrics are logged and shown as text: not summarised, no numeric state.
    assert list(result.summary.metrics) == ["Loss"]
    _, _, states = recorder.calls[-2]
    text = {state.name: state for state in states if state.name in ("CER", "WER")}
    assert set(text) == {"CER", "WER"}
    overall = weighted(expected)  # 7 edits over 15 reference tokens
    assert overall == pytest.approx(100.0 * 7 / 15)
    for state in text.values():
        assert state.value is None and state.running is None
        assert state.entry.formatted == f"epoch {overall:.2f} % - batch 100.00 %"


def test_supervised_training_feeds_text_metrics_on_both_splits(tmp_path: Path) -> None:
    device = Autodiff[NdArray].device()
    recorder = Recorder()
    result = (
        SupervisedTraining(tmp_path, utterances(device, batch_size=3), utterances(NdArray.device()))
        .metrics(LossMetric())
        .metrics_text(CharErrorRate(PAD))
        .renderer(recorder)
        .with_plots(False)
        .launch(Learner(decoder(device), SgdConfig().init(), 0.0))  # lr 0: the decoder reads as READS says
    )
    for split, batch_size in (("train", 3), ("valid", 2)):
        logged = log_entries(tmp_path / split / "epoch-1" / "CER.log")
        expected = error_rates(batch_size)
        assert [entry.count for entry in logged] == [n for _, n in expected]
        assert [entry.value for entry in logged] == pytest.approx([rate for rate, _ in expected])
    for split in (Split.Train, Split.Valid):
        assert [m.name for m in result.summary.metrics[split]] == ["Loss"]
        with pytest.raises(KeyError):
            result.summary.metric("CER", split)
    states = [state for kind, _, found in recorder.calls if kind == "update" for state in found]
    assert {state.name for state in states} == {"Loss", "CER"}
    assert all(state.value is None for state in states if state.name == "CER")


# ---- errors


def test_an_empty_loader_is_refused(tmp_path: Path) -> None:
    empty = DataLoaderBuilder(UtteranceBatcher(NdArray.device())).build(InMemDataset[Any]([]))
    evaluator = EvaluatorBuilder(tmp_path / "run").metrics(LossMetric()).build(decoder(NdArray.device()))
    with pytest.raises(ValueError, match=r"the dataloader of evaluation 'Plain' is empty \(0 items\)"):
        evaluator.eval("Plain", empty)
    assert not (tmp_path / "run").exists()


def test_a_model_without_inference_step_is_refused(tmp_path: Path) -> None:
    class Bare(Module[Any]):
        fc: Linear[Any]

    with pytest.raises(
        TypeError, match=r"Bare has no inference_step\(batch\) method: the Evaluator needs it"
    ):
        EvaluatorBuilder(tmp_path).build(Bare(LinearConfig(2, 2).init(NdArray.device())))
    with pytest.raises(TypeError, match=r"EvaluatorBuilder\.build needs a Module, found str"):
        EvaluatorBuilder(tmp_path).build("model")  # type: ignore[type-var]


def test_a_metric_the_output_cannot_feed_names_both(tmp_path: Path) -> None:
    _, loader = loaders()
    evaluator = (
        EvaluatorBuilder(tmp_path).metrics(LossMetric(), HammingScore()).renderer(quiet()).build(classifier())
    )
    with pytest.raises(TypeError, match=r"metric 'Hamming Score[^']*' cannot read its input") as info:
        evaluator.eval("Plain", loader)
    assert "ClassificationOutput" in str(info.value)
    # The same mistake with text metrics: a classification has no token sequences.
    text = EvaluatorBuilder(tmp_path).metrics_text(CharErrorRate()).renderer(quiet()).build(classifier())
    with pytest.raises(TypeError, match=r"metric 'CER' cannot read its input from a ClassificationOutput"):
        text.eval("Plain", loader)


def test_bad_settings_name_the_setting(tmp_path: Path) -> None:
    builder = EvaluatorBuilder(tmp_path)
    with pytest.raises(TypeError, match="a renderer has start, update and end methods, found str"):
        builder.renderer("bar")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="test metric 'Loss' is registered twice"):
        builder.metrics(LossMetric()).metrics(LossMetric())
    with pytest.raises(ValueError, match="test metric 'CER' is registered twice"):
        builder.metrics_text(CharErrorRate()).metric(CharErrorRate())

    with pytest.raises(TypeError, match=r"metric 'Stats' .* is not numeric"):
        builder.metric_numeric(NotNumeric())
    evaluator = builder.build(classifier())
    _, loader = loaders()
    with pytest.raises(
        ValueError, match="an evaluation needs a name that can name its log folder, found ' '"
    ):
        evaluator.eval(" ", loader)
    with pytest.raises(TypeError, match="an evaluation's name is a str, found int"):
        evaluator.eval(3, loader)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Evaluator\.eval needs a DataLoader"):
        evaluator.eval("Plain", [1, 2])  # type: ignore[arg-type]
