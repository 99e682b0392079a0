"""The devices the tests run on, defined once.

``DEVICE`` is the plain NdArray device most tests compute on. ``TrainB`` is
Autodiff over NdArray (the backend the training tests differentiate on),
``AD`` its device, ``INNER`` the device of the NdArray backend underneath
(where ``.inner()`` tensors live; the same device as ``DEVICE``).
"""

from __future__ import annotations

from ferrum.backend import Autodiff, NdArray

DEVICE = NdArray.device()
TrainB = Autodiff[NdArray]
AD = TrainB.device()
INNER = DEVICE
