"""Burnpack, Burn's own store format: ``BurnpackStore``."""

from ferrum.store.burnpack.store import BurnpackStore

__all__ = ["BurnpackStore"]
