"""Model import and export: PyTorch ``.pt``, safetensors and Burnpack files (Burn's ``burn-store``).

``module.load_from(store)`` returns the module holding the store's tensors;
``module.save_into(store)`` writes them. Stores are immutable builders:
every option returns a new store.

Example:
    >>> import tempfile, os
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn import LinearConfig
    >>> from ferrum.store import BurnpackStore
    >>> device = NdArray.device()
    >>> layer = LinearConfig(4, 2).init(device)
    >>> path = os.path.join(tempfile.mkdtemp(), "layer.bpk")
    >>> layer.save_into(BurnpackStore.from_file(path))
    >>> again, result = LinearConfig(4, 2).init(device).load_from_with_result(BurnpackStore.from_file(path))
    >>> result.applied, again.weight.id == layer.weight.id
    (['weight', 'bias'], True)
"""

from ferrum.store.adapter import BurnToPyTorchAdapter, IdentityAdapter, ModuleAdapter, PyTorchToBurnAdapter
from ferrum.store.base import ModuleStore
from ferrum.store.burnpack import BurnpackStore
from ferrum.store.filter import PathFilter
from ferrum.store.pytorch import PytorchStore
from ferrum.store.remap import KeyRemapper, map_indices_contiguous
from ferrum.store.result import ApplyError, ApplyResult, StoreError
from ferrum.store.safetensors import SafetensorsStore
from ferrum.store.snapshot import TensorSnapshot

__all__ = [
    "ApplyError",
    "ApplyResult",
    "BurnToPyTorchAdapter",
    "BurnpackStore",
    "IdentityAdapter",
    "KeyRemapper",
    "ModuleAdapter",
    "ModuleStore",
    "PathFilter",
    "PyTorchToBurnAdapter",
    "PytorchStore",
    "SafetensorsStore",
    "StoreError",
    "TensorSnapshot",
    "map_indices_contiguous",
]
