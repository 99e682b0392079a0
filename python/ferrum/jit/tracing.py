"""``trace``: a function of tensors (a module's ``forward``) run as one compiled engine plan.

Called op by op, a small model spends most of its time between ops: each
tensor method is a trip from Python into the engine and back, and module code
checks shapes and builds views in Python around it. ``trace(fn)`` records,
at the first call with a given input signature (the structure of the
arguments, each tensor's shape, dtype and device, and every non-tensor
argument's value), the engine ops ``fn`` performs; later calls with that
signature run them as one plan in the engine, the GIL released, with
ferrum's fused kernels in place of the Linear, LayerNorm and attention
chains (``ferrum.jit.fusion``).

As with ``torch.jit.trace``, what the call does in Python is frozen at the
trace: the branches taken and loop counts that depend on values (not on
shapes, which are part of the signature) stay as recorded, and the tensors
the function reads that are not its arguments (parameters, masks built from
data) are constants of the plan: trace again (``Traced.clear``) after
loading new weights. Plans run without autodiff: tracing on an autodiff
device raises ``BackendError`` (training stays op by op; trace the
``valid()`` copy). A method with no plan instruction raises ``TraceError``
naming it; call the function itself to run it op by op.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, Generic, ParamSpec, TypeVar, overload

from ferrum._ferrum import (
    BackendError,
    FerrumError,
    Plan,
    Tensor,
    _trace_abort,
    _trace_begin,
    _trace_call,
    _trace_end,
)
from ferrum.jit.build import build_plan
from ferrum.jit.tree import Rebuild, flatten, rebuild_of

__all__ = ["CACHE_SIZE", "TraceError", "Traced", "trace"]

P = ParamSpec("P")
R = TypeVar("R")

CACHE_SIZE = 8
"""Plans kept per traced function (one per input signature; the oldest is dropped first)."""


class TraceError(FerrumError):
    """The traced call does what a plan cannot record (the message names the method) or returns no tensor."""


class _Compiled:
    __slots__ = ("plan", "rebuild")

    def __init__(self, plan: Plan, rebuild: Rebuild) -> None:
        self.plan = plan
        self.rebuild = rebuild


def _profile_hook(frame: FrameType, event: str, arg: Any) -> None:
    # Names the native call in progress, so an op with no plan instruction can be named in the error.
    if event == "c_call":
        _trace_call(getattr(arg, "__qualname__", None) or getattr(arg, "__name__", None))
    elif event in ("c_return", "c_exception"):
        _trace_call(None)


class Traced(Generic[P, R]):
    """``fn`` run as a compiled plan per input signature; call it as ``fn`` (see ``trace``).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.jit import trace
        >>> from ferrum.nn import LinearConfig
        >>> device = NdArray.device()
        >>> layer = LinearConfig(4, 2).init(device)
        >>> x = Tensor.ones((3, 4), device)
        >>> fast = trace(layer, x)
        >>> fast(x).dims(), len(fast.plans())
        ((3, 2), 1)
    """

    def __init__(self, fn: Callable[P, R]) -> None:
        self.fn = fn
        self._plans: dict[tuple[Any, ...], _Compiled] = {}

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        tensors, key = flatten((args, kwargs))
        found = self._plans.get(key)
        if found is None:
            return self._trace(tensors, key, args, kwargs)
        result: R = found.rebuild(found.plan.run(tensors))
        return result

    def _trace_now(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Trace (or reuse) the plan of these arguments, as a call with them would."""
        tensors, key = flatten((args, kwargs))
        if key not in self._plans:
            self._trace(tensors, key, args, kwargs)

    def plans(self) -> list[Plan]:
        """The compiled plans, one per input signature seen (oldest first)."""
        return [c.plan for c in self._plans.values()]

    def clear(self) -> None:
        """Drop the plans: the next call traces again (after new weights were loaded, say)."""
        self._plans.clear()

    def _trace(self, tensors: list[Tensor[Any, Any, Any]], key: tuple[Any, ...], args: Any, kwargs: Any) -> R:
        name = getattr(self.fn, "__qualname__", None) or type(self.fn).__qualname__
        if not tensors:
            raise TraceError(f"ferrum.jit.trace({name}): the call has no tensor arguments")
        device = tensors[0].device()
        if any(t.device().is_autodiff for t in tensors):
            raise BackendError(
                f"ferrum.jit.trace({name}): an argument lives on an autodiff device ({device!r}); plans run "
                "without gradients, so training stays op by op (trace model.valid() on its inner device)"
            )
        _trace_begin(tensors, device)
        previous = sys.getprofile()
        sys.setprofile(_profile_hook)
        try:
            result = self.fn(*args, **kwargs)
        except BaseException:
            _trace_abort()
            raise
        finally:
            sys.setprofile(previous)
        try:
            outputs, _ = flatten(result)
        except TypeError:
            _trace_abort()
            raise
        if not outputs:
            _trace_abort()
            raise TraceError(f"ferrum.jit.trace({name}): the result holds no tensor")
        try:
            recording = _trace_end(outputs)
        except ValueError as err:
            # the recorder names instructions (t_scalar, ...); the user wrote methods (scalar, ...)
            reason = re.sub(r"`t_(\w+)`", r"`\1`", str(err))
            raise TraceError(f"ferrum.jit.trace({name}): {reason}") from None
        plan = build_plan(recording, tensors, device)
        if len(self._plans) >= CACHE_SIZE:
            del self._plans[next(iter(self._plans))]
        self._plans[key] = _Compiled(plan, rebuild_of(result))
        return result


@overload
def trace(fn: Callable[P, R]) -> Traced[P, R]: ...
@overload
def trace(fn: Callable[P, R], *example_args: P.args, **example_kwargs: P.kwargs) -> Traced[P, R]: ...
def trace(fn: Callable[P, R], *example_args: Any, **example_kwargs: Any) -> Traced[P, R]:
    """``fn`` (a module, whose call is its ``forward``, or a function of tensors) compiled into engine plans.

    With example arguments, the first plan is traced now; otherwise at the first call. Each new
    input signature (argument structure, tensor shapes, dtypes and devices, non-tensor values)
    traces a new plan; the last ``CACHE_SIZE`` are kept. The plan's results equal ``fn``'s to
    float rounding (the same kernels, except the fused Linear, LayerNorm and attention).

    Args:
        fn: the function to compile; its arguments and results hold tensors in tuples, lists,
            dicts, dataclasses or plain objects (such as ``TransformerEncoderInput``).
        *example_args: arguments to trace the first plan with now.
        **example_kwargs: keyword arguments for that first trace.

    Returns:
        A ``Traced`` callable with ``fn``'s signature.

    Raises:
        BackendError: a tensor argument or parameter lives on an autodiff device.
        TraceError: ``fn`` calls a tensor method with no plan instruction (named in the message).

    Example:
        >>> import numpy as np
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.jit import trace
        >>> from ferrum.nn import LayerNormConfig
        >>> device = NdArray.device()
        >>> norm = LayerNormConfig(8).init(device)
        >>> x = Tensor.from_numpy(np.arange(16, dtype=np.float32).reshape(2, 8), device)
        >>> fast = trace(norm, x)
        >>> bool(np.allclose(fast(x).to_numpy(), norm(x).to_numpy(), atol=1e-6))
        True
    """
    traced: Traced[P, R] = Traced(fn)
    if example_args or example_kwargs:
        traced._trace_now(example_args, example_kwargs)
    return traced
