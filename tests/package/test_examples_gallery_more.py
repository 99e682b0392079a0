"""Three more of Burn's gallery examples (examples/mnist, wgan, modern_lstm) run in their ``--smoke``
settings and say what they should; their hand-written parts are checked against independent
references (Burn's own test values for the affine transforms, NumPy for the LSTM cell).

Each runs as a user runs it, ``python -m examples.<name> --smoke`` from the repository root.
"""

from __future__ import annotations

import importlib
import math
import re
import struct
from pathlib import Path

import numpy as np
from ferrum import Tensor
from ferrum.backend import NdArray

from tests.support.examples_run import floats, run, smoke

# ------------------------------------------------------------------ mnist

# Burn's evaluation names, in its order: (Shear, Scale, Rotation, Translate) switched on like bits.
MNIST_IDENTS = [
    "Plain", "Tr", "Rot", "Rot Tr", "Sc", "Sc Tr", "Sc Rot", "Sc Rot Tr",
    "Sr", "Sr Tr", "Sr Rot", "Sr Rot Tr", "Sr Sc", "Sr Sc Tr", "Sr Sc Rot", "All",
]  # fmt: skip


def test_mnist_trains_and_evaluates_every_augmentation() -> None:
    out = smoke("mnist")
    [(epochs, first, last, valid)] = floats(
        r"trained (\d+) epochs in [\d.]+s \([^)]*\): train loss ([\d.]+) -> ([\d.]+); "
        r"valid accuracy ([\d.]+) %",
        out,
    )
    assert epochs == 3 and math.isfinite(first) and last < first, out
    assert 0.0 <= valid <= 100.0
    rows = re.findall(r"(?m)^(\S+(?: \S+)*?) +accuracy +([\d.]+) % +loss ([\d.]+)$", out)
    assert [name for name, _, _ in rows] == MNIST_IDENTS, out
    assert all(0.0 <= float(acc) <= 100.0 and math.isfinite(float(loss)) for _, acc, loss in rows)
    assert "| Train | Learning Rate |" in out  # the Learner's summary lists the schedule's rate


def test_mnist_names_the_missing_files(tmp_path: Path) -> None:
    done = run("examples.mnist", "--data", str(tmp_path))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(tmp_path) in lines[0], done.stderr
    assert "train-images-idx3-ubyte" in lines[0] and "t10k-labels-idx1-ubyte" in lines[0]


def test_mnist_affine_transforms_give_burns_test_values() -> None:
    """burn-vision's Transform2D tests (transform2d.rs), on the 2x2 image [[1, 2], [3, 4]]."""
    Transform2D = importlib.import_module("examples.mnist.data").Transform2D

    image = Tensor.from_floats([[[[1.0, 2.0], [3.0, 4.0]]]], NdArray.device())
    cases = [
        (Transform2D.translation(0.0, 0.0), [[1.0, 2.0], [3.0, 4.0]]),
        (Transform2D.translation(1.0, 1.0), [[2.5, 3.0], [3.5, 4.0]]),
        (Transform2D.rotation(math.pi / 2, 0.0, 0.0), [[2.0, 4.0], [1.0, 3.0]]),
        (Transform2D.rotation(math.pi / 2, 1.0, -1.0), [[2.0, 2.0], [1.0, 1.0]]),
        (Transform2D.scale(0.5, 0.5, 0.0, 0.0), [[1.75, 2.25], [2.75, 3.25]]),
        (Transform2D.scale(0.5, 0.5, 1.0, -1.0), [[1.5, 2.0], [2.5, 3.0]]),
        (
            Transform2D.composed(
                [Transform2D.translation(0.2, -0.5), Transform2D.rotation(math.pi / 3, 0.0, 0.0)]
            ),
            [[1.7830127, 2.8660254], [1.1339746, 3.2830124]],
        ),
    ]
    for transform, expected in cases:
        got = transform.transform(image).to_numpy()[0, 0]
        np.testing.assert_allclose(got, expected, atol=1e-5, err_msg=str(transform))


# ------------------------------------------------------------------ wgan


