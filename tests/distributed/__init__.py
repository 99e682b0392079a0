"""Tests of ferrum.distributed on real MPI ranks."""
