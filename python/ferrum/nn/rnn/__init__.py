"""Recurrent layers, as in Burn's ``burn::nn`` (``Lstm``, ``BiLstm``, ``Gru``, ``GateController``).

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.nn.rnn import GruConfig
    >>> device = NdArray.device()
    >>> GruConfig(2, 3, True).init(device).forward(Tensor.ones((1, 4, 2), device)).dims()
    (1, 4, 3)
"""

from ferrum.nn.rnn.gate_controller import GateController
from ferrum.nn.rnn.gru import Gru, GruConfig
from ferrum.nn.rnn.lstm import BiLstm, BiLstmConfig, Lstm, LstmConfig, LstmState

__all__ = ["BiLstm", "BiLstmConfig", "GateController", "Gru", "GruConfig", "Lstm", "LstmConfig", "LstmState"]
