"""Make this example's ONNX model with PyTorch: ``mnist.onnx`` and ``expected.npz``.

    /path/to/torch-venv/bin/python examples/onnx_inference/make_model.py

Needs torch, onnx, onnxscript and onnxruntime, which the example does not:
the files it writes are committed. A small CNN (an ``nn.Sequential``:
convolution, batch norm, ReLU, max pooling, two linear layers, log-softmax)
is trained for four epochs on the MNIST sample ferrum ships (read here
straight from its IDX files), exported with ``torch.onnx.export`` (a dynamic
batch dimension; the exporter folds the batch norm into the convolution
before it, leaving Conv, Relu, MaxPool, Reshape, Gemm and LogSoftmax
nodes), and run by onnxruntime on the first eight digits of ferrum's test
sample: ``expected.npz`` holds their indices, labels and
onnxruntime's outputs (log-probabilities).
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime  # type: ignore[import-not-found,import-untyped,unused-ignore]  # absent or untyped
import torch  # type: ignore[import-not-found]  # torch is in the torch venv only
from torch import nn  # pyright: ignore[reportMissingImports]

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent.parent / "python" / "ferrum" / "data" / "dataset" / "vision" / "mnist_sample"
MEAN, STD = 0.1307, 0.3081  # of the MNIST training pixels in [0, 1], as the example normalises
NUM_EXPECTED = 8
EPOCHS = 4


def read_idx(name: str) -> np.ndarray[Any, Any]:
    """An IDX file of the sample (uint8 images [n, 28, 28] or labels [n])."""
    data = gzip.decompress((SAMPLE / f"{name}.gz").read_bytes())
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def normalise(images: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.float32]]:
    """uint8 [n, 28, 28] to the float32 [n, 1, 28, 28] the network reads."""
    x = images.astype(np.float32) / 255.0
    return ((x - MEAN) / STD).astype(np.float32)[:, None]


def network() -> Any:
    return nn.Sequential(
        nn.Conv2d(1, 8, 3),  # [n, 8, 26, 26]
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),  # [n, 8, 13, 13]
        nn.Conv2d(8, 16, 3),  # [n, 16, 11, 11]
        nn.ReLU(),
        nn.MaxPool2d(2),  # [n, 16, 5, 5]
        nn.Flatten(),
        nn.Linear(16 * 5 * 5, 32),
        nn.ReLU(),
        nn.Linear(32, 10),
        nn.LogSoftmax(dim=1),
    )


def main() -> None:
    torch.manual_seed(0)
    train_x = torch.from_numpy(normalise(read_idx("train-images-idx3-ubyte")))
    targets = torch.from_numpy(read_idx("train-labels-idx1-ubyte").astype(np.int64))
    model = network()
    optim = torch.optim.Adam(model.parameters(), lr=2e-3)
    model.train()
    for epoch in range(EPOCHS):
        order = torch.randperm(len(targets))
        last = float("nan")
        for start in range(0, len(order), 64):
            idx = order[start : start + 64]
            loss = nn.functional.nll_loss(model(train_x[idx]), targets[idx])
            optim.zero_grad()
            loss.backward()
            optim.step()
            last = loss.item()
        print(f"epoch {epoch + 1}: last batch loss {last:.3f}")

    model.eval()
    path = HERE / "mnist.onnx"
    torch.onnx.export(
        model,
        (train_x[:1],),
        str(path),
        input_names=["image"],
        output_names=["log_probs"],
        dynamic_shapes=({0: torch.export.Dim("batch")},),
        external_data=False,
    )

    test_x, test_y = read_idx("t10k-images-idx3-ubyte"), read_idx("t10k-labels-idx1-ubyte")
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (log_probs,) = session.run(None, {"image": normalise(test_x[:NUM_EXPECTED])})
    (all_log_probs,) = session.run(None, {"image": normalise(test_x)})
    np.savez(
        HERE / "expected.npz",
        indices=np.arange(NUM_EXPECTED, dtype=np.int64),
        labels=test_y[:NUM_EXPECTED].astype(np.int64),
        log_probs=np.asarray(log_probs, np.float32),
    )
    accuracy = (np.asarray(all_log_probs).argmax(1) == test_y).mean()
    print(f"onnxruntime's test accuracy on the 1000 sample digits: {accuracy:.3f}")
    for name in ("mnist.onnx", "expected.npz"):
        print(f"wrote {name} ({(HERE / name).stat().st_size} bytes)")


if __name__ == "__main__":
    main()
