"""The example, as Burn's ``examples/named-tensor/src/lib.rs``: three dim names, a matmul, a mul, a swap.

The names are classes (Burn's ``NamedDim!(Batch)``). ``mypy --strict``
rejects the two calls Burn's compiler rejects (kept below as comments, with
mypy's error); a run-time check catches the same mistake in untyped code.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ferrum import Device, Dim, Distribution, NamedTensor, ShapeError
from ferrum.backend import Backend

B = TypeVar("B", bound=Backend)


class Batch(Dim):
    """The batch dim."""


class SeqLength(Dim):
    """The sequence dim."""


class DModel(Dim):
    """The model (feature) dim."""


def run(device: Device[B], batch_size: int = 32, seq_length: int = 48, d_model: int = 24) -> None:
    """Build the weights and the input, multiply them by name and print the four named tensors."""
    weights = NamedTensor.random((1, d_model, d_model), (Batch, DModel, DModel), Distribution.Default, device)
    input = NamedTensor.random(
        (batch_size, seq_length, d_model), (Batch, SeqLength, DModel), Distribution.Default, device
    )

    # Rejected by mypy --strict (Burn: "mismatched types"):
    #   output = weights.matmul(input)
    # error: Argument 1 to "matmul" of "NamedTensor" has incompatible type
    #   "NamedTensor[B, tuple[Batch, SeqLength, DModel]]";
    #   expected "NamedTensor[B, tuple[Batch, DModel, DModel]]"  [arg-type]

    output = input.matmul(weights)

    # Rejected by mypy --strict (Burn: "mismatched types"):
    #   output = output.mul(weights)
    # error: Argument 1 to "mul" of "NamedTensor" has incompatible type
    #   "NamedTensor[B, tuple[Batch, DModel, DModel]]";
    #   expected "NamedTensor[B, tuple[Batch, SeqLength, DModel]]"  [arg-type]

    output = output.mul(input)

    permute = output.swap_dims(1, 2)

    print(f"Weights => {weights}")
    print(f"Input   => {input}")
    print(f"Output  => {output}")
    print(f"Permute  => {permute}")

    # Code the type checker did not see (here: typed Any) is checked when it runs.
    unchecked: Any = weights
    try:
        unchecked.matmul(input)
    except ShapeError as error:
        print(f"Run-time check => {error}")
