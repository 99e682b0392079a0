"""Tests of ferrum.train: the Learner, checkpoints, loggers, renderers, faults and interrupts."""
