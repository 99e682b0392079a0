"""Burn's ``examples/mnist`` in Python: a CNN of convolution blocks trained on augmented MNIST digits.

- ``data.py``: the affine augmentation (translation, shear, scale, rotation,
  composed into one 2-d transform and resampled with ``grid_sample_2d``), the
  mapper that normalises and augments each digit, and the batcher;
- ``model.py``: the model (two convolution blocks of conv, batch norm, ReLU
  and max pooling, then three linear layers with GELU and dropout), its
  config, and its training and validation steps;
- ``training.py``: the training config and ``run``: the datasets of the
  sixteen combinations of transforms, the Learner with AdamW, a composed
  learning-rate schedule and early stopping, then one evaluation per
  combination on the test digits.

Run it from the repository root::

    python -m examples.mnist            # ferrum's MNIST sample
    python -m examples.mnist --data DIR # the IDX files of the full MNIST in DIR
"""
