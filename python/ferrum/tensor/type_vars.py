"""The type variables of tensor-typed code, defined once for every package that types tensors.

``B`` stands for a tensor's backend, ``D`` for a rank a function keeps (the
result has the rank of the input) and ``K`` for a kind it keeps (``Float``,
``Int`` or ``Bool``). Modules import them instead of declaring their own copies.

Example:
    >>> from ferrum.tensor.type_vars import B, D, K
    >>> B.__bound__.__name__, D.__bound__.__name__, K.__bound__.__name__
    ('Backend', 'Rank', 'Kind')
"""

from typing import TypeVar

from ferrum._ferrum import Kind
from ferrum.backend import Backend
from ferrum.tensor.rank import Rank

__all__ = ["B", "D", "K"]

B = TypeVar("B", bound=Backend)
D = TypeVar("D", bound=Rank)
K = TypeVar("K", bound=Kind)
