"""Burn's ``examples/wgan`` in Python: a Wasserstein GAN with weight clipping that draws MNIST digits.

- ``dataset.py``: the batcher, MNIST items into images scaled to [-1, 1];
- ``model.py``: the generator (four blocks of linear, batch norm and leaky
  ReLU, then a linear layer and tanh), the critic (Burn calls it the
  discriminator: three linear layers), their config, and ``Clip``, the
  module mapper that clamps the critic's weights;
- ``training.py``: the training config, ``save_image`` (a grid of digits as
  a PNG, with Pillow) and ``train``, the loop written by hand: five critic
  steps per generator step, RMSProp, clipping after each critic step;
- ``infer.py``: ``generate``, the saved generator loaded back to draw a grid.

Run it from the repository root::

    python -m examples.wgan
"""
