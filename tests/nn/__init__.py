"""Tests of ferrum.nn layers, ferrum.functional, initializers, and parity with PyTorch."""
