"""Tests of ferrum.record: the recorders, their file formats and hostile files."""
