"""ONNX import: run, fine-tune and generate typed ferrum code from ONNX models (Burn's burn-import).

``load(path, device)`` returns an ``OnnxModel``, a ferrum ``Module`` whose
initializers are ``Param``s; ``python -m ferrum.onnx MODEL.onnx OUT_DIR``
writes a typed Python module and its weights. Needs the ``onnx`` package
(``pip install 'ferrum-dl[onnx]'``).
"""

from ferrum.onnx.errors import OnnxError, OnnxFileError, UnsupportedOpError
from ferrum.onnx.model import OnnxModel, load, load_program
from ferrum.onnx.ops import registered_ops

__all__ = [
    "OnnxError",
    "OnnxFileError",
    "OnnxModel",
    "UnsupportedOpError",
    "load",
    "load_program",
    "registered_ops",
]
