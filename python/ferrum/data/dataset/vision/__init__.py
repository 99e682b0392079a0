"""Vision datasets: MNIST digits read from IDX files, CIFAR-10/100 from their binary files, and images
on disk (``ImageFolderDataset``).

Example:
    >>> from ferrum.data.dataset.vision import MnistDataset
    >>> test = MnistDataset.test("/data/mnist", download=False)  # doctest: +SKIP
    >>> len(test)  # doctest: +SKIP
    10000
"""

from ferrum.data.dataset.vision.cifar import (
    CIFAR10_CLASSES,
    CIFAR100_CLASSES,
    CifarDataset,
    CifarImageDataset,
    CifarType,
)
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
    "CIFAR10_CLASSES",
    "CIFAR100_CLASSES",
    "MNIST_MIRROR",
    "SUPPORTED_FILES",
    "Annotation",
    "AnnotationVariant",
    "BoundingBox",
    "CifarDataset",
    "CifarImageDataset",
    "CifarType",
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
