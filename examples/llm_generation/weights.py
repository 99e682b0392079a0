"""Hugging Face ``transformers`` checkpoints (``config.json`` + safetensors) into the ferrum models.

The stores rename the file's keys with regular expressions, as Burn's ``KeyRemapper``:

- GPT-2: ``transformer.h.0.attn.c_attn.weight`` is ``h.0.attn.c_attn.weight`` (prefix dropped;
  its ``Conv1D`` stores ``[in, out]``, ferrum's ``Linear`` layout, so nothing is transposed);
  ``transformer.h.0.ln_1.weight``/``.bias`` are ``h.0.ln_1.gamma``/``.beta``.
- Llama: ``model.layers.0.self_attn.q_proj.weight`` is ``layers.0.self_attn.q_proj.weight``,
  transposed by ``PyTorchToBurnAdapter`` (``nn.Linear`` stores ``[out, in]``);
  ``model.layers.0.input_layernorm.weight`` is ``layers.0.input_layernorm.gamma``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from ferrum import Device
from ferrum.backend import Backend
from ferrum.module import Module
from ferrum.store import PyTorchToBurnAdapter, SafetensorsStore

from .gpt2 import Gpt2, Gpt2Config
from .llama import Llama, LlamaConfig

B = TypeVar("B", bound=Backend)
M = TypeVar("M", bound=Module[Any])


def read_config(path: Path) -> dict[str, Any]:
    """A ``transformers`` ``config.json`` as a dict; ``ValueError`` names a file that is not one."""
    try:
        fields = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: not a readable config.json ({err})") from None
    if not isinstance(fields, dict):
        raise ValueError(f"{path}: expected a JSON object, found {type(fields).__name__}")
    return fields


def gpt2_store(path: Path) -> SafetensorsStore:
    """GPT-2's safetensors file as a store for ``Gpt2``: no transposes, LayerNorm ``weight``/``bias``
    renamed."""
    return (
        SafetensorsStore.from_file(path)
        .with_key_remapping(r"^transformer\.", "")
        .with_key_remapping(r"^(.*ln_\w+)\.weight$", r"\1.gamma")
        .with_key_remapping(r"^(.*ln_\w+)\.bias$", r"\1.beta")
    )


def llama_store(path: Path) -> SafetensorsStore:
    """Llama's safetensors file as a store for ``Llama``: Linear weights transposed (by
    ``PyTorchToBurnAdapter``), RMSNorm ``weight`` renamed."""
    return (
        SafetensorsStore.from_file(path)
        .with_from_adapter(PyTorchToBurnAdapter())
        .with_key_remapping(r"^model\.", "")
        .with_key_remapping(r"^(.*norm)\.weight$", r"\1.gamma")
    )


def _apply(model: M, store: SafetensorsStore, path: Path) -> M:
    loaded, result = model.load_from_with_result(store)
    missing = [name for name, _ in result.missing]
    if missing or result.errors:
        problems = [f"missing {name}" for name in missing] + [str(err) for err in result.errors]
        raise ValueError(f"{path}: does not fit the model: " + "; ".join(problems))
    return loaded


def load_gpt2(config: Path, weights: Path, device: Device[B]) -> Gpt2[B]:
    """A ``GPT2LMHeadModel`` checkpoint (its ``config.json`` and safetensors file) as a ferrum ``Gpt2``."""
    model = Gpt2Config.from_hf(read_config(config)).init(device)
    return _apply(model, gpt2_store(weights), weights)


def load_llama(config: Path, weights: Path, device: Device[B]) -> Llama[B]:
    """A ``LlamaForCausalLM`` checkpoint (its ``config.json`` and safetensors file) as a ferrum ``Llama``."""
    model = LlamaConfig.from_hf(read_config(config)).init(device)
    return _apply(model, llama_store(weights), weights)
