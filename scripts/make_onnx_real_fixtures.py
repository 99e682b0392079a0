#!/usr/bin/env python3
"""Export real architectures with both of torch's ONNX exporters; store inputs and onnxruntime's outputs.

    /path/to/torch-venv/bin/python scripts/make_onnx_real_fixtures.py [NAME...]

Needs torch, torchvision, transformers, onnx, onnxscript and onnxruntime (yardsticks in a separate
environment, never ferrum's dependencies); not run by the tests, which need none of them. Writes
``tests/fixtures/onnx_real/<name>-<exporter>.onnx`` and ``.npz`` for each architecture below, built
with a fixed seed (random weights, eval mode, small configs where the architecture allows) and
exported twice: ``ts`` is the TorchScript exporter (``dynamo=False``) at opset 17, ``dynamo`` torch's
default exporter at its default opset. Large weights are committed as recipes
(tests/support/onnx_real_models.py); the ``.npz`` holds the inputs (``in_<name>``) and onnxruntime's outputs
(``out_<i>``) on the remade weights. ``manifest.json`` lists every case, the versions used, and the
cases that could not be exported, with why.
"""

from __future__ import annotations

import io
import json
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime
import torch
import torchvision
import transformers
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.support.onnx_real_models import FIXTURES, fill_weights, strip_weights

Inputs = dict[str, np.ndarray]


class Hidden(nn.Module):
    """A Hugging Face model's last hidden state as a plain tensor output."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        if attention_mask is None:
            return self.model(input_ids=input_ids).last_hidden_state  # type: ignore[no-any-return]
        return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # type: ignore[no-any-return]


class Features(nn.Module):
    """An encoder fed with features (Whisper's log-mel input) returning its last hidden state."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_features: torch.Tensor) -> torch.Tensor:
        return self.model(input_features=input_features).last_hidden_state  # type: ignore[no-any-return]


def image(batch: int = 1, size: int = 64) -> Inputs:
    return {"x": np.random.default_rng(0).normal(size=(batch, 3, size, size)).astype(np.float32)}


def tokens(batch: int = 2, seq: int = 16, vocab: int = 100, mask: bool = True) -> Inputs:
    rng = np.random.default_rng(0)
    out = {"input_ids": rng.integers(1, vocab, size=(batch, seq)).astype(np.int64)}
    if mask:
        m = np.ones((batch, seq), np.int64)
        m[1, seq - 5 :] = 0  # a padded sequence: the mask matters
        out["attention_mask"] = m
    return out


def text_config(cls: Any, **extra: Any) -> Any:
    return cls(**extra)


def _vision() -> dict[str, Callable[[], tuple[nn.Module, Inputs]]]:
    tv = torchvision.models
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    from torchvision.models.densenet import DenseNet
    from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf
    from torchvision.models.shufflenetv2 import ShuffleNetV2
    from torchvision.models.swin_transformer import SwinTransformer
    from torchvision.models.vision_transformer import VisionTransformer

    def efficientnet() -> nn.Module:
        setting, last = _efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.25)
        return EfficientNet(setting, 0.2, last_channel=last, num_classes=10)

    return {
        "resnet18": lambda: (tv.resnet18(num_classes=10), image()),
        "resnet18_b8": lambda: (tv.resnet18(num_classes=10), image(batch=8, size=32)),
        "mobilenet_v3_small": lambda: (tv.mobilenet_v3_small(width_mult=0.5, num_classes=10), image()),
        "efficientnet": lambda: (efficientnet(), image()),
        "convnext": lambda: (
            ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 1)], num_classes=10),
            image(),
        ),
        "densenet": lambda: (DenseNet(8, (2, 2), 16, num_classes=10), image()),
        "shufflenet": lambda: (ShuffleNetV2([2, 2, 2], [8, 16, 32, 64, 128], num_classes=10), image()),
        "squeezenet": lambda: (tv.squeezenet1_1(num_classes=10), image()),
        "regnet": lambda: (tv.regnet_y_400mf(num_classes=10), image()),
        "googlenet": lambda: (tv.googlenet(num_classes=10, aux_logits=False, init_weights=True), image()),
        "vit": lambda: (
            VisionTransformer(32, 8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64, num_classes=10),
            image(size=32),
        ),
        "swin": lambda: (
            SwinTransformer([4, 4], 24, [2, 2], [2, 4], [4, 4], num_classes=10),
            image(size=32),
        ),
    }


