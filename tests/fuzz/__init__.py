"""Fuzzing the entry points that read untrusted bytes."""
