"""How the Learner trains: ``TrainingStrategy`` and ``SingleDevice`` (Burn's ``TrainingStrategy``).

They live in ``ferrum.distributed.strategy``, beside ``DataParallel``, the
strategy of an MPI job; this path keeps importing them.
"""

from ferrum.distributed.strategy import SingleDevice, TrainingStrategy

__all__ = ["SingleDevice", "TrainingStrategy"]
