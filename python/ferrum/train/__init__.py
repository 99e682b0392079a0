"""Training with Burn's Learner (``burn_train``): metrics, checkpoints, progress, plots.

Configure a run with ``SupervisedTraining`` (data loaders, metrics,
checkpointing, epochs, early stopping) and ``launch`` it with a
``Learner(model, optimizer, lr)``. The model defines ``train_step(batch)``
(returning a ``TrainOutput``) and ``inference_step(batch)``; its outputs
(``ClassificationOutput``, ``RegressionOutput``, ...) feed the metrics of
``ferrum.train.metric``. ``EvaluatorBuilder(...).build(model).eval(name, loader)``
measures a trained model on a test set (Burn's evaluator). ``examples/guide``
is the Burn Book guide in full. ``with_precision(Precision.BF16_MIXED)`` trains in
bf16 mixed precision with f32 master weights (``ferrum.train.precision``).

Example:
    >>> from ferrum.train import SupervisedTraining, Learner, Split, Direction
    >>> Split.Valid.value, Direction.Lowest.better(0.1, 0.2)
    ('valid', True)
"""

from ferrum.train.checkpoint import (
    CheckpointingAction,
    CheckpointingStrategy,
    ComposedCheckpointingStrategy,
    ComposedCheckpointingStrategyBuilder,
    FileCheckpointer,
    IncompleteCheckpointError,
    KeepLastNCheckpoints,
    MetricCheckpointingStrategy,
)
from ferrum.train.early_stopping import EarlyStoppingStrategy, MetricEarlyStoppingStrategy, StoppingCondition
from ferrum.train.evaluator import EvaluationResult, EvaluationSummary, Evaluator, EvaluatorBuilder
from ferrum.train.interrupter import Interrupter
from ferrum.train.learner import Learner, LearningResult
from ferrum.train.logger import FileMetricLogger, InMemoryMetricLogger, MetricLogger
from ferrum.train.loss_scale import GradScaler
from ferrum.train.output import ClassificationOutput, MultiLabelClassificationOutput, RegressionOutput
from ferrum.train.precision import MixedPrecision, Precision, scale_loss
from ferrum.train.renderer import MetricsRenderer, MetricState, PlainRenderer, TrainingProgress
from ferrum.train.step import InferenceStep, TrainOutput, TrainStep
from ferrum.train.store import Aggregate, Direction, MetricStore, Split
from ferrum.train.strategy import SingleDevice, TrainingStrategy
from ferrum.train.summary import LearnerSummary, MetricSummary
from ferrum.train.supervised import SupervisedTraining, TrainingTerminated
from ferrum.train.tensorboard import TensorBoardLogger

__all__ = [
    "Aggregate",
    "CheckpointingAction",
    "CheckpointingStrategy",
    "ClassificationOutput",
    "ComposedCheckpointingStrategy",
    "ComposedCheckpointingStrategyBuilder",
    "Direction",
    "EarlyStoppingStrategy",
    "EvaluationResult",
    "EvaluationSummary",
    "Evaluator",
    "EvaluatorBuilder",
    "FileCheckpointer",
    "FileMetricLogger",
    "GradScaler",
    "InMemoryMetricLogger",
    "IncompleteCheckpointError",
    "InferenceStep",
    "Interrupter",
    "KeepLastNCheckpoints",
    "Learner",
    "LearnerSummary",
    "LearningResult",
    "MetricCheckpointingStrategy",
    "MetricEarlyStoppingStrategy",
    "MetricLogger",
    "MetricState",
    "MetricStore",
    "MetricSummary",
    "MetricsRenderer",
    "MixedPrecision",
    "MultiLabelClassificationOutput",
    "PlainRenderer",
    "Precision",
    "RegressionOutput",
    "SingleDevice",
    "Split",
    "StoppingCondition",
    "SupervisedTraining",
    "TensorBoardLogger",
    "TrainOutput",
    "TrainStep",
    "TrainingProgress",
    "TrainingStrategy",
    "TrainingTerminated",
    "scale_loss",
]
