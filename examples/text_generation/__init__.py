"""Burn's ``examples/text-generation`` in Python: a small transformer language model on Shakespeare.

- ``data.py``: the text cut into passages, the character tokenizer and the batcher;
- ``model.py``: the model (token and position embeddings, a causal ``TransformerEncoder``) and its steps;
- ``training.py``: the experiment config and ``train``, with the Learner and a Noam schedule;
- ``inference.py``: ``generate``, the trained model loaded back and sampled from a prompt.

Run it (train, then continue a few prompts) from the repository root::

    python -m examples.text_generation
"""
