"""``ImageFolderDataset``: Burn's image_folder.rs tests on Burn's test data, decoding, errors, data loading.

Burn's test data (tests/fixtures/vision/burn) gives the expected values of
Burn's own tests; the rest of the images are made here, in ``tmp_path``,
from ferrum's shipped MNIST sample, so that the decoded pixels can be
compared with the arrays they were written from.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import D1, D3, Device, Int, Tensor
from ferrum.backend import NdArray
from ferrum.data.dataloader import Batcher, DataLoaderBuilder
from ferrum.data.dataset.vision import (
    SUPPORTED_FILES,
    Annotation,
    BoundingBox,
    ImageDatasetItem,
    ImageFolderDataset,
    ImageLoaderError,
    ImageLoaderIOError,
    ImageParsingError,
    InvalidFileExtensionError,
    MnistDataset,
    PixelDepth,
    SegmentationMask,
)
from PIL import Image

BURN = Path(__file__).resolve().parents[1] / "fixtures" / "vision" / "burn"
DATASET_ROOT = BURN / "image_folder"
SEGMASK_ROOT = BURN / "segmask_folder"
COCO_JSON = BURN / "dataset_coco.json"
COCO_IMAGES = BURN / "image_folder_coco"


def label(item: ImageDatasetItem | None) -> int:
    assert item is not None
    assert isinstance(item.annotation, Annotation.Label)
    return item.annotation.label


def labels(item: ImageDatasetItem | None) -> tuple[int, ...]:
    assert item is not None
    assert isinstance(item.annotation, Annotation.MultiLabel)
    return item.annotation.labels


def mask_of(item: ImageDatasetItem | None) -> npt.NDArray[np.int64]:
    assert item is not None
    assert isinstance(item.annotation, Annotation.SegmentationMask)
    return item.annotation.mask.mask


def boxes_of(item: ImageDatasetItem) -> tuple[BoundingBox, ...]:
    assert isinstance(item.annotation, Annotation.BoundingBoxes)
    return item.annotation.boxes


def burn_items() -> list[tuple[Path, str]]:
    return [
        (DATASET_ROOT / "orange" / "dot.jpg", "orange"),
        (DATASET_ROOT / "red" / "dot.jpg", "red"),
        (DATASET_ROOT / "red" / "dot.png", "red"),
    ]


# ------------------------------------------------------------------ Burn's tests, on Burn's test data


def test_burn_image_folder_dataset() -> None:
    dataset = ImageFolderDataset.new_classification(DATASET_ROOT)
    assert dataset.len() == 3 and dataset.get(3) is None
    assert [label(dataset.get(i)) for i in range(3)] == [0, 1, 1]  # orange, red, red
    assert dataset.class_ids() == {"orange": 0, "red": 1}
    assert [Path(item.image_path).relative_to(DATASET_ROOT).as_posix() for item in dataset] == [
        "orange/dot.jpg",
        "red/dot.jpg",
        "red/dot.png",
    ]


def test_burn_image_folder_dataset_filtered() -> None:
    dataset = ImageFolderDataset.new_classification_with(DATASET_ROOT, ["jpg"])
    assert dataset.len() == 2 and dataset.get(2) is None
    assert [label(dataset.get(i)) for i in range(2)] == [0, 1]


def test_burn_image_folder_dataset_with_items_sizes_and_labels() -> None:
    dataset = ImageFolderDataset.new_classification_with_items(burn_items(), ["orange", "red"])
    assert dataset.len() == 3 and dataset.get(3) is None
    assert [(item.image_width, item.image_height) for item in dataset] == [(1, 1)] * 3
    assert [label(item) for item in dataset] == [0, 1, 1]


def test_burn_image_folder_dataset_multilabel() -> None:
    items = [(path, ["dot", name]) for path, name in burn_items()]
    dataset = ImageFolderDataset.new_multilabel_classification_with_items(items, ["dot", "orange", "red"])
    assert dataset.len() == 3 and dataset.get(3) is None
    assert [labels(item) for item in dataset] == [(0, 1), (0, 2), (0, 2)]
    assert dataset.get(0) is not None and dataset.get(0) == dataset[0]


def test_burn_image_folder_dataset_invalid_extension() -> None:
    with pytest.raises(InvalidFileExtensionError, match="'ico'"):
        ImageFolderDataset.new_classification_with(DATASET_ROOT, ["ico"])


def test_burn_parse_image_annotation_label_and_multilabel_strings(tmp_path: Path) -> None:
    image = DATASET_ROOT / "red" / "dot.png"
    single = ImageFolderDataset.new_classification_with_items([(image, "0"), (image, "1")], ["0", "1"])
    assert [label(item) for item in single] == [0, 1]
    multi = ImageFolderDataset.new_multilabel_classification_with_items(
        [(image, ["0", "2"])], ["0", "1", "2"]
    )
    assert labels(multi.get(0)) == (0, 2)


def test_burn_pixel_depth_try_into() -> None:
    """Burn's ``u8/u16/f32::try_from(PixelDepth)``: the value of the right depth, an error for another."""
    dataset = ImageFolderDataset.new_classification(DATASET_ROOT)
    dot = dataset[2]
    assert dot.pixel_depth is PixelDepth.U8
    assert dot.image_as(PixelDepth.U8) is dot.image
    with pytest.raises(TypeError, match="holds U8 values, not U16"):
        dot.image_as(PixelDepth.U16)
    wide = np.array([[[np.iinfo(np.uint16).max]]], dtype=np.uint16)
    deep = ImageDatasetItem(wide, 1, 1, Annotation.Label(0), "wide.png")
    assert deep.image_as(PixelDepth.U16)[0, 0, 0] == 65535
    with pytest.raises(TypeError, match="not F32"):
        deep.image_as(PixelDepth.F32)
    floats = ImageDatasetItem(
        np.full((1, 1, 1), np.finfo(np.float32).max, np.float32), 1, 1, Annotation.Label(0), "f"
    )
    assert floats.image_as(PixelDepth.F32)[0, 0, 0] == np.finfo(np.float32).max
    with pytest.raises(TypeError, match="not U16"):
        floats.image_as(PixelDepth.U16)
    assert [PixelDepth.of(np.zeros(1, d.dtype)) for d in PixelDepth] == list(PixelDepth)
    with pytest.raises(TypeError, match="int32"):
        PixelDepth.of(np.zeros(1, np.int32))


