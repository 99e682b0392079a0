"""Tests of the optimizers and the learning-rate schedulers."""
