"""Tests of autodiff: the API, gradients against finite differences and torch, memory."""
