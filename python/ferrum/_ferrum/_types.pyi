"""Type variables and argument aliases the per-area stubs share (stub-only names)."""

import builtins
from collections.abc import Sequence
from typing import TypeVar

from ferrum._ferrum._kind import Float, Kind
from ferrum.backend import Backend
from ferrum.tensor.rank import Rank
from typing_extensions import TypeVar as DefaultTypeVar

B = TypeVar("B", bound=Backend)
D = TypeVar("D", bound=Rank)
K = DefaultTypeVar("K", bound=Kind, default=Float)
_B = TypeVar("_B", bound=Backend)
_D = TypeVar("_D", bound=Rank)
_K = TypeVar("_K", bound=Kind)
_I = TypeVar("_I", bound=Backend)

_Scalar = builtins.bool | builtins.int | builtins.float
_Index = builtins.int | slice | tuple[builtins.int, builtins.int] | tuple[builtins.int, builtins.int, builtins.int] | None
_Ranges = Sequence[_Index]
_Dims = builtins.int | Sequence[builtins.int]

_Pair = tuple[builtins.int, builtins.int]
_Triple = tuple[builtins.int, builtins.int, builtins.int]
