"""Vision datasets: MNIST digits read from IDX files, and images on disk (``ImageFolderDataset``).

Example:
    >>> from ferrum.data.dataset.vision import MnistDataset
    >>> test = MnistDataset.test("/data/mnist", download=False)  # doctest: +SKIP
    >>> len(test)  # doctest: +SKIP
    10000
"""

from ferrum.data.dataset.vision.idx import read_idx
from ferrum.data.dataset.vision.image_folder import (
    SUPPORTED_FILES,
    Annotation,
    AnnotationVariant,
    BoundingBox,
    ImageDatasetItem,
    ImageFolderDataset,
    ImageLoaderError,
    ImageLoaderIOError,
    ImageParsingError,
    InvalidFileExtensionError,
    PixelDepth,
    SegmentationMask,
)
from ferrum.data.dataset.vision.mnist import MNIST_MIRROR, Downloader, MnistDataset, MnistItem, download_file

__all__ = [
    "MNIST_MIRROR",
    "SUPPORTED_FILES",
    "Annotation",
    "AnnotationVariant",
    "BoundingBox",
    "Downloader",
    "ImageDatasetItem",
    "ImageFolderDataset",
    "ImageLoaderError",
    "ImageLoaderIOError",
    "ImageParsingError",
    "InvalidFileExtensionError",
    "MnistDataset",
    "MnistItem",
    "PixelDepth",
    "SegmentationMask",
    "download_file",
    "read_idx",
]
