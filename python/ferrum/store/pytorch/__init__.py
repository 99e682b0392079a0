"""PyTorch files: ``PytorchStore`` and the pickle reader that runs no code."""

from ferrum.store.pytorch.store import PytorchStore

__all__ = ["PytorchStore"]
