"""Images on disk as a dataset: Burn's ``ImageFolderDataset`` (``burn-dataset``'s vision module).

Four tasks share one dataset type, each with its own constructor:

* classification from a folder tree ``root/<class>/<image>``
  (``ImageFolderDataset.new_classification``, ``new_classification_with``)
  or from an explicit ``(path, label)`` list
  (``new_classification_with_items``);
* multi-label classification (``new_multilabel_classification_with_items``);
* semantic segmentation, an image and a mask whose pixel values are class
  ids (``new_segmentation_with_items``);
* object detection from COCO-format annotations (``new_coco_detection``).

Files are listed (and checked) when the dataset is built, and decoded with
Pillow each time an item is read, so a dataset of any size costs little
memory and the data loader's worker threads decode in parallel. Pillow is
the optional extra ``vision``: ``pip install 'ferrum-dl[vision]'``.
"""

from __future__ import annotations

import enum
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, TypeAlias, Union, overload

import numpy as np
import numpy.typing as npt

from ferrum.data.dataset.base import Dataset
from ferrum.data.dataset.folder_walk import files_below, index_classes
from ferrum.extras import require

__all__ = [
    "SUPPORTED_FILES",
    "Annotation",
    "AnnotationVariant",
    "BoundingBox",
    "ImageDatasetItem",
    "ImageFolderDataset",
    "ImageLoaderError",
    "ImageLoaderIOError",
    "ImageParsingError",
    "InvalidFileExtensionError",
    "PixelDepth",
    "SegmentationMask",
]

SUPPORTED_FILES: tuple[str, ...] = ("bmp", "jpg", "jpeg", "png")
"""The image file extensions the dataset reads, as Burn's list (matched without regard to case)."""

_BBOX_MIN_NUM_VALUES = 4

PathLike: TypeAlias = Union[str, "os.PathLike[str]"]


# ----------------------------------------------------------------------------------------------- errors


class ImageLoaderError(Exception):
    """Any failure to build an ``ImageFolderDataset`` or read one of its items: Burn's ``ImageLoaderError``.

    The message names the offending file or folder.
    """


class ImageLoaderIOError(ImageLoaderError, OSError):
    """A file or folder is missing or empty, or an image cannot be read or decoded (Burn's ``IOError``)."""


class InvalidFileExtensionError(ImageLoaderError, ValueError):
    """An extension outside ``SUPPORTED_FILES`` (Burn's ``InvalidFileExtensionError``)."""


class ImageParsingError(ImageLoaderError, ValueError):
    """Annotations that do not make sense: an unknown class, a malformed COCO file, a mask that does not
    fit its image (Burn's ``ParsingError``)."""


# -------------------------------------------------------------------------------------------- pixel data


class PixelDepth(enum.Enum):
    """The type of an image's pixel values: Burn's ``PixelDepth``.

    Burn tags every pixel value with its depth; here the depth is the NumPy
    dtype of the whole ``image`` array (``ImageDatasetItem.pixel_depth``).

    Example:
        >>> import numpy as np
        >>> from ferrum.data.dataset.vision import PixelDepth
        >>> PixelDepth.U16.dtype, PixelDepth.of(np.zeros(3, np.uint8))
        (dtype('uint16'), <PixelDepth.U8: 'uint8'>)
    """

    U8 = "uint8"
    """8-bit unsigned values, 0 to 255."""
    U16 = "uint16"
    """16-bit unsigned values, 0 to 65535."""
    F32 = "float32"
    """32-bit floating-point values."""

    @property
    def dtype(self) -> np.dtype[Any]:
        """The NumPy dtype of arrays of this depth."""
        return np.dtype(self.value)

    @staticmethod
    def of(array: npt.NDArray[Any]) -> PixelDepth:
        """The depth of ``array``'s values; ``TypeError`` for a dtype that is none of the three."""
        try:
            return PixelDepth(array.dtype.name)
        except ValueError:
            raise TypeError(f"no PixelDepth holds {array.dtype} values (uint8, uint16 or float32)") from None


# ------------------------------------------------------------------------------------------- annotations


@dataclass(frozen=True)
class BoundingBox:
    """One object's box: Burn's ``BoundingBox``.

    ``coords`` is ``(x_min, y_min, width, height)`` in pixels, as in COCO;
    ``label`` is the COCO category id. Burn rounds the coordinates to
    ``f32``; here they keep the file's double precision.
    """

    coords: tuple[float, float, float, float]
    label: int


