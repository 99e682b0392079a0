"""Type stubs of ferrum's native engine module (checked by mypy.stubtest).

The runtime module is the single extension ``ferrum/_ferrum.abi3.so`` (the
import system takes it over this folder, which holds no ``__init__.py``);
its stub is split by area, one private module each, and this file
re-exports every public name:

- ``_tensor``: Tensor, PadMode; ``_tensor_data``: TensorData
- ``_kind``: Kind, Float, Int, Bool, DType; ``_device``: Device
- ``_errors``: FerrumError and its subclasses
- ``_random``: Distribution, seed, random state; ``_print``: print options
- ``_autodiff``: Gradients, custom_op; ``_quant``: QTensor, Int8Matrix, Int8Conv; ``_plan``: Plan
- ``_trace``: the recorder behind ``ferrum.jit.trace`` (private functions)
- ``_activation``, ``_nn`` (convolution, pooling, recurrent sequences, ...),
  ``_optim`` (fused updates, clipping), ``_record``, ``_vision``: functions
- ``_types``: type variables and argument aliases (stub-only)

Types only: the documentation of these classes and functions is the Rust
binding's doc comments, which are their runtime ``__doc__`` (what ``help()``
shows and what the documentation site reads), so these files hold no
docstrings that could drift from them (tests/typing/test_docstring_coverage.py).
"""

from ferrum._ferrum._activation import (
    gelu,
    glu,
    hard_sigmoid,
    hard_swish,
    leaky_relu,
    log_sigmoid,
    log_softmax,
    mish,
    prelu,
    quiet_softmax,
    relu,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    tanh,
)
from ferrum._ferrum._autodiff import Gradients, custom_op
from ferrum._ferrum._device import Device
from ferrum._ferrum._errors import (
    ArgumentError,
    BackendError,
    FerrumError,
    KindError,
    OutOfBoundsError,
    ShapeError,
)
from ferrum._ferrum._kind import Bool, DType, Float, Int, Kind
from ferrum._ferrum._nn import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    avg_pool1d,
    avg_pool2d,
    conv1d,
    conv2d,
    conv2d_fused,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    deform_conv2d,
    gru_sequence,
    interpolate,
    layer_norm,
    lstm_sequence,
    masked_softmax,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    unfold4d,
)
from ferrum._ferrum._optim import (
    StateTensor,
    adagrad_step,
    adam_step,
    clip_by_norm,
    clip_by_value,
    rmsprop_step,
    sgd_step,
)
from ferrum._ferrum._plan import Plan
from ferrum._ferrum._print import get_print_options, set_print_options
from ferrum._ferrum._quant import Int8Conv, Int8Matrix, QTensor, dynamic_quantize_u8, int8_conv2d
from ferrum._ferrum._random import Distribution, random_state, seed, set_random_state
from ferrum._ferrum._record import (
    param_id_decode,
    param_id_encode,
    record_from_bytes,
    record_load,
    record_save,
    record_to_bytes,
    write_file_atomic,
)
from ferrum._ferrum._tensor import PadMode, Tensor
from ferrum._ferrum._tensor_data import TensorData
from ferrum._ferrum._trace import _trace_abort, _trace_active, _trace_begin, _trace_call, _trace_end
from ferrum._ferrum._vision import (
    vision_connected_components,
    vision_connected_components_with_stats,
    vision_morph,
    vision_nms,
    vision_structuring_element,
)

# The runtime module's __all__ (stubtest compares the two); it also marks the imports above as re-exports.
__all__ = [
    "ArgumentError",
    "BackendError",
    "Bool",
    "DType",
    "Device",
    "Distribution",
    "FerrumError",
    "Float",
    "Gradients",
    "Int",
    "Int8Conv",
    "Int8Matrix",
    "Kind",
    "KindError",
    "OutOfBoundsError",
    "PadMode",
    "Plan",
    "QTensor",
    "ShapeError",
    "StateTensor",
    "Tensor",
    "TensorData",
    "_trace_abort",
    "_trace_active",
    "_trace_begin",
    "_trace_call",
    "_trace_end",
    "adagrad_step",
    "adam_step",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "clip_by_norm",
    "clip_by_value",
    "conv1d",
    "conv2d",
    "conv2d_fused",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "custom_op",
    "deform_conv2d",
    "dynamic_quantize_u8",
    "gelu",
    "get_print_options",
    "glu",
    "gru_sequence",
    "hard_sigmoid",
    "hard_swish",
    "int8_conv2d",
    "interpolate",
    "layer_norm",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "lstm_sequence",
    "masked_softmax",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "mish",
    "param_id_decode",
    "param_id_encode",
    "prelu",
    "quiet_softmax",
    "random_state",
    "record_from_bytes",
    "record_load",
    "record_save",
    "record_to_bytes",
    "relu",
    "rmsprop_step",
    "seed",
    "set_print_options",
    "set_random_state",
    "sgd_step",
    "sigmoid",
    "silu",
    "softmax",
    "softmin",
    "softplus",
    "tanh",
    "unfold4d",
    "vision_connected_components",
    "vision_connected_components_with_stats",
    "vision_morph",
    "vision_nms",
    "vision_structuring_element",
    "write_file_atomic",
]
