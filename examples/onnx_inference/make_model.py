"""Make this example's ONNX model with PyTorch: ``mnist.onnx`` and ``expected.npz``.

    /path/to/torch-venv/bin/python -m examples.onnx_inference.make_model  # from the repository root

Needs torch, onnx, onnxscript and onnxruntime, which the example does not:
the files it writes are committed. A small CNN (an ``nn.Sequential``:
convolution, batch norm, ReLU, max pooling, two linear layers, log-softmax)
is trained for four epochs on the MNIST sample ferrum ships (by the loop
it shares with ``import_model_weights/make_weights.py``, in
``examples/common/torch_mnist.py``), exported with ``torch.onnx.export`` (a
dynamic batch dimension; the exporter folds the batch norm into the convolution
before it, leaving Conv, Relu, MaxPool, Reshape, Gemm and LogSoftmax
nodes), and run by onnxruntime on the first eight digits of ferrum's test
sample: ``expected.npz`` holds their indices, labels and
onnxruntime's outputs (log-probabilities).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime  # type: ignore[import-not-found,import-untyped,unused-ignore]  # absent or untyped
import torch  # type: ignore[import-not-found]  # torch is in the torch venv only
from torch import nn  # pyright: ignore[reportMissingImports]

from ..common.torch_mnist import NUM_EXPECTED, normalise, read_idx, train

HERE = Path(__file__).resolve().parent


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
    model = train(network, nn.functional.nll_loss)
    path = HERE / "mnist.onnx"
    torch.onnx.export(
        model,
        (torch.from_numpy(normalise(read_idx("train-images-idx3-ubyte")[:1])),),
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