def burn_mask(name: str) -> npt.NDArray[np.int64]:
    """The mask values Burn's test data lists beside each mask (the patterns Burn's tests assert)."""
    text = (SEGMASK_ROOT / "annotations" / f"mask_{name}.txt").read_text(encoding="utf-8")
    return np.array([[int(v) for v in line.split()] for line in text.splitlines() if line.strip()], np.int64)


def test_burn_segmask_values() -> None:
    checkerboard = burn_mask("checkerboard")
    rows, cols = np.indices((8, 8))
    np.testing.assert_array_equal(checkerboard, 1 + (rows + cols) % 2)  # Burn's 1, 2, 1, 2, ... / 2, 1, ...
    assert burn_mask("random_2colors")[0].tolist() == [1, 2, 1, 1, 1, 2, 1, 1]
    assert burn_mask("random_3colors")[0].tolist() == [3, 1, 3, 3, 1, 1, 3, 2]


def test_burn_segmask_folder_dataset() -> None:
    names = ["checkerboard", "random_2colors", "random_3colors"]
    items = [
        (SEGMASK_ROOT / "images" / f"image_{n}.png", SEGMASK_ROOT / "annotations" / f"mask_{n}.png")
        for n in names
    ]
    dataset = ImageFolderDataset.new_segmentation_with_items(items, ["foo", "bar", "baz", "qux"])
    assert dataset.len() == 3 and dataset.get(3) is None
    for index, name in enumerate(names):
        item = dataset[index]
        mask = mask_of(item)
        assert mask.dtype == np.int64 and mask.shape == (8, 8)
        np.testing.assert_array_equal(mask, burn_mask(name))
        assert item.annotation == Annotation.SegmentationMask(SegmentationMask(burn_mask(name)))
        assert item.image.shape == (8, 8, 3) and item.image.dtype == np.uint8


