"""ferrum: Burn's deep-learning design for Python, on a Rust CPU engine.

Tensors are typed by backend, rank and kind: ``Tensor[NdArray, D2, Float]``.
They are immutable values; operations return new tensors.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> device = NdArray.device()
    >>> a = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], device)
    >>> (a @ a).to_data().to_list()
    [[7.0, 10.0], [15.0, 22.0]]
"""

from importlib.metadata import version as _distribution_version

from ferrum import activation, backend, functional, grid, linalg, quantization
from ferrum._ferrum import (
    ArgumentError,
    BackendError,
    Bool,
    Device,
    Distribution,
    DType,
    FerrumError,
    Float,
    Gradients,
    Int,
    Kind,
    KindError,
    OutOfBoundsError,
    PadMode,
    QTensor,
    ShapeError,
    Tensor,
    TensorData,
)
from ferrum.config import ConfigError, config
from ferrum.module import Module, ModuleMapper, ModuleVisitor, Param, ParamId
from ferrum.tensor.named import Dim, NamedTensor
from ferrum.tensor.print_options import PrintOptions, print_options, set_print_options
from ferrum.tensor.rank import D1, D2, D3, D4, D5, D6, Rank
from ferrum.tensor.report import check_closeness
from ferrum.tensor.transaction import Transaction

# The distribution is ferrum-dl (the name ferrum is taken on the package registry).
__version__: str = _distribution_version("ferrum-dl")

__all__ = [
    "D1",
    "D2",
    "D3",
    "D4",
    "D5",
    "D6",
    "ArgumentError",
    "BackendError",
    "Bool",
    "ConfigError",
    "DType",
    "Device",
    "Dim",
    "Distribution",
    "FerrumError",
    "Float",
    "Gradients",
    "Int",
    "Kind",
    "KindError",
    "Module",
    "ModuleMapper",
    "ModuleVisitor",
    "NamedTensor",
    "OutOfBoundsError",
    "PadMode",
    "Param",
    "ParamId",
    "PrintOptions",
    "QTensor",
    "Rank",
    "ShapeError",
    "Tensor",
    "TensorData",
    "Transaction",
    "__version__",
    "activation",
    "backend",
    "check_closeness",
    "config",
    "functional",
    "grid",
    "linalg",
    "print_options",
    "quantization",
    "set_print_options",
]
