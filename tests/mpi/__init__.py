"""Scripts that tests/test_distributed.py runs under mpiexec (not collected by pytest)."""
