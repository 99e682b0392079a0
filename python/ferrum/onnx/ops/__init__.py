"""The ONNX op families, one module each; importing this package registers every op.

``lookup(name, opset)`` finds an op's registration; ``registered_ops()`` lists them.

Each op is a plain function on ferrum tensors, named for the ONNX op in
snake_case (``ops.shape.flatten`` runs Flatten; a trailing ``_`` where the
name is a Python builtin or keyword: ``abs_``, ``and_``). The runner and the
code ``python -m ferrum.onnx`` generates call it the same way: the node's
tensor inputs positionally, in ONNX's order; the "static" inputs (Reshape's
``shape``, Squeeze's ``axes``...) as keywords, a literal when the graph makes
them constant and a tensor otherwise; the node's attributes as keywords
in snake_case, absent ones taking ONNX's defaults; ``opset`` when the
semantics changed between opsets (Softmax), and ``device`` for ops that make
a tensor from nothing. It returns a tensor, or a tuple for a node with
several outputs. Tensors of a kind the op does not compute in raise
``KindError``, shapes that do not fit ``ShapeError`` or ``ValueError``; the
runner re-raises these as ``OnnxError`` naming the node.
"""

from ferrum.onnx.ops import (  # noqa: F401  (each registers its ops)
    activation,
    attention,
    causal_conv,
    control,
    conv,
    creation,
    detection,
    einsum,
    elementwise,
    flex_attention,
    index,
    linalg,
    linear,
    linear_attention,
    logic,
    loss,
    ml,
    norm,
    optional,
    quantize,
    reduce,
    resize,
    rnn,
    rotary,
    scatter,
    sequence,
    shape,
    signal,
    spatial,
    strings,
    text,
    training,
    window,
)
from ferrum.onnx.ops.registry import LayerPlan, NodeInfo, OpSpec, lookup, registered_ops

__all__ = ["LayerPlan", "NodeInfo", "OpSpec", "lookup", "registered_ops"]
