"""``ParamId``: the id of a parameter, as Burn's ``ParamId``.

It is exported by ``ferrum.module`` (it names a module's parameters) and defined
here, below the module system, because records hold ids and the recorders
translate them into Burn's text.
"""

from __future__ import annotations

import dataclasses
import hashlib
import secrets

__all__ = ["ParamId"]

_U64 = 1 << 64


@dataclasses.dataclass(frozen=True)
class ParamId:
    """The id of a parameter: a random 64-bit number, shown as its decimal string (as in Burn).

    Ids do not come from the seeded generator, so seeding never makes two
    parameters share one.

    Example:
        >>> from ferrum.module import ParamId
        >>> pid = ParamId.new()
        >>> ParamId.from_str(str(pid)) == pid
        True
    """

    value: int

    def __post_init__(self) -> None:
        if not isinstance(self.value, int) or isinstance(self.value, bool) or not 0 <= self.value < _U64:
            raise ValueError(f"ParamId value must be an int in [0, 2**64), found {self.value!r}")

    @staticmethod
    def new() -> ParamId:
        """A fresh random id."""
        return ParamId(secrets.randbits(64))

    @staticmethod
    def from_str(text: str) -> ParamId:
        """Parse ``str(id)``; any other string (Burn's legacy ids) maps to a stable hash of it."""
        if not isinstance(text, str) or not text:
            raise ValueError(f"ParamId.from_str needs a non-empty str, found {text!r}")
        if text.isdigit() and int(text) < _U64:
            return ParamId(int(text))
        digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
        return ParamId(int.from_bytes(digest, "little"))

    def __str__(self) -> str:
        return str(self.value)

    def __repr__(self) -> str:
        return f"ParamId({self.value})"
