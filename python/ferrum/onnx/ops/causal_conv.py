"""CausalConvWithState (opset 27): a stateful causal depthwise 1-d convolution, as Mamba and Gated DeltaNet
use before their recurrences. The carried state is the last ``k - 1`` input positions, so decoding one
token at a time gives the same result as running the whole sequence at once."""

from __future__ import annotations

from ferrum import activation as act
from ferrum import functional as F
from ferrum._ferrum import Float, KindError, Tensor
from ferrum.onnx.ops._util import AnyTensor
from ferrum.onnx.ops.registry import op

__all__ = ["causal_conv_with_state"]

_ACTIVATIONS = ("none", "silu", "swish")


def _check(
    x: AnyTensor, weight: AnyTensor, bias: AnyTensor | None, past: AnyTensor | None, activation: str
) -> None:
    if activation not in _ACTIVATIONS:
        raise ValueError(
            f"CausalConvWithState: activation must be one of {_ACTIVATIONS}, found {activation!r}"
        )
    if x.kind is not Float or weight.kind is not Float:
        raise KindError(
            f"CausalConvWithState: input and weight must be float, found {x.dtype} and {weight.dtype}"
        )
    if x.rank() != 3:
        raise ValueError(
            f"CausalConvWithState: input must be 3-d (batch, channels, length), found {list(x.dims())}"
        )
    b, c, _ = x.dims()
    if weight.rank() != 3 or weight.dims()[:2] != (c, 1):
        raise ValueError(f"CausalConvWithState: weight must be ({c}, 1, k), found {list(weight.dims())}")
    if bias is not None and tuple(bias.dims()) != (c,):
        raise ValueError(f"CausalConvWithState: bias must be ({c},), found {list(bias.dims())}")
    k = weight.dims()[2]
    if past is not None and tuple(past.dims()) != (b, c, k - 1):
        raise ValueError(
            f"CausalConvWithState: past_state must be ({b}, {c}, {k - 1}), found {list(past.dims())}"
        )


@op("CausalConvWithState", since=27)
def causal_conv_with_state(
    x: AnyTensor,
    weight: AnyTensor,
    bias: AnyTensor | None = None,
    past_state: AnyTensor | None = None,
    activation: str = "none",
) -> tuple[AnyTensor, AnyTensor]:
    """The output ``(batch, channels, length)`` and the new state ``(batch, channels, k - 1)``.

    ``weight`` is ``(channels, 1, k)``: each channel has its own kernel. The input is prefixed with
    ``past_state`` (zeros when absent) and convolved without padding, so output ``t`` sees inputs
    ``t - k + 1 .. t``; ``activation`` ``"silu"`` (or its alias ``"swish"``) applies ``x * sigmoid(x)``.
    """
    _check(x, weight, bias, past_state, activation)
    b, c, length = x.dims()
    k = weight.dims()[2]
    if past_state is None:
        past_state = Tensor.zeros((b, c, k - 1), x.device(), dtype=x.dtype)
    padded = Tensor.cat([past_state, x], 2) if k > 1 else x
    y = F.conv1d(padded, weight, bias, 1, 0, 1, c)
    if activation != "none":
        y = act.silu(y)
    # slice, not narrow: a kernel of size 1 carries an empty state
    present = padded.slice([(0, b), (0, c), (length, length + k - 1)])
    return y, present
