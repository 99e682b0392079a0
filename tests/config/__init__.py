"""Tests of ``@config`` and the serde forms of configs."""
