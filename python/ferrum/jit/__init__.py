"""Compiling ferrum code into engine plans: ``trace(model, *example_inputs)``.

- ``ferrum.jit.tracing``: ``trace``, ``Traced``, ``TraceError``: record a function's tensor ops per input
  signature and run them as one plan (see that module for what is frozen at the trace)
- ``ferrum.jit.fusion``: the Linear, LayerNorm and attention chains a plan runs as fused kernels
- ``ferrum.jit.build``: a recording made into a plan; ``ferrum.jit.tree``: arguments as tensors and a key

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.jit import trace
    >>> from ferrum.nn import LinearConfig
    >>> device = NdArray.device()
    >>> layer = LinearConfig(4, 2).init(device)
    >>> fast = trace(layer, Tensor.ones((3, 4), device))
    >>> fast(Tensor.zeros((5, 4), device)).dims(), len(fast.plans())
    ((5, 2), 2)
"""

from ferrum.jit.tracing import CACHE_SIZE, Traced, TraceError, trace

__all__ = ["CACHE_SIZE", "TraceError", "Traced", "trace"]
