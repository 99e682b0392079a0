"""Scripts that tests/distributed/test_mpi.py runs under mpiexec (not collected by pytest)."""
