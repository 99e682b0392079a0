"""Tests of ferrum.train.metric: every metric against Burn's cases and NumPy references."""
