"""Checkpoints: Burn's checkpointing strategies and file checkpointers, with ferrum's training state.

Example:
    >>> from ferrum.train.checkpoint import KeepLastNCheckpoints
    >>> from ferrum.train.store import MetricStore
    >>> KeepLastNCheckpoints(2).checkpointing(1, MetricStore([]))
    [CheckpointingAction.Save()]
"""

from ferrum.train.checkpoint.file import FileCheckpointer, IncompleteCheckpointError, LearningCheckpointer
from ferrum.train.checkpoint.state import TrainingState
from ferrum.train.checkpoint.strategy import (
    CheckpointingAction,
    CheckpointingStrategy,
    ComposedCheckpointingStrategy,
    ComposedCheckpointingStrategyBuilder,
    KeepLastNCheckpoints,
    MetricCheckpointingStrategy,
)

__all__ = [
    "CheckpointingAction",
    "CheckpointingStrategy",
    "ComposedCheckpointingStrategy",
    "ComposedCheckpointingStrategyBuilder",
    "FileCheckpointer",
    "IncompleteCheckpointError",
    "KeepLastNCheckpoints",
    "LearningCheckpointer",
    "MetricCheckpointingStrategy",
    "TrainingState",
]
