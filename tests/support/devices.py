"""The backend the training tests differentiate on, and its devices.

``TrainB`` is Autodiff over NdArray, ``AD`` its device, ``INNER`` the device of
the NdArray backend underneath (where ``.inner()`` tensors live).
"""

from __future__ import annotations

from ferrum.backend import Autodiff, NdArray

TrainB = Autodiff[NdArray]
AD = TrainB.device()
INNER = NdArray.device()