def png_size(path: Path) -> tuple[int, int]:
    """A PNG's width and height, from its IHDR chunk (the first, right after the signature)."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_wgan_trains_clips_and_draws_digits(tmp_path: Path) -> None:
    done = run("examples.wgan", "--smoke", "--artifact-dir", str(tmp_path))
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    out = done.stdout
    steps = floats(r"\[Epoch (\d)/2\] \[Batch (\d+)/8\] \[D loss: (-?[\d.]+)\] \[G loss: (-?[\d.]+)\]", out)
    # 256 digits in batches of 32: 8 critic steps per epoch, a generator step on iterations 0 and 5.
    assert [(e, b) for e, b, _, _ in steps] == [(1, 0), (1, 5), (2, 0), (2, 5)], out
    assert all(math.isfinite(d) and math.isfinite(g) for _, _, d, g in steps)
    [(clip, largest)] = floats(r"critic's weights within \+-([\d.]+): max \|w\| ([\d.]+)", out)
    assert clip == 0.01 and 0.0 < largest <= 0.01 + 1e-7
    # A grid of 5 x 5 digits of 28 x 28 pixels per sampled epoch, and one from the reloaded generator.
    for name in ("image-0.png", "image-1.png", "fake_image.png"):
        assert png_size(tmp_path / name) == (140, 140)
        assert f"wrote {tmp_path / name}" in out
    for name in ("config.json", "generator.mpk", "discriminator.mpk"):
        assert (tmp_path / name).is_file()


def test_wgan_grid_is_the_images_in_rows(tmp_path: Path) -> None:
    from PIL import Image

    save_image = importlib.import_module("examples.wgan.training").save_image

    images = np.zeros((7, 2, 3, 1), np.float32)
    for i in range(7):
        images[i] = (i + 1) / 10  # one grey level per image
    assert save_image(images, 3, tmp_path / "grid.png")
    grid = np.asarray(Image.open(tmp_path / "grid.png"))
    assert grid.shape == (3 * 2, 3 * 3, 3)  # 7 images, 3 per row: 3 rows
    for i in range(7):
        r, c = divmod(i, 3)
        assert (grid[2 * r : 2 * r + 2, 3 * c : 3 * c + 3] == int((i + 1) / 10 * 255)).all()
    assert (grid[4:, 3:] == 0).all()  # the two cells after the last image stay black


# ------------------------------------------------------------------ modern_lstm


def test_modern_lstm_learns_and_predicts() -> None:
    out = smoke("modern_lstm")
    epochs = floats(r"Epoch (\d)/3, Avg Loss ([\d.]+), Avg Val Loss: ([\d.]+)", out)
    assert [int(e) for e, _, _ in epochs] == [1, 2, 3], out
    assert epochs[-1][1] < epochs[0][1] and epochs[-1][2] < epochs[0][2]  # train and valid loss fall
    rows = floats(r"(?m)^ +(-?[\d.]+) +(-?[\d.]+)$", out)
    assert len(rows) == 10 and all(math.isfinite(p) and e > 0 for p, e in rows)
    pattern = r"(\d+) new sequences: RMSE ([\d.]+) \(targets' standard deviation ([\d.]+)\)"
    [(count, rmse, spread)] = floats(pattern, out)
    assert count == 25 and math.isfinite(rmse) and spread > 0


def test_modern_lstm_sequences_follow_the_recurrence() -> None:
    SequenceDataset = importlib.import_module("examples.modern_lstm.dataset").SequenceDataset

    exact = [(*item.sequence, item.target) for item in SequenceDataset(20, 10, 0.0, seed=3)]
    for seq in exact:
        assert len(seq) == 12 and 0.0 <= seq[0] < 1.0 and 0.0 <= seq[1] < 1.0
        np.testing.assert_allclose(np.diff(seq[1:]), seq[:-2], rtol=1e-12)  # s[k] - s[k-1] == s[k-2]
    noisy = [(*item.sequence, item.target) for item in SequenceDataset(500, 10, 0.1, seed=3)]
    noise = np.array([np.array(s[2:]) - np.array(s[1:-1]) - np.array(s[:-2]) for s in noisy])
    assert abs(noise.mean()) < 0.01 and abs(noise.std() - 0.1) < 0.005  # N(0, 0.1) per step
    again = [item.sequence for item in SequenceDataset(5, 10, 0.1, seed=3)]
    assert again == [s[:-1] for s in noisy[:5]]  # the same seed draws the same sequences


def test_modern_lstm_cell_matches_numpy() -> None:
    from ferrum.nn import LstmState

    LstmCellConfig = importlib.import_module("examples.modern_lstm.model").LstmCellConfig

    device = NdArray.device()
    NdArray.seed(0)
    cell = LstmCellConfig(input_size=2, hidden_size=3, dropout=0.0).init(device)
    rng = np.random.default_rng(0)
    x, h0, c0 = (rng.normal(size=shape).astype(np.float32) for shape in ((4, 2), (4, 3), (4, 3)))
    state = cell.forward(
        Tensor.from_numpy(x, device), LstmState(Tensor.from_numpy(c0, device), Tensor.from_numpy(h0, device))
    )

    def weights(name: str) -> tuple[np.ndarray, np.ndarray]:
        linear = getattr(cell, name)
        return linear.weight.val().to_numpy(), linear.bias.val().to_numpy()

    def layer_norm(v: np.ndarray, name: str) -> np.ndarray:
        norm = getattr(cell, name)
        gamma, beta = norm.gamma.val().to_numpy(), norm.beta.val().to_numpy()
        centred = v - v.mean(-1, keepdims=True)
        return np.asarray(centred / np.sqrt(v.var(-1, keepdims=True) + 1e-5) * gamma + beta)

    def sigmoid(v: np.ndarray) -> np.ndarray:
        return np.asarray(1.0 / (1.0 + np.exp(-v)))

    (w_ih, b_ih), (w_hh, b_hh) = weights("weight_ih"), weights("weight_hh")
    assert (b_ih[3:6] == 1.0).all() and (b_hh[3:6] == 1.0).all()  # the forget gate's bias starts at 1
    gates = layer_norm(x @ w_ih + b_ih, "norm_x") + h0 @ w_hh + b_hh
    i, f, g, o = np.split(gates, 4, axis=1)
    c = layer_norm(sigmoid(f) * c0 + sigmoid(i) * np.tanh(g), "norm_c")
    h = layer_norm(sigmoid(o) * np.tanh(c), "norm_h")
    np.testing.assert_allclose(state.cell.to_numpy(), c, atol=1e-5)
    np.testing.assert_allclose(state.hidden.to_numpy(), h, atol=1e-5)

