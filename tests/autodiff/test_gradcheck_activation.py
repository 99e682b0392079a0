"""Gradients of every activation in ``ferrum.activation`` against central
finite differences, and a check that the checker itself catches a wrong
backward."""

from __future__ import annotations

from typing import Any

import pytest
from ferrum import Tensor, activation
from ferrum.autodiff import Context, Function

from tests.support.gradcheck import Case, case, check_case, distinct, gradcheck_test, smooth

SHAPES = ((3, 4), (2, 3, 4), (6,))


def pointwise_cases() -> list[Case]:
    cases: list[Case] = []
    for shape in SHAPES:
        tag = str(shape)
        # distinct() keeps values 0.075 away from every multiple of 0.25, where
        # relu, leaky_relu, prelu, hard_sigmoid and hard_swish have their kinks.
        kinked = distinct(shape, seed="act")
        wide = smooth(shape, -4.0, 4.0, seed="act")
        cases += [
            case(f"relu{tag}", lambda x: activation.relu(x), kinked),
            case(f"leaky_relu{tag}", lambda x: activation.leaky_relu(x), kinked),
            case(f"leaky_relu_0.2{tag}", lambda x: activation.leaky_relu(x, 0.2), kinked),
            case(f"gelu{tag}", lambda x: activation.gelu(x), wide),
            case(f"sigmoid{tag}", lambda x: activation.sigmoid(x), wide),
            case(f"silu{tag}", lambda x: activation.silu(x), wide),
            case(f"softplus{tag}", lambda x: activation.softplus(x), wide),
            case(f"softplus_beta2.5{tag}", lambda x: activation.softplus(x, 2.5), wide),
            case(f"mish{tag}", lambda x: activation.mish(x), wide),
            case(f"tanh{tag}", lambda x: activation.tanh(x), wide),
            case(f"log_sigmoid{tag}", lambda x: activation.log_sigmoid(x), wide),
            case(f"hard_sigmoid{tag}", lambda x: activation.hard_sigmoid(x), kinked),
            case(f"hard_sigmoid(0.5,0.25){tag}", lambda x: activation.hard_sigmoid(x, 0.5, 0.25), kinked),
            case(f"hard_swish{tag}", lambda x: activation.hard_swish(x), kinked * 2.0),
        ]
    return cases


def prelu_cases() -> list[Case]:
    return [
        case("prelu shared alpha", lambda x, a: activation.prelu(x, a), distinct((3, 4)), [0.3]),
        case(
            "prelu per channel", lambda x, a: activation.prelu(x, a), distinct((3, 4)), [0.1, -0.2, 0.5, 0.25]
        ),
        case(
            "prelu per channel rank3",
            lambda x, a: activation.prelu(x, a),
            distinct((2, 3, 4)),
            [0.1, 0.7, -0.3],
        ),
        case("prelu rank1", lambda x, a: activation.prelu(x, a), distinct((5,)), [0.3]),
        case("prelu wrt input only", lambda x, a: activation.prelu(x, a), distinct((3, 4)), [0.3], wrt=(0,)),
        case(
            "prelu wrt alpha only",
            lambda x, a: activation.prelu(x, a),
            distinct((2, 3, 4)),
            [0.1, 0.7, -0.3],
            wrt=(1,),
        ),
    ]


def softmax_cases() -> list[Case]:
    cases: list[Case] = []
    for shape in SHAPES:
        x = smooth(shape, -2.0, 2.0, seed="softmax")
        for d in [*range(len(shape)), -1]:
            tag = f"{shape}dim{d}"
            cases += [
                case(f"softmax{tag}", lambda t, d=d: activation.softmax(t, d), x),
                case(f"log_softmax{tag}", lambda t, d=d: activation.log_softmax(t, d), x),
                case(f"softmin{tag}", lambda t, d=d: activation.softmin(t, d), x),
                case(f"quiet_softmax{tag}", lambda t, d=d: activation.quiet_softmax(t, d), x),
            ]
    return cases


def glu_cases() -> list[Case]:
    return [
        case("glu(3,4)dim1", lambda t: activation.glu(t, 1), smooth((3, 4))),
        case("glu(3,4)dim-1", lambda t: activation.glu(t, -1), smooth((3, 4))),
        case("glu(4,3)dim0", lambda t: activation.glu(t, 0), smooth((4, 3))),
        case("glu(2,3,6)dim2", lambda t: activation.glu(t, 2), smooth((2, 3, 6))),
        case("glu(6,)dim0", lambda t: activation.glu(t, 0), smooth((6,))),
    ]


test_gradients_match_finite_differences = gradcheck_test(
    pointwise_cases, prelu_cases, softmax_cases, glu_cases
)


class WrongSquare(Function):
    """x * x with a backward that is off by a factor 1.01."""

    @staticmethod
    def forward(ctx: Context, *inputs: Tensor[Any, Any, Any]) -> Tensor[Any, Any, Any]:
        (x,) = inputs
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx: Context, grad: Tensor[Any, Any, Any]) -> tuple[Tensor[Any, Any, Any] | None, ...]:
        (x,) = ctx.saved_tensors
        return (grad * x * 2.02,)


def wrong_square(x: Any) -> Any:
    # The plain backend has no graph; there the op is just its forward.
    return WrongSquare.apply(x) if x.device().is_autodiff else x * x


def test_the_checker_rejects_a_wrong_backward() -> None:
    with pytest.raises(AssertionError, match="analytic gradient != finite differences"):
        check_case(case("wrong_square", wrong_square, smooth((3, 4)), layouts=("contiguous",)))
