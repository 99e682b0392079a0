"""Helpers shared by the test areas (import as ``from tests.support.<module> import ...``)."""