BURN_COCO_BOXES = {
    "two_dots_and_triangle.jpg": [
        ((3.125_172, 18.090_784, 10.960_11, 10.740_027), 0),
        ((3.257_221_5, 3.037_139, 10.563_961, 10.828_06), 0),
        ((15.097_662, 3.389_271, 12.632_737, 11.180_193), 1),
    ],
    "dot_triangle.jpg": [
        ((3.125_172, 17.914_719, 10.828_06, 11.004_127), 0),
        ((15.273_727, 3.301_238, 12.192_573, 11.708_39), 1),
    ],
    "one_dot.jpg": [((10.079_78, 9.595_598, 10.960_11, 11.356_258), 0)],
}
"""Burn's coco_detection_dataset expected boxes: f32 coordinates (x, y, width, height) and label."""


def test_burn_coco_detection_dataset() -> None:
    dataset = ImageFolderDataset.new_coco_detection(COCO_JSON, COCO_IMAGES)
    assert dataset.len() == 3 and dataset.get(3) is None
    assert dataset.class_ids() == {"dot": 0, "triangle": 1}
    seen = []
    for item in dataset:
        name = Path(item.image_path).name
        seen.append(name)
        found = [(np.array(b.coords, np.float32).tolist(), b.label) for b in boxes_of(item)]
        expected = [(np.array(c, np.float32).tolist(), lab) for c, lab in BURN_COCO_BOXES[name]]
        assert len(found) == len(expected)
        assert all(box in found for box in expected)
        assert item.image.shape == (32, 32, 3) and (item.image_width, item.image_height) == (32, 32)
    assert seen == ["two_dots_and_triangle.jpg", "dot_triangle.jpg", "one_dot.jpg"]  # the JSON's order


# ------------------------------------------------------------------------- images made from MNIST digits


MNIST = MnistDataset.sample("test")


def digit(index: int) -> tuple[npt.NDArray[np.uint8], int]:
    item = MNIST[index]
    return np.array(item.image), item.label


def write(path: Path, pixels: npt.NDArray[Any], **options: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path, **options)
    return path


def mnist_folder(root: Path, count: int) -> list[tuple[Path, npt.NDArray[np.uint8], int]]:
    """``count`` digits as grey PNGs ``root/<digit name>/<index>.png``."""
    names = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    made = []
    for index in range(count):
        pixels, value = digit(index)
        made.append((write(root / names[value] / f"{index:05d}.png", pixels), pixels, value))
    return made


def test_classification_of_a_folder_of_mnist_pngs(tmp_path: Path) -> None:
    made = mnist_folder(tmp_path / "digits", 60)
    dataset = ImageFolderDataset.new_classification(tmp_path / "digits")
    folders = sorted({path.parent.name for path, _, _ in made})
    assert dataset.class_ids() == {name: i for i, name in enumerate(folders)}
    assert dataset.len() == 60
    expected = sorted(made, key=lambda entry: (entry[0].parent.name, entry[0].name))
    for item, (path, pixels, _) in zip(dataset, expected, strict=True):
        assert item.image_path == str(path)
        assert item.image.dtype == np.uint8 and item.image.shape == (28, 28, 1)
        assert (item.image_width, item.image_height) == (28, 28)
        np.testing.assert_array_equal(item.image[:, :, 0], pixels)
        assert label(item) == folders.index(path.parent.name)


