"""Burn's ``examples/custom-image-dataset`` in Python: a CNN trained with the Learner on a folder of images.

- ``data.py``: the folder (written as seeded synthetic shapes, or the user's),
  its split, and the batcher whose transforms (resize, crop, flip, to_float,
  normalize) run in the DataLoader's worker threads;
- ``model.py``: the VGG-style CNN, its config, and its training and validation steps;
- ``training.py``: the training config and ``train``, with the Learner;
- ``inference.py``: ``infer``, the trained model loaded back to classify images.

Run it from the repository root::

    python -m examples.custom_image_dataset
    python -m examples.custom_image_dataset --data /path/to/my/images
"""
