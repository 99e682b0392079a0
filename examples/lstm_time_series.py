"""Time-series forecasting with an LSTM: from 24 steps of a noisy sum of two
sine waves, predict the next value.

An `Lstm` reads the window (batch first, `[batch, 24, 1]`); a `Linear` maps
its final hidden state to the forecast. Training windows come from random
phases and frequencies, so the model must learn the dynamics, not one curve.
At the end the model keeps forecasting as new values stream in, carrying
the `LstmState` from step to step instead of re-reading the whole window.

Run with `python examples/lstm_time_series.py` (about ten seconds).
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
from ferrum import D2, D3, Device, Tensor, config
from ferrum.backend import Autodiff, Backend, NdArray
from ferrum.module import Module
from ferrum.nn import Linear, LinearConfig, Lstm, LstmConfig, LstmState
from ferrum.nn.loss import MseLoss, Reduction
from ferrum.optim import AdamConfig, GradientsParams

B = TypeVar("B", bound=Backend)
TrainB = Autodiff[NdArray]
WINDOW = 24


class Forecaster(Module[B]):
    lstm: Lstm[B]
    head: Linear[B]

    def forward(
        self, x: Tensor[B, D3], state: LstmState[B, D2] | None = None
    ) -> tuple[Tensor[B, D2], LstmState[B, D2]]:
        """``[batch, seq, 1]`` -> the next value ``[batch, 1]`` and the LSTM's state."""
        _, state = self.lstm.forward(x, state)
        return self.head.forward(state.hidden), state


@config
class ForecasterConfig:
    d_hidden: int = 32

    def init(self, device: Device[B]) -> Forecaster[B]:
        return Forecaster(
            LstmConfig(1, self.d_hidden, True).init(device), LinearConfig(self.d_hidden, 1).init(device)
        )


def series(rng: np.random.Generator, n: int, length: int) -> np.ndarray:
    """``n`` curves of ``length`` steps: two sines of random phase and frequency, plus noise."""
    t = np.arange(length)[None, :]
    f1, f2 = rng.uniform(0.1, 0.3, (n, 1)), rng.uniform(0.02, 0.08, (n, 1))
    p1, p2 = rng.uniform(0, 2 * np.pi, (n, 1)), rng.uniform(0, 2 * np.pi, (n, 1))
    clean = np.sin(f1 * t + p1) + 0.5 * np.sin(f2 * t + p2)
    return (clean + rng.normal(0, 0.02, clean.shape)).astype(np.float32)


def main(steps: int = 400, batch_size: int = 32) -> float:
    """Train for ``steps`` batches; the mean squared error of one-step forecasts on fresh curves."""
    TrainB.seed(0)
    rng = np.random.default_rng(0)
    device = TrainB.device()
    model = ForecasterConfig().init(device)
    optim = AdamConfig().init()
    mse = MseLoss()
    for step in range(1, steps + 1):
        curves = series(rng, batch_size, WINDOW + 1)
        x: Tensor[TrainB, D3] = Tensor.from_numpy(curves[:, :WINDOW, None], device)
        y: Tensor[TrainB, D2] = Tensor.from_numpy(curves[:, WINDOW:], device)
        prediction, _ = model.forward(x)
        loss = mse.forward(prediction, y, Reduction.Mean)
        model = optim.step(5e-3, model, GradientsParams.from_grads(loss.backward(), model))
        if step % 100 == 0:
            print(f"step {step}: mse {loss.into_scalar():.4f}")

    trained = model.valid()
    plain = NdArray.device()
    test = series(np.random.default_rng(1), 200, WINDOW + 13)
    forecast, state = trained.forward(Tensor.from_numpy(test[:, :WINDOW, None], plain))
    error = float(((forecast.to_numpy()[:, 0] - test[:, WINDOW]) ** 2).mean())
    print(f"one-step test mse: {error:.4f} (the series' variance is {float(test.var()):.2f})")
    # The next 12 observations arrive one at a time: carrying the state forward
    # reads each new value once instead of re-reading the whole window.
    errors = []
    for k in range(WINDOW, WINDOW + 12):
        observed: Tensor[NdArray, D3] = Tensor.from_numpy(test[:, k : k + 1, None], plain)
        forecast, state = trained.forward(observed, state)
        errors.append(float(((forecast.to_numpy()[:, 0] - test[:, k + 1]) ** 2).mean()))
    print(f"streaming one-step mse over the next 12 steps: {np.mean(errors):.4f}")
    return error


if __name__ == "__main__":
    main()
