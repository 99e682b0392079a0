"""The exceptions of ONNX import: every one names the file, node, op or opset involved."""

from __future__ import annotations

__all__ = ["OnnxError", "OnnxFileError", "UnsupportedOpError"]


class OnnxError(ValueError):
    """An ONNX model ferrum cannot import or run: bad file, bad graph, bad inputs."""


class OnnxFileError(OnnxError):
    """The file is not a readable ONNX model (truncated, not protobuf, missing)."""


class UnsupportedOpError(OnnxError):
    """The graph uses an op (or an op's attribute) ferrum does not implement."""
