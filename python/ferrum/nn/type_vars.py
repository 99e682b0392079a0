"""The type variables that ``ferrum.nn``'s generic layers share, defined once.

``B`` stands for a layer's backend and ``D`` for the rank of a tensor whose
rank a layer keeps (activations, normalizations).

Example:
    >>> from ferrum.nn.type_vars import B, D
    >>> B.__bound__.__name__, D.__bound__.__name__
    ('Backend', 'Rank')
"""

from typing import TypeVar

from ferrum.backend import Backend
from ferrum.tensor.rank import Rank

__all__ = ["B", "D"]

B = TypeVar("B", bound=Backend)
D = TypeVar("D", bound=Rank)
