"""Transforms of data items for training pipelines: ``ferrum.data.transform.vision`` for images.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.data.transform import vision
    >>> vision.center_crop(Tensor.zeros((3, 8, 8), NdArray.device()), 4).dims()
    (3, 4, 4)
"""

from ferrum.data.transform import vision

__all__ = ["vision"]