@dataclass(frozen=True, eq=False)
class SegmentationMask:
    """A segmentation mask: Burn's ``SegmentationMask``.

    ``mask`` is an ``int64`` array of shape ``[H, W]``, one class id per
    pixel of the image (Burn's flat ``Vec<usize>`` is ``mask.reshape(-1)``).
    """

    mask: npt.NDArray[np.int64]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SegmentationMask):
            return NotImplemented
        return self.mask.shape == other.mask.shape and bool(np.array_equal(self.mask, other.mask))

    __hash__ = None  # type: ignore[assignment]


class _AnnotationMeta(type):
    """Makes ``isinstance(variant, Annotation)`` hold for the four variant classes."""

    def __instancecheck__(cls, instance: object) -> bool:
        return isinstance(instance, _VARIANTS)


_Mask = SegmentationMask


class Annotation(metaclass=_AnnotationMeta):
    """What an image is annotated with: Burn's enum ``Annotation``, one small class per variant.

    ``Annotation.Label(class_id)``, ``Annotation.MultiLabel(class_ids)``,
    ``Annotation.BoundingBoxes(boxes)`` and
    ``Annotation.SegmentationMask(mask)``. An item's ``annotation`` has the
    type ``AnnotationVariant``, the union of the four, so that ``match`` and
    ``isinstance`` narrow it; every variant is also an instance of
    ``Annotation``.

    Example:
        >>> from ferrum.data.dataset.vision import Annotation
        >>> def describe(annotation: Annotation.Label | Annotation.MultiLabel) -> str:
        ...     match annotation:
        ...         case Annotation.Label(class_id):
        ...             return f"class {class_id}"
        ...         case Annotation.MultiLabel(class_ids):
        ...             return f"classes {list(class_ids)}"
        >>> describe(Annotation.Label(2)), describe(Annotation.MultiLabel((0, 2)))
        ('class 2', 'classes [0, 2]')
        >>> isinstance(Annotation.Label(2), Annotation)
        True
    """

    @dataclass(frozen=True)
    class Label:
        """One class id for the whole image (Burn's ``Annotation::Label``)."""

        label: int

    @dataclass(frozen=True)
    class MultiLabel:
        """Several class ids for the whole image, in the order given (Burn's ``Annotation::MultiLabel``)."""

        labels: tuple[int, ...]

    @dataclass(frozen=True)
    class BoundingBoxes:
        """The image's object boxes, possibly none (Burn's ``Annotation::BoundingBoxes``)."""

        boxes: tuple[BoundingBox, ...]

    @dataclass(frozen=True, eq=False)
    class SegmentationMask:
        """A class id per pixel (Burn's ``Annotation::SegmentationMask``); ``mask.mask`` is ``[H, W]``."""

        mask: _Mask

        def __eq__(self, other: object) -> bool:
            if not isinstance(other, Annotation.SegmentationMask):
                return NotImplemented
            return self.mask == other.mask

        __hash__ = None  # type: ignore[assignment]

    def __init__(self) -> None:
        raise TypeError("Annotation is an enum: build one of its variants, e.g. Annotation.Label(0)")


AnnotationVariant: TypeAlias = (
    Annotation.Label | Annotation.MultiLabel | Annotation.BoundingBoxes | Annotation.SegmentationMask
)
"""The type of ``ImageDatasetItem.annotation``: one of ``Annotation``'s four variants."""

_VARIANTS = (Annotation.Label, Annotation.MultiLabel, Annotation.BoundingBoxes, Annotation.SegmentationMask)


# ------------------------------------------------------------------------------------------------- items


