"""Burn's import-model-weights example: a PyTorch-trained MNIST CNN loaded from .pt and .safetensors."""
