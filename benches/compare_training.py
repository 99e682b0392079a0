"""The autodiff and training rows of benches/compare.py: a recorded chain of
small ops, an MLP forward+backward, conv2d forward+backward, and whole Adam
training steps of the 784-512-10 MLP and the Burn Book guide's CNN.

ferrum goes through its public API the way a training loop does; torch runs
the same models (compare_torch.py) holding ferrum's weights. NumPy has no
autodiff and appears only where the backward pass is written out by hand.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import ferrum
import numpy as np
import numpy.typing as npt
from compare_core import F32, FERRUM, GUIDE_BATCH, GUIDE_IMAGE, NUMPY, TORCH, Thunk, Workload, training_data
from compare_torch import LR, torch_guide_cnn, torch_mlp, torch_train_step
from ferrum import D1, D2, D4, Device, Distribution, Int, Tensor
from ferrum.backend import Autodiff, Backend, NdArray
from ferrum.module import Module
from ferrum.nn import Linear, LinearConfig, PaddingConfig2d, Relu
from ferrum.nn.conv import Conv2d, Conv2dConfig
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.optim import AdamConfig, GradientsParams

B = TypeVar("B", bound=Backend)
AD = Autodiff[NdArray]


def autodiff_workloads(torch: Any, quick: bool) -> list[Workload]:
    device = AD.device()
    steps = 50 if quick else 500  # each step records two ops: x * c, then + c
    ops = 2 * steps

    def chain() -> dict[str, Thunk]:
        x0 = Tensor.random((16,), Distribution.Uniform(0.0, 1.0), device).require_grad()

        def ferrum_chain() -> None:
            x = x0
            for _ in range(steps):
                x = x * 1.0001 + 0.0001
            x.sum().backward()

        cases: dict[str, Thunk] = {FERRUM: ferrum_chain}
        if torch is not None:
            t0 = torch.rand(16, requires_grad=True)

            def torch_chain() -> None:
                x = t0
                for _ in range(steps):
                    x = x * 1.0001 + 0.0001
                x.sum().backward()
                t0.grad = None

            cases[TORCH] = torch_chain
        return cases

    batch, n_in, n_hidden, n_out = 64, 784, 512, 10

    def mlp() -> dict[str, Thunk]:
        rng = np.random.default_rng(1)
        normal = Distribution.Normal(0.0, 0.05)
        x = Tensor.random((batch, n_in), Distribution.Uniform(0.0, 1.0), device)
        w1 = Tensor.random((n_in, n_hidden), normal, device).require_grad()
        b1 = Tensor.zeros((1, n_hidden), device).require_grad()
        w2 = Tensor.random((n_hidden, n_out), normal, device).require_grad()
        b2 = Tensor.zeros((1, n_out), device).require_grad()

        def ferrum_mlp() -> None:
            h = ferrum.activation.relu(x @ w1 + b1)
            y = h @ w2 + b2
            grads = (y * y).mean().backward()
            w1.grad(grads)

        # NumPy has no autodiff: the same forward and backward, written by hand.
        nx = rng.random((batch, n_in), dtype=np.float32)
        nw1 = (rng.standard_normal((n_in, n_hidden)) * 0.05).astype(np.float32)
        nb1 = np.zeros(n_hidden, dtype=np.float32)
        nw2 = (rng.standard_normal((n_hidden, n_out)) * 0.05).astype(np.float32)
        nb2 = np.zeros(n_out, dtype=np.float32)

        def numpy_mlp() -> tuple[F32, ...]:
            pre = nx @ nw1 + nb1
            h = np.maximum(pre, np.float32(0.0))
            y = h @ nw2 + nb2
            dy = y * np.float32(2.0 / y.size)
            dw2 = h.T @ dy
            db2 = dy.sum(axis=0)
            dh = dy @ nw2.T
            dh[pre <= 0] = 0
            dw1 = nx.T @ dh
            db1 = dh.sum(axis=0)
            return dw1, db1, dw2, db2

        cases: dict[str, Thunk] = {FERRUM: ferrum_mlp, NUMPY: numpy_mlp}
        if torch is not None:
            tx = torch.from_numpy(nx)
            params = [torch.from_numpy(p.copy()).requires_grad_() for p in (nw1, nb1, nw2, nb2)]
            tw1, tb1, tw2, tb2 = params

            def torch_mlp() -> None:
                h = torch.relu(tx @ tw1 + tb1)
                y = h @ tw2 + tb2
                (y * y).mean().backward()
                for p in params:
                    p.grad = None

            cases[TORCH] = torch_mlp
        return cases

    return [
        Workload(f"autodiff chain {ops} ops, per op", chain, per=ops, grad=True),
        Workload(f"mlp {n_in}-{n_hidden}-{n_out} b{batch} fwd+bwd", mlp, grad=True),
    ]


# --------------------------------------------------------------------------- models


class Mlp(Module[B]):
    """784-512-10 perceptron with a ReLU, as a user writes it."""

    linear1: Linear[B]
    linear2: Linear[B]
    activation: Relu

    def forward(self, x: Tensor[B, D2]) -> Tensor[B, D2]:
        return self.linear2.forward(self.activation.forward(self.linear1.forward(x)))


def guide_cnn(device: Device[B]) -> Any:
    """The Burn Book guide's CNN, ``ModelConfig(10, 512).init(device)`` of
    examples/guide (the model the guide trains, dropout 0.5)."""
    root = str(Path(__file__).resolve().parents[1])  # the repository root, holding the package examples
    if root not in sys.path:
        sys.path.insert(0, root)
    from examples.guide.model import ModelConfig

    return ModelConfig(10, 512).init(device)


def ferrum_train_step(model: Any, inputs: Tensor[AD, Any], targets: Tensor[AD, D1, Int]) -> Thunk:
    """One training step per call: forward, cross-entropy, backward, Adam (the
    step keeps updating the model, so every call is a real step)."""
    optim = AdamConfig().init()
    loss_fn = CrossEntropyLossConfig().init(AD.device())

    def step() -> None:
        nonlocal model
        loss = loss_fn.forward(model.forward(inputs), targets)
        grads = GradientsParams.from_grads(loss.backward(), model)
        model = optim.step(LR, model, grads)

    return step


def _np(param: Any) -> F32:
    """A parameter's value as a NumPy array (copied, so torch can own it)."""
    return np.array(param.val().to_numpy(), dtype=np.float32)


