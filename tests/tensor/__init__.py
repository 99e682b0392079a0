"""Tests of tensors: creation, conversion, element-wise ops, indexing, views, reductions, printing."""
