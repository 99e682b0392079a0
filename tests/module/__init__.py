"""Tests of the module system (ferrum.module): traversal, records, calls, declarations."""