def _copy_linear(torch: Any, target: Any, layer: Linear[Any]) -> None:
    """``layer``'s weights into the torch Linear ``target`` (ferrum stores ``[d_input, d_output]``)."""
    with torch.no_grad():
        target.weight.copy_(torch.from_numpy(_np(layer.weight).T.copy()))
        if layer.bias is not None:
            target.bias.copy_(torch.from_numpy(_np(layer.bias)))


def _copy_conv(torch: Any, target: Any, layer: Conv2d[Any]) -> None:
    """``layer``'s weights into the torch Conv2d ``target`` (same ``[out, in, kh, kw]`` layout)."""
    with torch.no_grad():
        target.weight.copy_(torch.from_numpy(_np(layer.weight)))
        if layer.bias is not None:
            target.bias.copy_(torch.from_numpy(_np(layer.bias)))


def _copied(torch: Any, target: Any, layers: dict[int, Linear[Any] | Conv2d[Any]]) -> Any:
    """The torch ``nn.Sequential`` ``target`` with ``layers[i]``'s weights in its layer ``i``."""
    for index, layer in layers.items():
        if isinstance(layer, Linear):
            _copy_linear(torch, target[index], layer)
        else:
            _copy_conv(torch, target[index], layer)
    return target


# --------------------------------------------------------------------------- rows


