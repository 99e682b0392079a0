"""training.rs: the experiment config and ``train``: the Learner with a Noam schedule and
gradient accumulation, accuracy and perplexity over real tokens (padding left out)."""

from __future__ import annotations

import os

from ferrum import Device, config
from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataloader import DataLoaderBuilder
from ferrum.data.dataset import Dataset, SamplerDataset
from ferrum.lr_scheduler import NoamLrSchedulerConfig
from ferrum.nn.transformer import TransformerEncoderConfig
from ferrum.optim import AdamConfig
from ferrum.record import CompactRecorder
from ferrum.train import Learner, LearningResult, SupervisedTraining
from ferrum.train.metric import AccuracyMetric, LearningRateMetric, LossMetric, PerplexityMetric

from ..guide.training import create_artifact_dir
from .data import CharTokenizer, TextGenerationBatcher, TextGenerationItem
from .model import TextGenerationModel, TextGenerationModelConfig

TrainB = Autodiff[NdArray]


@config
class ExperimentConfig:
    transformer: TransformerEncoderConfig
    optimizer: AdamConfig
    alphabet: str  # the tokenizer's characters: inference rebuilds the same tokenizer
    max_seq_length: int = 128  # tokens of a passage, [START] and [END] included
    batch_size: int = 16
    num_epochs: int = 3
    grads_accumulation: int = 2  # an optimizer step every 2 batches: 32 passages per step
    items_per_epoch: int = 2000  # passages drawn (with replacement) per training epoch, as Burn samples
    lr_factor: float = 1.0
    warmup_steps: int = 100
    num_workers: int = 2
    seed: int = 42


def train(
    artifact_dir: str,
    cfg: ExperimentConfig,
    dataset_train: Dataset[TextGenerationItem],
    dataset_test: Dataset[TextGenerationItem],
    device: Device[TrainB],
) -> LearningResult[TextGenerationModel[NdArray]]:
    """Train the model; ``artifact_dir`` gets the logs, checkpoints, ``config.json`` and ``model.mpk``."""
    create_artifact_dir(artifact_dir)
    TrainB.seed(cfg.seed)
    tokenizer = CharTokenizer(cfg.alphabet)
    batcher = TextGenerationBatcher(tokenizer, cfg.max_seq_length)
    model = TextGenerationModelConfig(
        cfg.transformer, tokenizer.vocab_size(), tokenizer.pad_token(), cfg.max_seq_length
    ).init(device)

    dataloader_train = (
        DataLoaderBuilder(batcher)
        .batch_size(cfg.batch_size)
        .num_workers(cfg.num_workers)
        .build(SamplerDataset(dataset_train, cfg.items_per_epoch, seed=cfg.seed))
    )
    dataloader_test = (
        DataLoaderBuilder(batcher).batch_size(cfg.batch_size).num_workers(cfg.num_workers).build(dataset_test)
    )
    lr_scheduler = (
        NoamLrSchedulerConfig(cfg.lr_factor)
        .with_warmup_steps(cfg.warmup_steps)
        .with_model_size(cfg.transformer.d_model)
        .init()
    )
    pad = tokenizer.pad_token()
    training = (
        SupervisedTraining(artifact_dir, dataloader_train, dataloader_test)
        .metric_train_numeric(AccuracyMetric().with_pad_token(pad))
        .metric_valid_numeric(AccuracyMetric().with_pad_token(pad))
        .metric_train_numeric(PerplexityMetric().with_pad_token(pad))
        .metric_valid_numeric(PerplexityMetric().with_pad_token(pad))
        .metric_train(LossMetric())
        .metric_valid(LossMetric())
        .metric_train_numeric(LearningRateMetric())
        .with_file_checkpointer(CompactRecorder())
        .grads_accumulation(cfg.grads_accumulation)
        .num_epochs(cfg.num_epochs)
        .summary()
    )
    result = training.launch(Learner(model, cfg.optimizer.init(), lr_scheduler))
    cfg.save(os.path.join(artifact_dir, "config.json"))
    result.model.save_file(os.path.join(artifact_dir, "model"), CompactRecorder())
    return result