@dataclass(frozen=True, eq=False)
class ImageDatasetItem:
    """One image and its annotation: Burn's ``ImageDatasetItem``.

    ``image`` has shape ``[H, W, C]``: ``C`` is 1 (grey), 2 (grey and
    alpha), 3 (RGB) or 4 (RGBA), as the file stores it; its dtype is
    ``uint8``, ``uint16`` (16-bit PNGs) or ``float32`` (``pixel_depth``),
    the decoded values without conversion. ``image_width`` and
    ``image_height`` are ``W`` and ``H``; ``image_path`` is the file, as the
    dataset was given it.
    """

    image: npt.NDArray[Any]
    image_width: int
    image_height: int
    annotation: AnnotationVariant
    image_path: str

    @property
    def pixel_depth(self) -> PixelDepth:
        """The type of the image's values."""
        return PixelDepth.of(self.image)

    @overload
    def image_as(self, depth: Literal[PixelDepth.U8]) -> npt.NDArray[np.uint8]: ...
    @overload
    def image_as(self, depth: Literal[PixelDepth.U16]) -> npt.NDArray[np.uint16]: ...
    @overload
    def image_as(self, depth: Literal[PixelDepth.F32]) -> npt.NDArray[np.float32]: ...
    def image_as(self, depth: PixelDepth) -> npt.NDArray[Any]:
        """``image``, typed as ``depth``; ``TypeError`` if the image has another depth.

        Burn's ``u8::try_from(PixelDepth)``: no conversion is made.
        """
        if self.pixel_depth is not depth:
            raise TypeError(
                f"{self.image_path}: the image holds {self.pixel_depth.name} values, not {depth.name}"
            )
        return self.image

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ImageDatasetItem):
            return NotImplemented
        return (
            (self.image_width, self.image_height, self.image_path)
            == (other.image_width, other.image_height, other.image_path)
            and self.annotation == other.annotation
            and self.image.dtype == other.image.dtype
            and bool(np.array_equal(self.image, other.image))
        )

    __hash__ = None  # type: ignore[assignment]


# --------------------------------------------------------------------------------------- raw annotations


@dataclass(frozen=True)
class _Raw:
    """An item before decoding: the image file and its annotation, or the mask file it is read from."""

    image_path: Path
    annotation: Annotation.Label | Annotation.MultiLabel | Annotation.BoundingBoxes | Path


def _pillow() -> ModuleType:
    """``PIL.Image``, imported on first use."""
    return require("PIL.Image", "ImageFolderDataset (decoding images with Pillow)", "vision")


def _extension(path: Path) -> str:
    return path.suffix[1:].lower()


def _check_extension(extension: str, what: str) -> str:
    if extension.lower() not in SUPPORTED_FILES:
        raise InvalidFileExtensionError(
            f"{what}: extension {extension!r} is not supported (supported: {', '.join(SUPPORTED_FILES)})"
        )
    return extension.lower()


def _check_image_file(path: Path, role: str = "image") -> None:
    _check_extension(_extension(path), str(path))
    if not path.is_file():
        raise ImageLoaderIOError(f"{role} {path} not found")



def _label_id(name: str, ids: dict[str, int], path: Path) -> int:
    try:
        return ids[name]
    except KeyError:
        raise ImageParsingError(f"{path}: label {name!r} is not one of the classes {list(ids)}") from None


# ------------------------------------------------------------------------------------------------ decode


def _open(path: Path, role: str) -> Any:
    """The decoded Pillow image of ``path``, its file closed; errors name the file."""
    image_module = _pillow()
    try:
        with image_module.open(path) as image:
            image.load()
    except FileNotFoundError as err:
        raise ImageLoaderIOError(f"{role} {path} not found") from err
    except (OSError, SyntaxError, ValueError, image_module.DecompressionBombError) as err:
        raise ImageLoaderIOError(f"{role} {path} cannot be decoded: {err}") from err
    return image


def _decode_image(path: Path) -> npt.NDArray[Any]:
    """The pixels of ``path`` as ``[H, W, C]``, with the depth the file stores (as Burn's color types)."""
    image = _open(path, "image")
    mode = image.mode
    if mode == "1":
        image, mode = image.convert("L"), "L"  # bilevel: 0 and 255, as Burn's decoder expands it
    elif mode == "P":
        mode = "RGBA" if "transparency" in image.info else "RGB"
        image = image.convert(mode)
    elif mode == "PA":
        image, mode = image.convert("RGBA"), "RGBA"
    elif mode in ("CMYK", "YCbCr", "LAB", "HSV", "RGBX"):
        image, mode = image.convert("RGB"), "RGB"
    elif mode == "La":
        image, mode = image.convert("LA"), "LA"
    elif mode == "RGBa":
        image, mode = image.convert("RGBA"), "RGBA"
    if mode in ("L", "LA", "RGB", "RGBA"):
        pixels = np.asarray(image)
    elif mode.startswith("I;16"):
        pixels = np.asarray(image).astype(np.uint16, copy=False)
    elif mode == "I":
        values = np.asarray(image)
        if values.size and (int(values.min()) < 0 or int(values.max()) > 0xFFFF):
            raise ImageLoaderIOError(f"image {path}: 32-bit integer pixels outside the 16-bit range")
        pixels = values.astype(np.uint16)
    elif mode == "F":
        pixels = np.asarray(image).astype(np.float32, copy=False)
    else:
        raise ImageLoaderIOError(f"image {path}: unsupported color type {mode!r}")
    if pixels.ndim == 2:
        pixels = pixels[:, :, np.newaxis]
    return pixels


