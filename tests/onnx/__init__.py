"""Tests of ferrum.onnx: loading, ops, the node suite, fusion, code generation and real models."""