def test_rgb_jpeg_16_bit_png_alpha_palette_and_bmp_decode_as_pillow_reads_them(tmp_path: Path) -> None:
    grey, _ = digit(0)
    rgb = np.stack([grey, 255 - grey, grey // 2], axis=-1)
    wide = grey.astype(np.uint16) * 257 + 3
    files = {
        "rgb.jpg": write(tmp_path / "rgb.jpg", rgb, quality=95, subsampling=0),
        "rgb.png": write(tmp_path / "rgb.png", rgb),
        "wide.png": write(tmp_path / "wide.png", wide),
        "rgba.png": write(tmp_path / "rgba.png", np.dstack([rgb, grey])),
        "la.png": write(tmp_path / "la.png", np.dstack([grey, 255 - grey])),
        "rgb.bmp": write(tmp_path / "rgb.bmp", rgb),
        "upper.JPEG": write(tmp_path / "upper.JPEG", rgb, format="JPEG"),
    }
    palette = Image.fromarray(rgb).convert("P", palette=Image.Palette.ADAPTIVE, colors=16)
    palette.save(tmp_path / "palette.png")
    files["palette.png"] = tmp_path / "palette.png"
    dataset = ImageFolderDataset.new_classification_with_items([(p, "x") for p in files.values()], ["x"])
    decoded = {Path(item.image_path).name: item.image for item in dataset}
    with Image.open(files["rgb.jpg"]) as jpeg:
        np.testing.assert_array_equal(decoded["rgb.jpg"], np.asarray(jpeg))
    assert decoded["rgb.jpg"].dtype == np.uint8
    assert np.abs(decoded["rgb.jpg"].astype(np.int16) - rgb).mean() < 4  # lossy, but close to the source
    np.testing.assert_array_equal(decoded["rgb.png"], rgb)
    np.testing.assert_array_equal(decoded["rgb.bmp"], rgb)
    assert decoded["wide.png"].dtype == np.uint16 and decoded["wide.png"].shape == (28, 28, 1)
    np.testing.assert_array_equal(decoded["wide.png"][:, :, 0], wide)
    np.testing.assert_array_equal(decoded["rgba.png"], np.dstack([rgb, grey]))
    np.testing.assert_array_equal(decoded["la.png"], np.dstack([grey, 255 - grey]))
    np.testing.assert_array_equal(decoded["palette.png"], np.asarray(palette.convert("RGB")))
    assert decoded["upper.JPEG"].shape == (28, 28, 3)
    assert dataset[2].pixel_depth is PixelDepth.U16 and dataset[0].pixel_depth is PixelDepth.U8


def test_u8_images_are_not_converted(tmp_path: Path) -> None:
    pixels, _ = digit(1)
    path = write(tmp_path / "a" / "x.png", pixels)
    item = ImageFolderDataset.new_classification(tmp_path)[0]
    assert item.image.dtype == np.uint8 and item.image.nbytes == pixels.nbytes
    assert item.image_path == str(path)


def test_segmentation_masks_grey_16_bit_rgb_and_palette(tmp_path: Path) -> None:
    pixels, _ = digit(2)
    classes = (pixels > 100).astype(np.uint8) + (pixels > 200).astype(np.uint8)  # 0, 1, 2
    image = write(tmp_path / "image.png", pixels)
    grey = write(tmp_path / "grey.png", classes)
    wide = write(tmp_path / "wide.png", classes.astype(np.uint16))
    rgb = write(tmp_path / "rgb.png", np.dstack([classes, classes * 7, classes * 9]))
    indexed = Image.fromarray(classes, mode="L").convert("P")
    indexed.putpalette([0, 0, 0, 255, 0, 0, 0, 255, 0])
    indexed.save(tmp_path / "palette.png")
    items = [(image, mask) for mask in (grey, wide, rgb, tmp_path / "palette.png")]
    dataset = ImageFolderDataset.new_segmentation_with_items(items, ["background", "stroke", "core"])
    for item in dataset:
        np.testing.assert_array_equal(mask_of(item), classes.astype(np.int64))
        np.testing.assert_array_equal(item.image[:, :, 0], pixels)


def test_annotation_is_an_enum_of_four_variants() -> None:
    variants = [
        Annotation.Label(1),
        Annotation.MultiLabel((0, 2)),
        Annotation.BoundingBoxes((BoundingBox((1.0, 2.0, 3.0, 4.0), 1),)),
        Annotation.SegmentationMask(SegmentationMask(np.zeros((2, 2), np.int64))),
    ]
    assert all(isinstance(v, Annotation) for v in variants)
    assert not isinstance(1, Annotation)
    with pytest.raises(TypeError, match="enum"):
        Annotation()
    assert variants[0] == Annotation.Label(1) and variants[0] != Annotation.Label(2)
    assert variants[3] == Annotation.SegmentationMask(SegmentationMask(np.zeros((2, 2), np.int64)))
    assert variants[3] != Annotation.SegmentationMask(SegmentationMask(np.ones((2, 2), np.int64)))
    assert SUPPORTED_FILES == ("bmp", "jpg", "jpeg", "png")


# ---------------------------------------------------------------------------------------------- errors


def test_truncated_and_unreadable_images_name_the_file(tmp_path: Path) -> None:
    rgb = np.dstack([digit(3)[0]] * 3)
    whole = write(tmp_path / "whole.png", rgb).read_bytes()
    truncated = tmp_path / "truncated.png"
    truncated.write_bytes(whole[: len(whole) // 2])
    garbage = tmp_path / "garbage.jpg"
    garbage.write_bytes(b"not an image at all")
    jpeg = write(tmp_path / "whole.jpg", rgb).read_bytes()
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(jpeg[: len(jpeg) * 2 // 3])
    dataset = ImageFolderDataset.new_classification_with_items(
        [(truncated, "x"), (garbage, "x"), (cut, "x")], ["x"]
    )
    for index, path in enumerate([truncated, garbage, cut]):
        with pytest.raises(ImageLoaderIOError, match="cannot be decoded") as raised:
            dataset.get(index)
        assert str(path) in str(raised.value)


def test_mask_of_another_size_than_its_image(tmp_path: Path) -> None:
    image = write(tmp_path / "image.png", digit(4)[0])
    mask = write(tmp_path / "mask.png", np.zeros((27, 28), np.uint8))
    dataset = ImageFolderDataset.new_segmentation_with_items([(image, mask)], ["a"])
    with pytest.raises(ImageParsingError, match="28x27") as raised:
        dataset.get(0)
    assert str(mask) in str(raised.value) and str(image) in str(raised.value)


def test_mask_values_must_be_class_ids(tmp_path: Path) -> None:
    image = write(tmp_path / "image.png", digit(4)[0])
    mask = write(tmp_path / "mask.png", np.full((28, 28), 5, np.uint8))
    dataset = ImageFolderDataset.new_segmentation_with_items([(image, mask)], ["a", "b"])
    with pytest.raises(ImageParsingError, match="pixel value 5 is not a class id") as raised:
        dataset.get(0)
    assert str(mask) in str(raised.value)


def coco(images: list[dict[str, Any]], annotations: list[dict[str, Any]], categories: Any = None) -> Any:
    return {
        "images": images,
        "annotations": annotations,
        "categories": [{"id": 3, "name": "digit"}] if categories is None else categories,
    }


def write_json(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_coco_of_made_images(tmp_path: Path) -> None:
    for index in range(3):
        write(tmp_path / f"{index}.png", digit(index)[0])
    box = {"image_id": 7, "category_id": 3, "bbox": [1, 2.5, 3, 4, 99]}
    document = coco([{"id": 7 + i, "file_name": f"{i}.png"} for i in range(3)], [box, {**box, "image_id": 9}])
    dataset = ImageFolderDataset.new_coco_detection(write_json(tmp_path / "coco.json", document), tmp_path)
    assert [boxes_of(item) for item in dataset] == [
        (BoundingBox((1.0, 2.5, 3.0, 4.0), 3),),
        (),  # an image without annotations has no boxes
        (BoundingBox((1.0, 2.5, 3.0, 4.0), 3),),
    ]
    np.testing.assert_array_equal(dataset[1].image[:, :, 0], digit(1)[0])


@pytest.mark.parametrize(
    ("document", "error", "message"),
    [
        (
            coco(
                [{"id": 0, "file_name": "missing.png"}],
                [{"image_id": 0, "category_id": 3, "bbox": [0, 0, 1, 1]}],
            ),
            ImageLoaderIOError,
            r"missing\.png",
        ),
        (
            coco(
                [{"id": 0, "file_name": "0.png"}],
                [{"image_id": 0, "category_id": 3, "bbox": [0, 0, 1, 1]}],
                [],
            ),
            ImageParsingError,
            "no classes",
        ),
        (coco([{"id": 0, "file_name": "0.png"}], []), ImageParsingError, "no annotations"),
        (coco([], [{"image_id": 0, "category_id": 3, "bbox": [0, 0, 1, 1]}]), ImageParsingError, "no images"),
        (
            coco([{"id": 0, "file_name": "0.png"}], [{"image_id": 0, "category_id": 3, "bbox": [0, 0, 1]}]),
            ImageParsingError,
            "not enough bounding box coordinates",
        ),
        (
            coco(
                [{"id": 0, "file_name": "0.png"}], [{"image_id": 0, "category_id": 4, "bbox": [0, 0, 1, 1]}]
            ),
            ImageParsingError,
            "unknown category_id 4",
        ),
        (
            coco(
                [{"id": 0, "file_name": "0.png"}], [{"image_id": 5, "category_id": 3, "bbox": [0, 0, 1, 1]}]
            ),
            ImageParsingError,
            r"image ids \[5\]",
        ),
        (
            coco(
                [{"id": -1, "file_name": "0.png"}], [{"image_id": 0, "category_id": 3, "bbox": [0, 0, 1, 1]}]
            ),
            ImageParsingError,
            "invalid id -1",
        ),
        ([1, 2], ImageParsingError, "JSON object"),
    ],
)
def test_coco_errors(tmp_path: Path, document: Any, error: type[Exception], message: str) -> None:
    write(tmp_path / "0.png", digit(0)[0])
    annotations = write_json(tmp_path / "coco.json", document)
    with pytest.raises(error, match=message) as raised:
        ImageFolderDataset.new_coco_detection(annotations, tmp_path)
    assert str(tmp_path) in str(raised.value)


def test_coco_file_missing_or_not_json(tmp_path: Path) -> None:
    with pytest.raises(ImageLoaderIOError, match=r"absent\.json"):
        ImageFolderDataset.new_coco_detection(tmp_path / "absent.json", tmp_path)
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(ImageParsingError, match=r"broken\.json"):
        ImageFolderDataset.new_coco_detection(broken, tmp_path)


def test_items_naming_missing_files(tmp_path: Path) -> None:
    image = write(tmp_path / "image.png", digit(0)[0])
    with pytest.raises(ImageLoaderIOError, match=r"absent\.png"):
        ImageFolderDataset.new_classification_with_items([(tmp_path / "absent.png", "a")], ["a"])
    with pytest.raises(ImageLoaderIOError, match=r"absent\.png"):
        ImageFolderDataset.new_multilabel_classification_with_items([(tmp_path / "absent.png", ["a"])], ["a"])
    with pytest.raises(ImageLoaderIOError, match=r"mask .*absent\.png"):
        ImageFolderDataset.new_segmentation_with_items([(image, tmp_path / "absent.png")], ["a"])


def test_unknown_labels_and_duplicate_classes(tmp_path: Path) -> None:
    image = write(tmp_path / "image.png", digit(0)[0])
    with pytest.raises(ImageParsingError, match="label 'b' is not one of the classes") as raised:
        ImageFolderDataset.new_classification_with_items([(image, "b")], ["a"])
    assert str(image) in str(raised.value)
    with pytest.raises(ImageParsingError, match="label 'c'"):
        ImageFolderDataset.new_multilabel_classification_with_items([(image, ["a", "c"])], ["a"])
    with pytest.raises(ImageParsingError, match="listed twice"):
        ImageFolderDataset.new_classification_with_items([(image, "a")], ["a", "a"])


def test_unsupported_extensions(tmp_path: Path) -> None:
    gif = tmp_path / "a" / "anim.gif"
    gif.parent.mkdir()
    Image.fromarray(digit(0)[0]).save(gif)
    with pytest.raises(InvalidFileExtensionError, match=r"anim\.gif: extension 'gif'"):
        ImageFolderDataset.new_classification_with_items([(gif, "a")], ["a"])
    with pytest.raises(InvalidFileExtensionError, match="'gif'"):
        ImageFolderDataset.new_classification_with(tmp_path, ["png", "gif"])
    with pytest.raises(InvalidFileExtensionError, match="''"):
        ImageFolderDataset.new_segmentation_with_items([(tmp_path / "noext", gif)], ["a"])


def test_empty_root_missing_root_and_class_folder_without_images(tmp_path: Path) -> None:
    with pytest.raises(ImageLoaderIOError, match="holds no image") as raised:
        ImageFolderDataset.new_classification(tmp_path)
    assert str(tmp_path) in str(raised.value)
    with pytest.raises(ImageLoaderIOError, match="is not a directory"):
        ImageFolderDataset.new_classification(tmp_path / "absent")
    write(tmp_path / "cat" / "0.png", digit(0)[0])
    (tmp_path / "dog").mkdir()
    (tmp_path / "dog" / "notes.txt").write_text("no images here", encoding="utf-8")
    with pytest.raises(ImageLoaderIOError, match=r"class folder .*dog holds no image"):
        ImageFolderDataset.new_classification(tmp_path)
    write(tmp_path / "dog" / "0.jpg", np.dstack([digit(1)[0]] * 3))
    assert ImageFolderDataset.new_classification(tmp_path).len() == 2
    with pytest.raises(ImageLoaderIOError, match="dog holds no image"):  # filtered out by the extension
        ImageFolderDataset.new_classification_with(tmp_path, ["png"])


def test_every_error_is_an_image_loader_error() -> None:
    assert issubclass(ImageLoaderIOError, ImageLoaderError) and issubclass(ImageLoaderIOError, OSError)
    assert issubclass(ImageParsingError, ImageLoaderError) and issubclass(ImageParsingError, ValueError)
    assert issubclass(InvalidFileExtensionError, ImageLoaderError)


def test_without_pillow_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)
    monkeypatch.setitem(sys.modules, "PIL.Image", None)
    with pytest.raises(ImportError, match=r"pip install 'ferrum-dl\[vision\]'"):
        ImageFolderDataset.new_classification(DATASET_ROOT)


# ------------------------------------------------------------------------------------------ data loading


@dataclass
class DigitBatch:
    images: Tensor[NdArray, D3]  # [batch, 28, 28], in [0, 1]
    targets: Tensor[NdArray, D1, Int]  # [batch]


class DigitBatcher(Batcher[ImageDatasetItem, DigitBatch]):
    def batch(self, items: list[ImageDatasetItem], device: Device[NdArray]) -> DigitBatch:
        pixels = np.stack([item.image_as(PixelDepth.U8)[:, :, 0] for item in items])  # [batch, 28, 28] uint8
        images: Tensor[NdArray, D3] = Tensor.from_numpy(pixels, device).float().div_scalar(255.0)
        targets: Tensor[NdArray, D1, Int] = Tensor.from_numpy(
            np.array([label(i) for i in items], np.int64), device
        )
        return DigitBatch(images, targets)


@pytest.mark.parametrize("workers", [0, 2])
def test_data_loader_batches_decoded_images(tmp_path: Path, workers: int) -> None:
    made = mnist_folder(tmp_path, 50)
    dataset = ImageFolderDataset.new_classification(tmp_path)
    ids = dataset.class_ids()
    by_path = {str(path): (pixels, ids[path.parent.name]) for path, pixels, _ in made}
    loader = (
        DataLoaderBuilder(DigitBatcher())
        .batch_size(8)
        .shuffle(3)
        .num_workers(workers)
        .set_device(NdArray.device())
        .build(dataset)
    )
    batches = list(loader)
    assert [b.images.dims() for b in batches] == [(8, 28, 28)] * 6 + [(2, 28, 28)]
    images = np.concatenate([b.images.to_numpy() for b in batches])
    targets = np.concatenate([b.targets.to_numpy() for b in batches])
    # Which item each row is: the loader's order, seeded, the same for any worker count.
    order = [
        p
        for b in DataLoaderBuilder(PathBatcher()).batch_size(8).shuffle(3).num_workers(workers).build(dataset)
        for p in b
    ]
    assert sorted(order) == sorted(by_path)
    expected = np.stack([by_path[p][0] for p in order]).astype(np.float32) / 255.0
    np.testing.assert_allclose(images, expected, rtol=0, atol=1e-7)
    assert targets.tolist() == [by_path[p][1] for p in order]


class PathBatcher(Batcher[ImageDatasetItem, list[str]]):
    def batch(self, items: list[ImageDatasetItem]) -> list[str]:
        return [item.image_path for item in items]
