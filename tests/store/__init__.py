"""Tests of ferrum.store: PyTorch, safetensors and Burnpack stores, applying them to modules."""