def training_workloads(torch: Any) -> list[Workload]:
    """Conv forward+backward and whole train steps (forward, loss, backward, Adam).

    Both frameworks start from the same weights and data; ferrum goes through
    its public API the way a training loop does (``GradientsParams.from_grads``,
    a functional ``optim.step``), torch through ``nn``, ``F.cross_entropy`` and
    ``torch.optim.Adam`` with the same hyper-parameters.
    """
    device = AD.device()
    out: list[Workload] = []

    # conv2d 3x3, padding 1: input, weight and bias gradients of sum(conv(x))
    same = PaddingConfig2d.Explicit(1, 1)
    for batch, c_in, c_out, size in ((64, 1, 8, 28), (64, 8, 16, 28), (32, 64, 64, 56)):

        def conv(
            batch: int = batch, c_in: int = c_in, c_out: int = c_out, size: int = size
        ) -> dict[str, Thunk]:
            rng = np.random.default_rng(2)
            nx = rng.random((batch, c_in, size, size), dtype=np.float32)
            layer = Conv2dConfig((c_in, c_out), (3, 3)).with_padding(same).init(device)
            x: Tensor[AD, D4] = Tensor.from_numpy(nx, device).require_grad()

            def ferrum_conv() -> None:
                grads = layer.forward(x).sum().backward()
                x.grad(grads)

            cases: dict[str, Thunk] = {FERRUM: ferrum_conv}
            if torch is not None:
                tconv = torch.nn.Conv2d(c_in, c_out, (3, 3), padding=1)
                _copy_conv(torch, tconv, layer)
                tx = torch.from_numpy(nx).requires_grad_()

                def torch_conv() -> None:
                    tconv(tx).sum().backward()
                    tx.grad = None
                    tconv.zero_grad(set_to_none=True)

                cases[TORCH] = torch_conv
            return cases

        name = f"conv2d 3x3 b{batch} {c_in}->{c_out} {size}x{size} f+b"
        out.append(Workload(name, conv, grad=True))

    for batch in (64, 256):

        def mlp(batch: int = batch) -> dict[str, Thunk]:
            nx, ny = training_data(batch, (784,))
            model = Mlp(
                linear1=LinearConfig(784, 512).init(device),
                linear2=LinearConfig(512, 10).init(device),
                activation=Relu(),
            )
            return train_step_cases(
                torch,
                model,
                nx,
                ny,
                lambda: _copied(torch, torch_mlp(torch), {0: model.linear1, 2: model.linear2}),
            )

        out.append(Workload(f"mlp 784-512-10 adam step b{batch}", mlp, grad=True))

    out.append(
        Workload(f"cnn guide adam step b{GUIDE_BATCH}", functools.partial(guide_step_cases, torch), grad=True)
    )
    return out


def guide_step_cases(torch: Any) -> dict[str, Thunk]:
    """The guide CNN's training step on a batch of 64 images: ferrum's, and
    torch's on the same weights when torch is loaded (the memory check's
    ferrum process runs this step with ``torch`` None)."""
    device = AD.device()
    nx, ny = training_data(GUIDE_BATCH, GUIDE_IMAGE)
    model = guide_cnn(device)
    layers = {1: model.conv1, 3: model.conv2, 8: model.linear1, 11: model.linear2}
    return train_step_cases(torch, model, nx, ny, lambda: _copied(torch, torch_guide_cnn(torch), layers))


def train_step_cases(
    torch: Any, model: Any, nx: F32, ny: npt.NDArray[np.int64], torch_model: Callable[[], Any]
) -> dict[str, Thunk]:
    """The training step of ``model`` on inputs ``nx`` and targets ``ny``, and
    of ``torch_model()`` on the same data when torch is loaded."""
    device = AD.device()
    cases: dict[str, Thunk] = {
        FERRUM: ferrum_train_step(model, Tensor.from_numpy(nx, device), Tensor.from_numpy(ny, device))
    }
    if torch is not None:
        cases[TORCH] = torch_train_step(torch, torch_model(), nx, ny)
    return cases
