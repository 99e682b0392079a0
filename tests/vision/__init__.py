"""Tests of ferrum.vision: connected components, morphology and nms."""
