#!/usr/bin/env python3
"""Write the PyTorch-made files that tests/store/test_pytorch.py and friends load (needs torch, safetensors).

    /path/to/torch-venv/bin/python scripts/make_store_fixtures.py            # writes tests/fixtures/store
    /path/to/torch-venv/bin/python scripts/make_store_fixtures.py --verify   # checks ferrum's export in torch

Not run by the tests (they never need torch); the outputs are committed.

cnn.*   Conv2d -> BatchNorm2d -> ReLU -> Conv2d -> ReLU (a Sequential, keys features.0/1/3),
        adaptive average pool, Linear head. BatchNorm's running statistics are trained away from 0/1.
mlp.*   Linear -> ReLU -> Linear -> LayerNorm -> ReLU -> Linear (keys layers.0, layers.2, norm, head).
lstm.*  a bare nn.LSTM(5, 7, batch_first=True) (packed keys weight_ih_l0, weight_hh_l0, bias_ih_l0,
        bias_hh_l0); its io file also holds the final states "h" and "c" ([batch, hidden]).
gru.*   a bare nn.GRU(5, 6, batch_first=True); "h" is the final hidden state.
encoder.*  nn.TransformerEncoder of one nn.TransformerEncoderLayer(d_model 8, 2 heads, feed-forward 16,
        dropout 0, GELU, post-norm, batch first) - Burn's TransformerEncoder defaults (norm_first off,
        exact GELU, LayerNorm eps 1e-5). Keys layers.0.self_attn.in_proj_weight (q, k, v packed), ...
encoder_prenorm.*  the same with norm_first=True (Burn names its norms the other way round there).
For each: <name>.pt (zip format), <name>_legacy.pt (pre-1.6 format), <name>_checkpoint.pt
({"model_state_dict", "optimizer_state_dict", "epoch"}), <name>.safetensors, and <name>_io.npz
(a fixed input "x" and the eval-mode output "y").
tensors.pt / tensors_legacy.pt: f16, bf16, f64, int, bool tensors, a transposed view and a strided
slice sharing one storage; tensors_expected.npz holds their values (bf16 as float32).
dtypes.safetensors: bf16, f16 and i32 tensors.

--verify loads ferrum_mlp.safetensors (written by tests/store/test_models.py with the
BurnToPyTorchAdapter) into the torch MLP with load_state_dict and compares its output to
ferrum_mlp_io.npz.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "store"


class Cnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Conv2d(4, 6, 3, padding=1), nn.ReLU()
        )
        self.head = nn.Linear(6 * 2 * 2, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.adaptive_avg_pool2d(self.features(x), (2, 2))
        return self.head(x.flatten(1))


class Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 12))
        self.norm = nn.LayerNorm(12)
        self.head = nn.Linear(12, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.norm(self.layers(x))))


class Lstm(nn.LSTM):
    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:  # type: ignore[override]
        y, (h, c) = super().forward(x)
        return {"y": y, "h": h[0], "c": c[0]}


class Gru(nn.GRU):
    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:  # type: ignore[override]
        y, h = super().forward(x)
        return {"y": y, "h": h[0]}


def encoder(norm_first: bool = False) -> nn.TransformerEncoder:
    layer = nn.TransformerEncoderLayer(
        8, 2, dim_feedforward=16, dropout=0.0, activation="gelu", batch_first=True, norm_first=norm_first
    )
    with torch.no_grad():  # LayerNorm starts as the identity: make the two norms tell apart
        for norm in (layer.norm1, layer.norm2):
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
    return nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)


def _outputs(model: nn.Module, x: torch.Tensor) -> dict[str, torch.Tensor]:
    out = model(x)
    return out if isinstance(out, dict) else {"y": out}


def save_model(name: str, model: nn.Module, x: torch.Tensor) -> None:
    model.eval()
    with torch.no_grad():
        outputs = _outputs(model, x)
    state = model.state_dict()
    torch.save(state, OUT / f"{name}.pt")
    torch.save(state, OUT / f"{name}_legacy.pt", _use_new_zipfile_serialization=False)
    saved = copy.deepcopy(state)  # the training step below changes the state dict's tensors in place
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    _outputs(model, x)["y"].square().mean().backward()
    opt.step()  # the optimizer state now holds tensors too
    torch.save(
        {"model_state_dict": saved, "optimizer_state_dict": opt.state_dict(), "epoch": 4},
        OUT / f"{name}_checkpoint.pt",
    )
    state = saved
    save_file({k: v.contiguous() for k, v in state.items()}, OUT / f"{name}.safetensors")
    np.savez(OUT / f"{name}_io.npz", x=x.numpy(), **{k: v.numpy() for k, v in outputs.items()})


def save_tensors() -> None:
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6) / 7.0
    tensors = {
        "f32": base,
        "transposed": base.t(),  # non-contiguous, same storage
        "slice": base[1:, ::2],  # storage offset 6, strides (6, 2)
        "f16": (base * 0.5).half(),
        "bf16": (base - 1.0).bfloat16(),
        "f64": base.double() * 3.0,
        "i64": torch.arange(-3, 3, dtype=torch.int64),
        "i32": torch.tensor([[1, -2], [3, 400000]], dtype=torch.int32),
        "u8": torch.tensor([0, 7, 255], dtype=torch.uint8),
        "bool": torch.tensor([True, False, True]),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 3),
        "nested": {"inner": {"w": base[0]}},
    }
    torch.save(tensors, OUT / "tensors.pt")
    torch.save(tensors, OUT / "tensors_legacy.pt", _use_new_zipfile_serialization=False)
    flat = {k: v for k, v in tensors.items() if isinstance(v, torch.Tensor)}
    expected = {k: (v.float() if v.dtype == torch.bfloat16 else v).numpy() for k, v in flat.items()}
    expected["nested.inner.w"] = base[0].numpy()
    np.savez(OUT / "tensors_expected.npz", **expected)


def save_safetensors_dtypes() -> None:
    # bf16 has no NumPy dtype: SafetensorsStore reads its bits itself.
    tensors = {
        "bf16": torch.tensor([[1.5, -2.5], [0.15625, 300.0]]).bfloat16(),
        "f16": torch.tensor([1.5, -2.25]).half(),
        "i32": torch.tensor([7, -8], dtype=torch.int32),
    }
    save_file(tensors, OUT / "dtypes.safetensors")


def verify() -> None:
    model = Mlp()
    model.load_state_dict(load_file(OUT / "ferrum_mlp.safetensors"))
    model.eval()
    io = np.load(OUT / "ferrum_mlp_io.npz")
    with torch.no_grad():
        y = model(torch.from_numpy(io["x"])).numpy()
    err = float(np.abs(y - io["y"]).max())
    assert err < 1e-5, f"torch output differs from ferrum's by {err}"
    print(f"ferrum_mlp.safetensors loads in torch; outputs match (max error {err:.2e})")


def main() -> None:
    if "--verify" in sys.argv:
        verify()
        return
    OUT.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(17)
    cnn = Cnn()
    cnn.train()
    with torch.no_grad():  # move BatchNorm's running statistics away from 0 and 1
        for _ in range(4):
            cnn(torch.randn(8, 2, 8, 8) * 1.5 + 0.3)
    save_model("cnn", cnn, torch.randn(3, 2, 8, 8))
    save_model("mlp", Mlp(), torch.randn(4, 6))
    save_model("lstm", Lstm(5, 7, batch_first=True), torch.randn(3, 4, 5))
    save_model("gru", Gru(5, 6, batch_first=True), torch.randn(3, 4, 5))
    save_model("encoder", encoder(), torch.randn(2, 5, 8))
    save_model("encoder_prenorm", encoder(norm_first=True), torch.randn(2, 5, 8))
    save_tensors()
    save_safetensors_dtypes()
    print("wrote", sorted(p.name for p in OUT.iterdir()))


if __name__ == "__main__":
    main()
