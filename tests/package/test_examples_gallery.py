"""The Burn gallery examples (examples/custom_csv_dataset, simple_regression, custom_training_loop,
custom_renderer, custom_learning_strategy) run in their ``--smoke`` settings and say what they should.

Each runs as a user runs it, ``python -m examples.<name> --smoke`` from the repository root,
in a few seconds.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from tests.support.examples_run import ROOT, floats, run, smoke

# ------------------------------------------------------------------ custom_csv_dataset


def test_csv_dataset_reads_typed_patients() -> None:
    out = smoke("custom_csv_dataset")
    assert "Dataset loaded with 20 rows" in out
    first = re.search(r"First item:\nDiabetesPatient\(age=(\d+), sex=(\d), bmi=([\d.]+),", out)
    assert first is not None, out
    # The CSV's text became typed fields: ints print without a decimal point, floats with one.
    assert 19 <= int(first.group(1)) <= 79 and first.group(2) in ("1", "2") and "." in first.group(3)
    # The table of columns: min <= mean <= max for each of the eleven fields.
    stats = floats(r"(?m)^\s*[a-z]+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", out)
    assert len(stats) == 11 and all(low <= mean <= high for low, mean, high in stats)


def test_csv_generator_rewrites_the_shipped_file(tmp_path: Path) -> None:
    out = tmp_path / "patients.tsv"
    done = run("examples.custom_csv_dataset.generate", "--out", str(out))
    assert done.returncode == 0, done.stderr
    shipped = ROOT / "examples" / "custom_csv_dataset" / "patients.tsv"
    assert out.read_bytes() == shipped.read_bytes()


def test_csv_dataset_names_a_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.tsv"
    done = run("examples.custom_csv_dataset", "--csv", str(missing))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(missing) in lines[0] and "header row" in lines[0], done.stderr


# ------------------------------------------------------------------ simple_regression


def test_simple_regression_learns_and_predicts() -> None:
    out = smoke("simple_regression")
    [(first, last)] = floats(r"train loss \(standardised target\): epoch 1 ([\d.]+), epoch 3 ([\d.]+)", out)
    assert math.isfinite(first) and math.isfinite(last) and last < first
    predictions = floats(r"Predicted ([-\d.]+) Expected ([-\d.]+)", out)
    assert len(predictions) == 10 and all(math.isfinite(p) for p, _ in predictions)
    assert re.search(r"13 rows: RMSE [\d.]+, R\^2 -?[\d.]+", out), out
    # The plot when matplotlib is there, one line saying why not otherwise.
    assert "plot of predicted against expected values:" in out or "no plot: matplotlib" in out


def test_simple_regression_takes_the_users_csv(tmp_path: Path) -> None:
    # y = 2a - b, comma-separated, the target in the middle column.
    rows = [(a / 10, 2 * a / 10 - (a % 7) / 10, (a % 7) / 10) for a in range(80)]
    path = tmp_path / "mine.csv"
    path.write_text("a,y,b\n" + "".join(f"{a},{y},{b}\n" for a, y, b in rows))
    done = run("examples.simple_regression", "--smoke", "--csv", str(path), "--target", "y")
    assert done.returncode == 0, done.stderr
    assert "Predicted vs. Expected y" in done.stdout
    assert "input_layer: Linear {d_input: 2," in done.stdout  # the two other columns are the features


def test_simple_regression_reports_a_bad_cell_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("a,y\n1,2\n3,four\n")
    done = run("examples.simple_regression", "--csv", str(path), "--target", "y")
    assert done.returncode == 1
    assert done.stderr.strip() == f"{path} line 3: column 'y' holds 'four', not a number"


def test_simple_regression_names_a_missing_file(tmp_path: Path) -> None:
    done = run("examples.simple_regression", "--csv", str(tmp_path / "none.csv"))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "none.csv" in lines[0] and "--target" in lines[0], done.stderr


# ------------------------------------------------------------------ custom_training_loop


def test_custom_training_loop_trains_by_hand() -> None:
    out = smoke("custom_training_loop")
    steps = floats(r"\[Train - Epoch (\d) - Iteration (\d+)\] Loss ([\d.]+) \| Accuracy ([\d.]+) %", out)
    assert len(steps) == 6  # every 4th of 8 iterations, 3 epochs
    epochs = floats(
        r"\[Epoch (\d)/3\] train loss ([\d.]+) accuracy ([\d.]+) % "
        r"\| valid loss ([\d.]+) accuracy ([\d.]+) %",
        out,
    )
    assert [e[0] for e in epochs] == [1, 2, 3]
    assert all(math.isfinite(e[1]) and math.isfinite(e[3]) and 0 <= e[2] <= 100 for e in epochs)
    assert epochs[-1][1] < epochs[0][1] and epochs[-1][3] < epochs[0][3]  # train and valid loss fall


# ------------------------------------------------------------------ custom_renderer


def test_custom_renderer_draws_the_progress() -> None:
    out = smoke("custom_renderer")
    lines = out.splitlines()
    custom = [line for line in lines if line.startswith("[custom] ")]
    assert "[custom] train epoch 1/2: 256 items" in custom and "[custom] valid epoch 2/2: 128 items" in custom
    assert len([line for line in custom if " done in " in line]) == 4  # train and valid, two epochs
    bars = [line for line in custom if re.search(r"step +\d+ \[[#.]{20}\] \d+/\d+", line)]
    assert len(bars) == 2 * (4 + 2)  # every 2nd of 8 train and 4 valid steps
    assert not any(line.startswith(("[train]", "[valid]")) for line in lines)  # the default renderer is off
    [(count,)] = floats(r"the renderer wrote (\d+) lines", out)
    assert count == len(custom)
    ends = floats(r"train epoch (\d)/2 done in [\d.]+s: 8 steps, Accuracy=([\d.]+) Loss=([\d.]+)", out)
    assert len(ends) == 2 and ends[1][2] < ends[0][2]


# ------------------------------------------------------------------ custom_learning_strategy


def test_custom_learning_strategy_clips_and_reports() -> None:
    out = smoke("custom_learning_strategy")
    assert out.count("[strategy] epoch ") == 6  # a start and an end line per epoch
    assert "[strategy] epoch 1: 8 training batches, clipping at norm 1.0" in out
    norms = floats(r"\[strategy\] iteration (\d+): gradient norm ([\d.]+)", out)
    assert [int(n[0]) for n in norms] == [4, 8, 12, 16, 20, 24]
    assert all(math.isfinite(n[1]) and n[1] > 0 for n in norms)
    clipped = floats(
        r"epoch \d trained: 8 steps, gradient norm mean [\d.]+ max [\d.]+, (\d+) steps clipped", out
    )
    [(first, last, total, steps)] = floats(
        r"train loss ([\d.]+) -> ([\d.]+); valid accuracy [\d.]+ %; (\d+) of (\d+) steps clipped", out
    )
    assert len(clipped) == 3 and sum(c[0] for c in clipped) == total and steps == 24
    assert last < first
    assert "Learner Summary" in out


# ------------------------------------------------------------------ named_tensor


def test_named_tensor_prints_the_named_shapes() -> None:
    out = smoke("named_tensor")
    assert out.splitlines() == [
        "Weights => NamedTensor[shape=[1, 4, 4], dims=[Batch, DModel, DModel]]",
        "Input   => NamedTensor[shape=[2, 3, 4], dims=[Batch, SeqLength, DModel]]",
        "Output  => NamedTensor[shape=[2, 3, 4], dims=[Batch, SeqLength, DModel]]",
        "Permute  => NamedTensor[shape=[2, 4, 3], dims=[Batch, DModel, SeqLength]]",
        "Run-time check => NamedTensor.matmul: the names do not chain ([..., X, Y] @ [..., Y, Z]): "
        "lhs [Batch, DModel, DModel] @ rhs [Batch, SeqLength, DModel]",
    ]


# ------------------------------------------------------------------ import_model_weights


def test_import_model_weights_matches_torch() -> None:
    import numpy as np

    out = smoke("import_model_weights")
    expected = np.load(ROOT / "examples" / "import_model_weights" / "expected.npz")
    torch_predictions = [int(p) for p in expected["logits"][:2].argmax(1)]
    labels = [int(label) for label in expected["labels"][:2]]
    # Every tensor of the model came from each file; torch's BatchNorm counter is the one left over.
    loaded = re.findall(r"(?m)^(\S+): ApplyResult\(applied=12, skipped=0, missing=0, unused=1, errors=0", out)
    assert loaded == ["model.pt", "model.safetensors"], out
    assert out.count("unused: norm1.num_batches_tracked") == 2
    rows = floats(r"(?m)^ +(\d+) +(\d+) +(\d+) +(\d+)$", out)  # digit, label, torch, ferrum
    assert [int(r[0]) for r in rows] == [0, 1, 0, 1] and [int(r[1]) for r in rows] == labels * 2
    assert [int(r[2]) for r in rows] == [int(r[3]) for r in rows] == torch_predictions * 2
    diffs = floats(r"same predictions: True; max \|logit difference\| ([\d.e+-]+)", out)
    assert len(diffs) == 2 and all(d <= 1e-4 for (d,) in diffs)
    assert "both files give torch's predictions on 2 digits" in out


# ------------------------------------------------------------------ onnx_inference


def test_onnx_inference_runs_both_import_paths() -> None:
    import numpy as np

    out = smoke("onnx_inference")
    expected = np.load(ROOT / "examples" / "onnx_inference" / "expected.npz")
    reference = [int(p) for p in expected["log_probs"][:2].argmax(1)]
    labels = [int(label) for label in expected["labels"][:2]]
    assert re.search(r"wrote \S+mnist_model\.py \(class MnistModel\) and \S+mnist_model\.mpk", out), out
    assert "MnistModel fields: node_conv" in out
    for name in ("ferrum.onnx.load:", "generated code:"):
        section = out.split(f"\n{name}\n", 1)[1].split("same predictions")
        rows = floats(r"(?m)^ +(\d+) +(\d+) +(\d+) +(\d+)$", section[0])
        assert [int(r[0]) for r in rows] == [0, 1] and [int(r[1]) for r in rows] == labels
        assert [int(r[2]) for r in rows] == reference and [int(r[3]) for r in rows] == reference
        [(diff,)] = floats(r"^: True; max \|output difference\| ([\d.e+-]+)", section[1])
        assert diff <= 1e-4
    assert "both import paths give onnxruntime's predictions on 2 digits" in out
