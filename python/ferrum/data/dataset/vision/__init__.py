"""Vision datasets: MNIST digits read from IDX files.

Example:
    >>> from ferrum.data.dataset.vision import MnistDataset
    >>> test = MnistDataset.test("/data/mnist", download=False)  # doctest: +SKIP
    >>> len(test)  # doctest: +SKIP
    10000
"""

from ferrum.data.dataset.vision.idx import read_idx
from ferrum.data.dataset.vision.mnist import MNIST_MIRROR, Downloader, MnistDataset, MnistItem, download_file

__all__ = ["MNIST_MIRROR", "Downloader", "MnistDataset", "MnistItem", "download_file", "read_idx"]
