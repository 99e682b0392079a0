"""Compiling ferrum code into engine plans: ``trace(model, *example_inputs)``.

- ``ferrum.jit.tracing``: ``trace``, ``Traced``, ``TraceError``: record a function's tensor ops per input
  signature and run them as one plan (see that module for what is frozen at the trace)
- ``ferrum.jit.fusion``: the Linear, LayerNorm and attention chains a plan runs as fused kernels
- ``ferrum.jit.build``: a recording made into a plan; ``ferrum.jit.tree``: arguments as tensors and a key

The examples are on ``trace`` and ``Traced``.
"""

from ferrum.jit.tracing import CACHE_SIZE, Traced, TraceError, trace

__all__ = ["CACHE_SIZE", "TraceError", "Traced", "trace"]
