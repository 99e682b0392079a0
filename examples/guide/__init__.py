"""The Burn Book's guide (Burn's ``examples/guide``) in Python: MNIST digits with a small CNN.

- ``data.py``: the batcher, MNIST items into normalised image and label tensors;
- ``model.py``: the CNN, its config, and its training and validation steps;
- ``training.py``: the training config and ``train``, with the Learner;
- ``inference.py``: ``infer``, the trained model loaded back from the artifact directory.

Run it (train, then predict a few test digits) from the repository root::

    python -m examples.guide
"""
