"""The ONNX op families, one module each; importing this package registers every op.

``lookup(name, opset)`` finds an op's registration; ``registered_ops()`` lists them.
"""

from ferrum.onnx.ops import (  # noqa: F401  (each registers its ops)
    activation,
    attention,
    control,
    conv,
    creation,
    elementwise,
    index,
    linear,
    logic,
    norm,
    reduce,
    resize,
    rnn,
    shape,
)
from ferrum.onnx.ops.registry import LayerPlan, NodeInfo, OpSpec, lookup, registered_ops

__all__ = ["LayerPlan", "NodeInfo", "OpSpec", "lookup", "registered_ops"]
