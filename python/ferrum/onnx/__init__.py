"""ONNX import: run, fine-tune and generate typed ferrum code from ONNX models (Burn's burn-import).

``load(path, device)`` returns an ``OnnxModel``, a ferrum ``Module`` whose
initializers are ``Param``s; ``python -m ferrum.onnx MODEL.onnx OUT_DIR``
writes a typed Python module and its weights. Needs the ``onnx`` package
(``pip install 'ferrum-dl[onnx]'``); without it, importing ``ferrum.onnx``
raises ``ferrum.extras.MissingExtraError`` saying so.
"""

from ferrum.extras import require

# Before the modules below import onnx, so that its absence is one error naming the extra.
require("onnx", "ferrum.onnx", "onnx")

from ferrum.onnx.errors import OnnxError, OnnxFileError, UnsupportedOpError  # noqa: E402
from ferrum.onnx.model import OnnxModel, load, load_program  # noqa: E402
from ferrum.onnx.ops import registered_ops  # noqa: E402

__all__ = [
    "OnnxError",
    "OnnxFileError",
    "OnnxModel",
    "UnsupportedOpError",
    "load",
    "load_program",
    "registered_ops",
]
