#!/usr/bin/env python3
"""Export the PyTorch models that tests/onnx/test_torch_models.py imports with ferrum.onnx (needs torch).

    /path/to/torch-venv/bin/python scripts/make_onnx_torch_fixtures.py   # writes tests/fixtures/onnx_torch

Not run by the tests (they never need torch); the outputs are committed. Four small models, built
with fixed seeds and put in eval mode, each exported with ``torch.onnx.export`` to
``<name>.onnx`` beside ``<name>.npz`` holding ``input`` (the fixed input) and ``output`` (torch's
output for it):

``mlp``          784 -> 64 -> ReLU -> 10;
``cnn``          Conv(1->4, 3x3) -> BatchNorm -> ReLU -> MaxPool(2) -> Flatten -> Linear(4*5*5 -> 10),
                 on ``[batch, 1, 12, 12]``, with non-trivial running statistics;
``lstm``         LSTM(input 8, hidden 16, batch_first) on ``[2, 5, 8]``, then Linear(16 -> 3) on every step;
``transformer``  2-layer TransformerEncoder (d_model 32, 4 heads, ff 64, dropout 0, batch_first)
                 on ``[2, 6, 32]``.

The exporter is the TorchScript one (``dynamo=False``): it writes a plain, self-contained graph of
standard ops at the opset asked for (17), with the batch dimension symbolic, and needs only the
``onnx`` package beside torch. The dynamo exporter (torch's default since 2.9) needs ``onnxscript`` too
and rewrites the graph through onnxscript's optimisation passes, so its files change with that
package's version. ``training=TrainingMode.PRESERVE`` exports the eval-mode graph without the EVAL
mode's pass that folds BatchNorm into the Conv before it, so the CNN keeps its BatchNormalization.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "onnx_torch"
OPSET = 17


class Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(784, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class Cnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 5 * 5, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(torch.relu(self.bn(self.conv(x))))
        return self.fc(torch.flatten(x, 1))


class LstmHead(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.head = nn.Linear(16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x)
        return self.head(out)


def transformer() -> nn.Module:
    layer = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0, batch_first=True)
    # enable_nested_tensor=False: the fast path is for inference on padded batches, not for export
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


def export(name: str, model: nn.Module, x: torch.Tensor, dynamic_batch: bool = True) -> None:
    model.eval()
    with torch.no_grad():
        out = model(x)
    path = OUT / f"{name}.onnx"
    torch.onnx.export(
        model,
        (x,),
        str(path),
        input_names=["input"],
        output_names=["output"],
        opset_version=OPSET,
        dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}} if dynamic_batch else None,
        dynamo=False,
        # PRESERVE exports the eval-mode graph as EVAL does, but without EVAL's peephole pass that folds
        # BatchNorm into the preceding Conv: the CNN keeps its BatchNormalization node (and layer)
        training=torch.onnx.TrainingMode.PRESERVE,
    )
    np.savez(OUT / f"{name}.npz", input=x.numpy(), output=out.numpy())
    print(f"{name}: {path.stat().st_size} bytes, output {tuple(out.shape)}")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    gen = torch.Generator().manual_seed(0)

    torch.manual_seed(0)
    export("mlp", Mlp(), torch.rand((2, 784), generator=gen))

    torch.manual_seed(1)
    cnn = Cnn()
    with torch.no_grad():
        # running statistics away from (0, 1), so that the test sees eval-mode BatchNorm use them
        cnn.bn.running_mean.copy_(torch.randn(4, generator=gen) * 0.2)
        cnn.bn.running_var.copy_(torch.rand(4, generator=gen) + 0.5)
        cnn.bn.weight.copy_(torch.rand(4, generator=gen) + 0.5)
        cnn.bn.bias.copy_(torch.randn(4, generator=gen) * 0.1)
    export("cnn", cnn, torch.randn((4, 1, 12, 12), generator=gen))

    torch.manual_seed(2)
    export("lstm", LstmHead(), torch.randn((2, 5, 8), generator=gen))

    torch.manual_seed(3)
    export("transformer", transformer(), torch.randn((2, 6, 32), generator=gen))


if __name__ == "__main__":
    main()