def _decode_mask(path: Path, num_classes: int | None) -> npt.NDArray[np.int64]:
    """The class ids of the mask file ``path``, shape ``[H, W]``.

    Grey masks (8 or 16 bits) give their values; RGB masks their first
    channel (Burn assumes the channels are equal); palette masks their
    palette indices.
    """
    image = _open(path, "mask")
    mode = image.mode
    if mode in ("L", "P") or mode.startswith("I;16") or mode == "I":
        values = np.asarray(image)
    elif mode == "RGB":
        values = np.asarray(image)[:, :, 0]
    else:
        raise ImageParsingError(f"mask {path}: unsupported color type {mode!r} (grey, RGB or palette)")
    mask = values.astype(np.int64)
    if mask.size and num_classes is not None and (int(mask.min()) < 0 or int(mask.max()) >= num_classes):
        raise ImageParsingError(
            f"mask {path}: pixel value {int(mask.max())} is not a class id (there are {num_classes} classes)"
        )
    return mask


# ----------------------------------------------------------------------------------------------- dataset


class ImageFolderDataset(Dataset[ImageDatasetItem]):
    """Images on disk with their annotations: Burn's ``ImageFolderDataset``.

    Build it with one of the constructors; ``get(i)`` decodes image ``i``
    (Pillow) into an ``ImageDatasetItem``: ``image`` of shape ``[H, W, C]``
    (``uint8``, or ``uint16`` for 16-bit PNGs), ``image_width``,
    ``image_height``, ``image_path`` and ``annotation``. Construction checks
    that every file exists and has a supported extension; a file that turns
    out unreadable or truncated raises ``ImageLoaderIOError`` from ``get``,
    naming it.

    Example (a folder ``root/cat/a.png``, ``root/dog/a.png`` of 6x4 RGB images):
        >>> import tempfile
        >>> from pathlib import Path
        >>> import numpy as np
        >>> from PIL import Image
        >>> from ferrum.data.dataset.vision import ImageFolderDataset
        >>> folder = tempfile.TemporaryDirectory()
        >>> root = Path(folder.name)
        >>> for name, value in [("dog", 255), ("cat", 0)]:
        ...     (root / name).mkdir()
        ...     Image.fromarray(np.full((4, 6, 3), value, np.uint8)).save(root / name / "a.png")
        >>> dataset = ImageFolderDataset.new_classification(root)
        >>> dataset.class_ids()  # the folder names, sorted
        {'cat': 0, 'dog': 1}
        >>> item = dataset.get(1)
        >>> item.image.shape, item.image.dtype.name, int(item.image.max()), item.annotation
        ((4, 6, 3), 'uint8', 255, Annotation.Label(label=1))
        >>> folder.cleanup()
    """

    def __init__(self, items: Sequence[_Raw], classes: dict[str, int]) -> None:
        """Internal: use the ``new_*`` constructors."""
        _pillow()
        self._items = list(items)
        self._classes = dict(classes)

    # -- constructors

    @staticmethod
    def new_classification(root: PathLike) -> ImageFolderDataset:
        """The images under ``root``, each labelled by the name of the folder that holds it.

        ``root/<class>/<image>``: class ids number the folder names in sorted
        order; items are in sorted path order. Every extension of
        ``SUPPORTED_FILES`` is read.
        """
        return ImageFolderDataset.new_classification_with(root, SUPPORTED_FILES)

    @staticmethod
    def new_classification_with(root: PathLike, extensions: Sequence[str]) -> ImageFolderDataset:
        """As ``new_classification``, reading only the files with one of ``extensions`` (e.g. ``["jpg"]``).

        Raises ``InvalidFileExtensionError`` for an extension outside
        ``SUPPORTED_FILES``, ``ImageLoaderIOError`` for a missing or empty
        ``root`` and for a class folder (a subfolder of ``root`` whose name
        does not start with ``.``) with no such image.
        """
        if isinstance(extensions, str):
            raise TypeError("extensions must be a sequence of extensions, not a string")
        allowed = {
            _check_extension(ext.lstrip("."), f"new_classification_with({str(root)!r})") for ext in extensions
        }
        base = Path(root)
        if not base.is_dir():
            raise ImageLoaderIOError(f"dataset root {base} is not a directory")
        paths = files_below(base, lambda p: _extension(p) in allowed)
        if not paths:
            raise ImageLoaderIOError(f"dataset root {base} holds no image ({', '.join(sorted(allowed))})")
        with_images = {p.relative_to(base).parts[0] for p in paths if len(p.relative_to(base).parts) > 1}
        for folder in sorted(e for e in base.iterdir() if e.is_dir() and not e.name.startswith(".")):
            if folder.name not in with_images:
                raise ImageLoaderIOError(
                    f"class folder {folder} holds no image ({', '.join(sorted(allowed))})"
                )
        classes = sorted({p.parent.name for p in paths})
        ids = index_classes(classes, ImageParsingError)
        return ImageFolderDataset([_Raw(p, Annotation.Label(ids[p.parent.name])) for p in paths], ids)

    @staticmethod
    def new_classification_with_items(
        items: Iterable[tuple[PathLike, str]], classes: Sequence[str]
    ) -> ImageFolderDataset:
        """A dataset of ``(image path, class name)`` pairs; class ids are positions in ``classes``."""
        ids = index_classes(classes, ImageParsingError)
        raw = []
        for image_path, label in items:
            path = Path(image_path)
            _check_image_file(path)
            raw.append(_Raw(path, Annotation.Label(_label_id(label, ids, path))))
        return ImageFolderDataset(raw, ids)

    @staticmethod
    def new_multilabel_classification_with_items(
        items: Iterable[tuple[PathLike, Sequence[str]]], classes: Sequence[str]
    ) -> ImageFolderDataset:
        """A dataset of ``(image path, class names)`` pairs, annotated with ``Annotation.MultiLabel``."""
        ids = index_classes(classes, ImageParsingError)
        raw = []
        for image_path, labels in items:
            path = Path(image_path)
            if isinstance(labels, str):
                raise TypeError(f"{path}: labels must be a sequence of class names, not a string")
            _check_image_file(path)
            raw.append(
                _Raw(path, Annotation.MultiLabel(tuple(_label_id(label, ids, path) for label in labels)))
            )
        return ImageFolderDataset(raw, ids)

    @staticmethod
    def new_segmentation_with_items(
        items: Iterable[tuple[PathLike, PathLike]], classes: Sequence[str]
    ) -> ImageFolderDataset:
        """A dataset of ``(image path, mask path)`` pairs, annotated with ``Annotation.SegmentationMask``.

        A mask pixel's value is its class id, a position in ``classes``. Grey
        masks (8 or 16 bits) are read as they are, RGB masks by their first
        channel, palette masks by their palette indices. ``get`` raises
        ``ImageParsingError`` for a mask of another size than its image or
        with a value that is no class id.
        """
        ids = index_classes(classes, ImageParsingError)
        raw = []
        for image_path, mask_path in items:
            path, mask = Path(image_path), Path(mask_path)
            _check_image_file(path)
            if not mask.is_file():
                raise ImageLoaderIOError(f"mask {mask} (of image {path}) not found")
            raw.append(_Raw(path, mask))
        return ImageFolderDataset(raw, ids)

    @staticmethod
    def new_coco_detection(annotations_json: PathLike, images_path: PathLike) -> ImageFolderDataset:
        """An object detection dataset from a COCO annotations file (e.g. ``instances_train2017.json``).

        ``images_path`` holds the images that the file's ``images`` list
        names (``file_name``); items follow that list. Each item's annotation
        is ``Annotation.BoundingBoxes``: its ``annotations`` entries (``bbox``
        ``[x, y, width, height]``, ``category_id`` as the label), none for an
        image without any. Raises ``ImageParsingError`` for a file that is
        not such JSON (no categories, no annotations, no images, a malformed
        entry) and ``ImageLoaderIOError`` for a missing file.
        """
        json_path, images_root = Path(annotations_json), Path(images_path)
        try:
            with open(json_path, encoding="utf-8") as file:
                document = json.load(file)
        except OSError as err:
            raise ImageLoaderIOError(f"failed to open annotations {json_path}: {err}") from err
        except (ValueError, UnicodeDecodeError) as err:
            raise ImageParsingError(f"failed to parse annotations {json_path}: {err}") from err
        if not isinstance(document, dict):
            raise ImageParsingError(
                f"{json_path}: a COCO file is a JSON object, found {type(document).__name__}"
            )
        classes = _coco_classes(document, json_path)
        boxes = _coco_boxes(document, json_path, set(classes.values()))
        raw = []
        seen: set[int] = set()
        for entry in _array(document, "images", json_path):
            image_id = _unsigned(entry, "id", json_path, "image")
            name = entry.get("file_name") if isinstance(entry, dict) else None
            if not isinstance(name, str) or not name:
                raise ImageParsingError(f"{json_path}: image {image_id} has no file_name")
            path = images_root / name
            if not path.is_file():
                raise ImageLoaderIOError(f"image {path} (image {image_id} of {json_path}) not found")
            _check_extension(_extension(path), str(path))
            seen.add(image_id)
            raw.append(_Raw(path, Annotation.BoundingBoxes(tuple(boxes.get(image_id, ())))))
        if not raw:
            raise ImageParsingError(f"{json_path}: no images found in annotations")
        orphans = sorted(set(boxes) - seen)
        if orphans:
            raise ImageParsingError(
                f"{json_path}: annotations refer to image ids {orphans} missing from 'images'"
            )
        return ImageFolderDataset(raw, classes)

    # -- the Dataset interface

    def get(self, index: int) -> ImageDatasetItem | None:
        if not 0 <= index < len(self._items):
            return None
        raw = self._items[index]
        image = _decode_image(raw.image_path)
        height, width = image.shape[0], image.shape[1]
        annotation: AnnotationVariant
        if isinstance(raw.annotation, Path):
            mask = _decode_mask(raw.annotation, len(self._classes))
            if mask.shape != (height, width):
                raise ImageParsingError(
                    f"mask {raw.annotation} is {mask.shape[1]}x{mask.shape[0]} (WxH) but its image "
                    f"{raw.image_path} is {width}x{height}"
                )
            annotation = Annotation.SegmentationMask(SegmentationMask(mask))
        else:
            annotation = raw.annotation
        return ImageDatasetItem(image, width, height, annotation, str(raw.image_path))

    def len(self) -> int:
        return len(self._items)

    def class_ids(self) -> dict[str, int]:
        """The class names and their ids (for COCO, the categories' names and ids)."""
        return dict(self._classes)


