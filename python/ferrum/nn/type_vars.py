"""The type variables that ``ferrum.nn``'s generic layers share (those of ``ferrum.tensor.type_vars``).

``B`` stands for a layer's backend and ``D`` for the rank of a tensor whose
rank a layer keeps (activations, normalizations).

Example:
    >>> from ferrum.nn.type_vars import B, D
    >>> B.__bound__.__name__, D.__bound__.__name__
    ('Backend', 'Rank')
"""

from ferrum.tensor.type_vars import B, D

__all__ = ["B", "D"]
