"""Text classification with a transformer encoder, in the spirit of Burn's ``examples/text-classification``.

- ``data.py``: the generated sentences, their tokenizer, and the batcher with its padding mask;
- ``model.py``: the classifier (embeddings, positions, a ``TransformerEncoder``, mean pooling) and its steps;
- ``training.py``: the experiment config and ``train``, with the Learner;
- ``inference.py``: ``infer``, the trained model loaded back to classify sentences.

Run it (train, then classify a few sentences) from the repository root::

    python -m examples.text_classification
"""
