"""Burn's ``examples/modern-lstm`` in Python: an LSTM written from its gates, with layer normalisation,
stacked and bidirectional, learning to continue noisy Fibonacci-like sequences.

- ``dataset.py``: the synthetic sequences (each value the sum of the two
  before it plus Gaussian noise), drawn from a seed, and the batcher;
- ``model.py``: ``LstmCell`` (one matrix for the four gates of the input and
  one for the hidden state, layer norms, forget-gate bias 1), ``StackedLstm``
  and ``LstmNetwork`` (an optional reversed stack, a linear head on the last
  step), with their configs;
- ``training.py``: the training config and ``train``, the loop written by
  hand: MSE loss, Adam with gradient clipping at norm 1;
- ``inference.py``: ``infer``, the saved model loaded back to predict new
  sequences.

Run it from the repository root::

    python -m examples.modern_lstm
"""
