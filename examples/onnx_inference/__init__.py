"""Burn's onnx-inference example: an MNIST model exported from PyTorch to ONNX, run by ferrum two ways."""
