#!/usr/bin/env python3
"""Write tests/fixtures/store/ferrum_mlp.safetensors: a model made in ferrum, saved for PyTorch.

    python scripts/make_store_ferrum_export.py        # with ferrum installed (no torch needed)

The MLP of scripts/make_store_fixtures.py is built in ferrum with fresh seeded
weights, written with BurnToPyTorchAdapter under torch's Sequential keys, and
its output on a fixed input saved to ferrum_mlp_io.npz. Then
``make_store_fixtures.py --verify`` (in a torch environment) loads the file
with ``load_state_dict`` and compares outputs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.store import BurnToPyTorchAdapter, SafetensorsStore

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.support.store_models import STORE_FIXTURES, mlp


def main() -> None:
    NdArray.seed(2024)
    device = NdArray.device()
    model = mlp(device)
    x = np.random.default_rng(5).standard_normal((5, 6)).astype(np.float32)
    y = model.forward(Tensor.from_numpy(x, device)).to_numpy()
    store = (
        SafetensorsStore.from_file(STORE_FIXTURES / "ferrum_mlp.safetensors")
        .with_to_adapter(BurnToPyTorchAdapter())
        .with_key_remapping(r"^layers\.1\.", "layers.2.")
        .overwrite(True)
    )
    model.save_into(store)
    np.savez(STORE_FIXTURES / "ferrum_mlp_io.npz", x=x, y=y)
    print("wrote", store.path)


if __name__ == "__main__":
    main()
