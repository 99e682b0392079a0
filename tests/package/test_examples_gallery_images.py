"""The image gallery example (examples/custom_image_dataset) runs in its ``--smoke`` setting and says what it
should, on the folder it writes and on folders of the user's; its batcher gives NumPy's normalised pixels.

It runs as a user runs it, ``python -m examples.custom_image_dataset --smoke`` from the repository root.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from ferrum.backend import NdArray
from ferrum.data.dataset.vision import Annotation, ImageDatasetItem, ImageFolderDataset

from examples.custom_image_dataset.data import ClassificationBatcher, load_splits, rgb, write_shapes
from tests.support import examples_run

PIL = pytest.importorskip("PIL.Image")


def smoke(*extra: str) -> str:
    return examples_run.smoke("custom_image_dataset", *extra, timeout=180)


def predictions(out: str) -> list[tuple[str, str, float, str]]:
    """(file, predicted class, its probability, expected class) of each classified image."""
    found = re.findall(r"(?m)^(\S+): Predicted (\S+) \(([\d.]+)\) Expected (\S+)$", out)
    return [(f, p, float(c), e) for f, p, c, e in found]


def check_training_lines(out: str, valid: int, classes: list[str]) -> None:
    [(first, last)] = re.findall(r"train loss: epoch 1 ([\d.]+), epoch 2 ([\d.]+)", out)
    assert math.isfinite(float(first)) and math.isfinite(float(last))
    [accuracy] = re.findall(rf"validation accuracy: ([\d.]+) % on {valid} images; trained in [\d.]+s", out)
    assert 0.0 <= float(accuracy) <= 100.0
    assert "Learner Summary" in out and "norm6: BatchNorm" in out
    shown = predictions(out)
    assert len(shown) == min(8, valid), out
    # The file's folder is its class; the probability is the largest of len(classes).
    assert all(f.split("/")[0] == e and p in classes and e in classes for f, p, _, e in shown)
    assert all(1.0 / len(classes) - 0.01 <= c <= 1.0 for _, _, c, _ in shown)
    right = sum(p == e for _, p, _, e in shown)
    assert f"{right}/{len(shown)} validation images right" in out


def test_custom_image_dataset_trains_on_the_shapes_it_writes() -> None:
    out = smoke()
    assert re.search(r"wrote 96 32x32 PNGs of 4 shapes \(circle, cross, square, triangle\) in [\d.]+s", out)
    assert "classes: circle, cross, square, triangle; 77 training and 19 validation images" in out
    [(mean, std)] = re.findall(r"channel mean \[(.+)\] std \[(.+)\] \(training images\)", out)
    assert all(0.0 < float(v) < 1.0 for v in mean.split(", ") + std.split(", "))
    check_training_lines(out, 19, ["circle", "cross", "square", "triangle"])


def test_custom_image_dataset_reads_a_users_folder_of_mixed_images(tmp_path: Path) -> None:
    # Two classes, images of other sizes and modes than the example's own: grey, RGBA, JPEG.
    rng = np.random.default_rng(3)
    for cls, value in [("bees", 40), ("ants", 220)]:
        (tmp_path / cls).mkdir()
        for i in range(10):
            height, width = 40 + i, 56 - i
            pixels = np.clip(rng.normal(value, 20, (height, width, 3)), 0, 255).astype(np.uint8)
            image = PIL.fromarray(pixels)
            if i % 3 == 0:
                image.convert("L").save(tmp_path / cls / f"{i}.png")
            elif i % 3 == 1:
                image.convert("RGBA").save(tmp_path / cls / f"{i}.png")
            else:
                image.save(tmp_path / cls / f"{i}.jpg")
    out = smoke("--data", str(tmp_path))
    assert "wrote" not in out
    assert "classes: ants, bees; 16 training and 4 validation images" in out
    check_training_lines(out, 4, ["ants", "bees"])


def test_custom_image_dataset_takes_burns_train_and_test_folders(tmp_path: Path) -> None:
    write_shapes(tmp_path / "train", 6)
    write_shapes(tmp_path / "test", 3, seed=1)
    out = smoke("--data", str(tmp_path))
    assert "classes: circle, cross, square, triangle; 24 training and 12 validation images" in out
    check_training_lines(out, 12, ["circle", "cross", "square", "triangle"])


EXPECTED = {
    "missing": "no such directory",
    "no class folders": "has no class folders",
    "loose images": "holds images outside class folders (loose.png)",
    "one class": "at least 2",
}


@pytest.mark.parametrize("case", list(EXPECTED))
def test_custom_image_dataset_refuses_an_unusable_folder_in_one_line(tmp_path: Path, case: str) -> None:
    root = tmp_path / "mine"
    if case != "missing":
        root.mkdir()
    if case in ("no class folders", "loose images"):
        PIL.fromarray(np.zeros((8, 8, 3), np.uint8)).save(root / "loose.png")
    if case in ("loose images", "one class"):
        (root / "cats").mkdir()
        PIL.fromarray(np.zeros((8, 8, 3), np.uint8)).save(root / "cats" / "a.png")
    done = examples_run.run("examples.custom_image_dataset", "--data", str(root), timeout=180)
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {root}"), done.stderr
    assert EXPECTED[case] in lines[0]


def test_written_shapes_are_seeded_pngs(tmp_path: Path) -> None:
    assert write_shapes(tmp_path / "a", 3) == 12 and write_shapes(tmp_path / "b", 3) == 12
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.png"))
    assert [str(f) for f in files[:3]] == ["circle/0000.png", "circle/0001.png", "circle/0002.png"]
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)
    assert (tmp_path / "a" / files[0]).read_bytes() != (tmp_path / "a" / files[1]).read_bytes()
    splits = load_splits(tmp_path / "a")
    assert (splits.train.len(), splits.valid.len()) == (10, 2)
    assert splits.classes == ["circle", "cross", "square", "triangle"]


def test_validation_batch_is_numpys_normalised_pixels(tmp_path: Path) -> None:
    # 32x32 images need no resize or crop: the batch is (pixels / 255 - mean) / std, channels first.
    write_shapes(tmp_path, 2)
    dataset = ImageFolderDataset.new_classification(tmp_path)
    items = [item for item in (dataset.get(i) for i in range(dataset.len())) if item is not None]
    mean, std = [0.5, 0.4, 0.3], [0.25, 0.2, 0.3]
    batcher: ClassificationBatcher[NdArray] = ClassificationBatcher(32, mean, std, train=False)
    batch = batcher.batch(items, NdArray.device())
    pixels = np.stack([np.asarray(PIL.open(item.image_path).convert("RGB")) for item in items])
    expected = (pixels.astype(np.float64) / 255.0 - mean) / std
    np.testing.assert_allclose(batch.images.to_numpy(), expected.transpose(0, 3, 1, 2), rtol=1e-5, atol=1e-5)
    assert batch.targets.to_numpy().tolist() == [0, 0, 1, 1, 2, 2, 3, 3]


def test_rgb_makes_three_uint8_channels() -> None:
    def item(image: np.ndarray) -> ImageDatasetItem:
        return ImageDatasetItem(image, image.shape[1], image.shape[0], Annotation.Label(0), "x.png")

    grey = np.array([[[0], [255]]], np.uint8)
    assert rgb(item(grey)).tolist() == [[[0, 0, 0], [255, 255, 255]]]
    grey_alpha = np.array([[[7, 9]]], np.uint8)
    assert rgb(item(grey_alpha)).tolist() == [[[7, 7, 7]]]
    rgba = np.array([[[1, 2, 3, 4]]], np.uint8)
    assert rgb(item(rgba)).tolist() == [[[1, 2, 3]]]
    sixteen = np.array([[[65535], [0]]], np.uint16)
    assert rgb(item(sixteen)).tolist() == [[[255, 255, 255], [0, 0, 0]]]
