"""Tests of ferrum.data: datasets, SQLite datasets, MNIST and the data loader."""
