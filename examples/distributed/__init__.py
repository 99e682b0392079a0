"""Burn's ``examples/multi-gpus`` for CPU ranks: data-parallel training on MPI with ``ferrum.distributed``.

- ``data.py``: MNIST items (the sample ferrum ships) into flattened, normalised batches;
- ``model.py``: a two-layer perceptron, its config, and its training and validation steps;
- ``tasks.py``: the three runs: an all-reduce of weights, a hand-written data-parallel loop
  (``broadcast_module``, ``shard``, ``check_even``, ``sync_gradients``) and the Learner with
  ``DataParallel``.

Run it on two ranks (``pip install 'ferrum-dl[mpi]'`` brings ``mpiexec``), or alone::

    mpiexec -n 2 python -m examples.distributed
    python -m examples.distributed
"""
