"""Pieces that several examples share and that are not the guide's (those come from ``examples.guide``).

- ``mnist_mlp.py``: the two-layer perceptron over MNIST's 784 pixels that
  ``custom_renderer`` and ``custom_learning_strategy`` train;
- ``classifier.py``: ``Classifier``, the Learner's training and validation
  steps of the image classifiers of ``mnist``, ``distributed``,
  ``custom_image_dataset`` and the perceptron;
- ``training.py``: the early stopping on the validation loss of ``mnist`` and
  ``custom_learning_strategy``;
- ``reference_digits.py``: the test digits, reference outputs and comparison
  by which ``import_model_weights`` and ``onnx_inference`` check ferrum;
- ``torch_mnist.py``: the PyTorch side of the scripts that make the committed
  files of ``import_model_weights`` and ``onnx_inference`` (torch only there);
- ``cli.py``: ``example_parser``, the ``python -m examples.<name>`` command
  line each example's ``__main__`` starts from.
"""