# -------------------------------------------------------------------------------------------------- COCO


def _array(document: dict[str, Any], key: str, path: Path) -> list[Any]:
    value = document.get(key, [])
    if not isinstance(value, list):
        raise ImageParsingError(f"{path}: '{key}' must be a list, found {type(value).__name__}")
    return value


def _unsigned(entry: Any, key: str, path: Path, what: str) -> int:
    value = entry.get(key) if isinstance(entry, dict) else None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ImageParsingError(f"{path}: invalid {key} {value!r} in {what} entry {entry!r}"[:300])
    return value


def _coco_classes(document: dict[str, Any], path: Path) -> dict[str, int]:
    classes: dict[str, int] = {}
    for entry in _array(document, "categories", path):
        class_id = _unsigned(entry, "id", path, "category")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise ImageParsingError(f"{path}: category {class_id} has no name")
        classes[name] = class_id
    if not classes:
        raise ImageParsingError(f"{path}: no classes found in annotations ('categories')")
    return classes


def _coco_boxes(document: dict[str, Any], path: Path, class_ids: set[int]) -> dict[int, list[BoundingBox]]:
    boxes: dict[int, list[BoundingBox]] = {}
    for entry in _array(document, "annotations", path):
        image_id = _unsigned(entry, "image_id", path, "annotation")
        class_id = _unsigned(entry, "category_id", path, "annotation")
        if class_id not in class_ids:
            raise ImageParsingError(
                f"{path}: annotation of image {image_id} has unknown category_id {class_id}"
            )
        bbox = entry.get("bbox")
        if not isinstance(bbox, list) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in bbox
        ):
            raise ImageParsingError(f"{path}: annotation of image {image_id} has no valid bbox array")
        if len(bbox) < _BBOX_MIN_NUM_VALUES:
            raise ImageParsingError(
                f"{path}: not enough bounding box coordinates in annotation for image {image_id}"
            )
        x, y, w, h = (float(v) for v in bbox[:_BBOX_MIN_NUM_VALUES])
        boxes.setdefault(image_id, []).append(BoundingBox((x, y, w, h), class_id))
    if not boxes:
        raise ImageParsingError(f"{path}: no annotations found")
    return boxes