def _text() -> dict[str, Callable[[], tuple[nn.Module, Inputs]]]:
    t = transformers
    small = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}

    def bert() -> nn.Module:
        return Hidden(t.BertModel(t.BertConfig(vocab_size=100, **small), add_pooling_layer=False))

    def distilbert() -> nn.Module:
        cfg = t.DistilBertConfig(vocab_size=100, dim=32, n_layers=2, n_heads=2, hidden_dim=64)
        return Hidden(t.DistilBertModel(cfg))

    def roberta() -> nn.Module:
        return Hidden(
            t.RobertaModel(t.RobertaConfig(vocab_size=100, pad_token_id=1, **small), add_pooling_layer=False)
        )

    def gpt2() -> nn.Module:
        return Hidden(
            t.GPT2Model(t.GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=64))
        )

    def llama() -> nn.Module:
        cfg = t.LlamaConfig(vocab_size=100, num_key_value_heads=1, max_position_embeddings=64, **small)
        return Hidden(t.LlamaModel(cfg))

    def t5() -> nn.Module:
        cfg = t.T5Config(vocab_size=100, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2)
        return Hidden(t.T5EncoderModel(cfg))

    def clip() -> nn.Module:
        cfg = t.CLIPTextConfig(vocab_size=100, max_position_embeddings=32, **small)
        return Hidden(t.CLIPTextModel(cfg))

    def whisper() -> tuple[nn.Module, Inputs]:
        cfg = t.WhisperConfig(
            vocab_size=100,
            num_mel_bins=16,
            d_model=32,
            encoder_layers=2,
            encoder_attention_heads=2,
            decoder_layers=1,
            decoder_attention_heads=2,
            encoder_ffn_dim=64,
            decoder_ffn_dim=64,
            max_source_positions=16,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            decoder_start_token_id=1,
        )
        features = np.random.default_rng(0).normal(size=(1, 16, 32)).astype(np.float32)
        return Features(t.WhisperModel(cfg).get_encoder()), {"input_features": features}

    return {
        "bert": lambda: (bert(), tokens()),
        "bert_s128": lambda: (bert(), tokens(seq=128)),
        "distilbert": lambda: (distilbert(), tokens()),
        "roberta": lambda: (roberta(), tokens()),
        "gpt2": lambda: (gpt2(), tokens()),
        "llama": lambda: (llama(), tokens()),
        "t5_encoder": lambda: (t5(), tokens()),
        "clip_text": lambda: (clip(), tokens(mask=False)),
        "whisper_encoder": whisper,
    }


def enliven(model: nn.Module) -> None:
    """Give constant-initialised weights some spread, so no output is trivially zero.

    Fresh models start with zero classifier heads (ViT), BatchNorm at the identity (running mean
    0, variance 1, weight 1, bias 0): an export would then check little of what those layers do.
    """
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for _, p in model.named_parameters():
            if p.numel() > 1 and float(p.std()) == 0.0:
                p.add_(torch.randn(p.shape, generator=gen) * 0.1)
        for name, b in model.named_buffers():
            if name.endswith("running_var"):
                b.copy_(torch.rand(b.shape, generator=gen) + 0.5)
            elif name.endswith("running_mean"):
                b.copy_(torch.randn(b.shape, generator=gen) * 0.1)


def export(model: nn.Module, inputs: Inputs, dynamo: bool) -> onnx.ModelProto:
    args = tuple(torch.from_numpy(v) for v in inputs.values())
    names = list(inputs)
    if dynamo:
        program = torch.onnx.export(model, args, dynamo=True, input_names=names)
        assert program is not None
        return program.model_proto
    buffer = io.BytesIO()
    torch.onnx.export(model, args, buffer, dynamo=False, opset_version=17, input_names=names)
    return onnx.load_from_string(buffer.getvalue())


def drop_notes(model: onnx.ModelProto) -> None:
    """Remove what the exporters note per node (source locations, module paths): most of a dynamo
    export's bytes, and no part of what the graph computes."""
    graphs = [model.graph]
    while graphs:
        g = graphs.pop()
        for node in g.node:
            del node.metadata_props[:]
            node.doc_string = ""
            for attr in node.attribute:
                graphs += ([attr.g] if attr.HasField("g") else []) + list(attr.graphs)


def main(only: list[str]) -> int:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    builders = {**_vision(), **_text()}
    manifest: dict[str, Any] = {
        "versions": {
            "torch": torch.__version__,
            "torchvision": torchvision.__version__,
            "transformers": transformers.__version__,
            "onnx": onnx.__version__,
            "onnxruntime": onnxruntime.__version__,
        },
        "cases": {},
        "not_exported": {},
    }
    path = FIXTURES / "manifest.json"
    if only and path.exists():
        old = json.loads(path.read_text())
        manifest["cases"], manifest["not_exported"] = old["cases"], old["not_exported"]
    for name, build in builders.items():
        if only and name not in only:
            continue
        for exporter in ("ts", "dynamo"):
            case = f"{name}-{exporter}"
            torch.manual_seed(0)
            model, inputs = build()
            enliven(model)
            model.eval()
            try:
                # Not under no_grad: there nn.MultiheadAttention takes a fused fast path
                # (aten::_native_multi_head_attention) the TorchScript exporter cannot write.
                proto = export(model, inputs, exporter == "dynamo")
            except Exception as exc:  # an exporter's failure is recorded, not fatal
                manifest["not_exported"][case] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
                traceback.print_exc(limit=1)
                continue
            drop_notes(proto)
            strip_weights(proto)
            filled = onnx.ModelProto()
            filled.CopyFrom(proto)
            fill_weights(filled)  # onnxruntime runs the weights a test will remake; the file keeps the recipe
            session = onnxruntime.InferenceSession(
                filled.SerializeToString(), providers=["CPUExecutionProvider"]
            )
            feed = {i.name: inputs[i.name] for i in session.get_inputs()}
            outputs = session.run(None, feed)
            onnx.save(proto, FIXTURES / f"{case}.onnx")
            arrays = {f"in_{k}": v for k, v in feed.items()} | {f"out_{i}": o for i, o in enumerate(outputs)}
            np.savez_compressed(FIXTURES / f"{case}.npz", **arrays)
            ops = sorted({n.op_type for n in proto.graph.node})
            manifest["cases"][case] = {
                "opset": max(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")),
                "ops": ops,
            }
            manifest["not_exported"].pop(case, None)
            print(f"{case}: {len(proto.graph.node)} nodes, {len(ops)} op types", flush=True)
    path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
