"""Training with Burn's Learner (``burn_train``): metrics, checkpoints, progress."""

from ferrum.train.output import ClassificationOutput, MultiLabelClassificationOutput, RegressionOutput

__all__ = ["ClassificationOutput", "MultiLabelClassificationOutput", "RegressionOutput"]
