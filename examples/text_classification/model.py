"""model.rs: the classifier, its config, and its training and validation steps.

Token ids are embedded, given sinusoidal positions, run through a
``TransformerEncoder`` told where the padding is, mean-pooled over the real
tokens and classified. (Burn's model learns its position embeddings and
classifies the first position's output.)
"""

from __future__ import annotations

from typing import TypeVar

from ferrum import D2, D3, Bool, Device, Int, Tensor, config
from ferrum.activation import softmax
from ferrum.backend import Autodiff, Backend
from ferrum.module import Module
from ferrum.nn import (
    Embedding,
    EmbeddingConfig,
    Linear,
    LinearConfig,
    PositionalEncoding,
    PositionalEncodingConfig,
)
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.nn.transformer import TransformerEncoder, TransformerEncoderConfig, TransformerEncoderInput
from ferrum.train import ClassificationOutput, TrainOutput

from .data import TextClassificationInferenceBatch, TextClassificationTrainingBatch

B = TypeVar("B", bound=Backend)
I = TypeVar("I", bound=Backend)  # noqa: E741 - Burn's name for the inner backend


class TextClassificationModel(Module[B]):
    embedding: Embedding[B]
    positions: PositionalEncoding[B]
    encoder: TransformerEncoder[B]
    output: Linear[B]

    def forward(self, tokens: Tensor[B, D2, Int], mask_pad: Tensor[B, D2, Bool]) -> Tensor[B, D2]:
        """``[batch, seq]`` token ids and their padding mask -> ``[batch, n_classes]`` logits."""
        x: Tensor[B, D3] = self.positions.forward(self.embedding.forward(tokens))
        x = self.encoder.forward(TransformerEncoderInput(x).mask_pad(mask_pad))
        # Mean over the real tokens only: padding gets weight 0. The weights take the activations'
        # dtype, so the model also trains in bf16/f16 (ferrum does not promote mixed float dtypes).
        keep: Tensor[B, D3] = mask_pad.bool_not().float().cast(x.dtype).unsqueeze_dim(2)
        pooled: Tensor[B, D2] = (x * keep).sum_dim(1).squeeze_dim(1) / keep.sum_dim(1).squeeze_dim(1)
        return self.output.forward(pooled)

    def forward_classification(self, item: TextClassificationTrainingBatch[B]) -> ClassificationOutput[B]:
        output = self.forward(item.tokens, item.mask_pad)
        loss = CrossEntropyLossConfig().init(output.device()).forward(output, item.labels)
        return ClassificationOutput(loss, output, item.labels)

    def infer(self, item: TextClassificationInferenceBatch[B]) -> Tensor[B, D2]:
        """Class probabilities ``[batch, n_classes]``."""
        return softmax(self.forward(item.tokens, item.mask_pad), 1)

    # ---- training.rs

    def train_step(
        self: TextClassificationModel[Autodiff[I]], batch: TextClassificationTrainingBatch[Autodiff[I]]
    ) -> TrainOutput[ClassificationOutput[Autodiff[I]]]:
        item = self.forward_classification(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def inference_step(self, batch: TextClassificationTrainingBatch[B]) -> ClassificationOutput[B]:
        return self.forward_classification(batch)


@config
class TextClassificationModelConfig:
    n_classes: int
    vocab_size: int
    max_seq_length: int
    d_model: int = 32
    d_ff: int = 64
    n_heads: int = 4
    n_layers: int = 2

    def init(self, device: Device[B]) -> TextClassificationModel[B]:
        return TextClassificationModel(
            embedding=EmbeddingConfig(self.vocab_size, self.d_model).init(device),
            positions=PositionalEncodingConfig(self.d_model)
            .with_max_sequence_size(self.max_seq_length)
            .init(device),
            encoder=TransformerEncoderConfig(self.d_model, self.d_ff, self.n_heads, self.n_layers)
            .with_dropout(0.0)
            .init(device),
            output=LinearConfig(self.d_model, self.n_classes).init(device),
        )
