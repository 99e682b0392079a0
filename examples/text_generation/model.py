"""model.rs: the language model, its config, and its training and validation steps.

Token and position embeddings (both learned, averaged as in Burn's example)
go through a ``TransformerEncoder`` whose attention is causal (an
autoregressive mask: position ``i`` sees positions ``<= i`` only) and does
not look at padding; a linear layer scores the next token at every position.
"""

from __future__ import annotations

from typing import TypeVar

from ferrum import D2, D3, Device, Int, Tensor, config
from ferrum.backend import Autodiff, Backend
from ferrum.module import Module
from ferrum.nn import Embedding, EmbeddingConfig, Linear, LinearConfig
from ferrum.nn.attention import generate_autoregressive_mask
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.nn.transformer import (
    TransformerEncoder,
    TransformerEncoderAutoregressiveCache,
    TransformerEncoderConfig,
    TransformerEncoderInput,
)
from ferrum.train import ClassificationOutput, TrainOutput

from .data import TrainingTextGenerationBatch

B = TypeVar("B", bound=Backend)
I = TypeVar("I", bound=Backend)  # noqa: E741 - Burn's name for the inner backend


class TextGenerationModel(Module[B]):
    transformer: TransformerEncoder[B]
    embedding_token: Embedding[B]
    embedding_pos: Embedding[B]
    output: Linear[B]
    vocab_size: int
    pad_token: int
    max_seq_length: int

    def embed(self, tokens: Tensor[B, D2, Int]) -> Tensor[B, D3]:
        """Token ids ``[batch, seq]`` to ``[batch, seq, d_model]``: token and position embeddings' mean."""
        batch_size, seq_length = tokens.dims()
        if seq_length > self.max_seq_length:
            raise ValueError(
                f"TextGenerationModel: {seq_length} tokens, the position embedding has {self.max_seq_length}"
            )
        positions: Tensor[B, D2, Int] = (
            Tensor.arange(0, seq_length, tokens.device()).reshape((1, seq_length)).repeat_dim(0, batch_size)
        )
        return (self.embedding_pos.forward(positions) + self.embedding_token.forward(tokens)) / 2.0

    def forward_training(self, item: TrainingTextGenerationBatch[B]) -> ClassificationOutput[B]:
        """Next-token scores at every position, ``[batch * seq, vocab]``, and the loss over real tokens."""
        batch_size, seq_length = item.tokens_inputs.dims()
        device = item.tokens_inputs.device()
        mask_attn = generate_autoregressive_mask(batch_size, seq_length, device)
        encoded = self.transformer.forward(
            TransformerEncoderInput(self.embed(item.tokens_inputs)).mask_pad(item.mask_pad).mask_attn(mask_attn)
        )
        output = self.output.forward(encoded).reshape((batch_size * seq_length, self.vocab_size))
        targets = item.targets.reshape((batch_size * seq_length,))
        # Padding positions are no prediction to learn: the loss leaves them out.
        loss_fn = CrossEntropyLossConfig().with_pad_tokens((self.pad_token,)).init(device)
        return ClassificationOutput(loss_fn.forward(output, targets), output, targets)

    def next_token_logits(
        self, tokens: Tensor[B, D2, Int], cache: TransformerEncoderAutoregressiveCache[B]
    ) -> Tensor[B, D2]:
        """Scores ``[batch, vocab]`` of the token after ``tokens`` ``[batch, seq]``.

        ``cache`` keeps each layer's earlier positions: called with one more token each
        time, only the newest position is computed.
        """
        batch_size, seq_length = tokens.dims()
        mask_attn = generate_autoregressive_mask(batch_size, seq_length, tokens.device())
        encoded = self.transformer.forward_autoregressive_inference(
            TransformerEncoderInput(self.embed(tokens)).mask_attn(mask_attn), cache
        )
        last = encoded.narrow(1, seq_length - 1, 1).reshape((batch_size, encoded.dims()[2]))
        return self.output.forward(last)

    # ---- training.rs

    def train_step(
        self: TextGenerationModel[Autodiff[I]], batch: TrainingTextGenerationBatch[Autodiff[I]]
    ) -> TrainOutput[ClassificationOutput[Autodiff[I]]]:
        item = self.forward_training(batch)
        return TrainOutput(self, item.loss.backward(), item)

    def inference_step(self, batch: TrainingTextGenerationBatch[B]) -> ClassificationOutput[B]:
        return self.forward_training(batch)


@config
class TextGenerationModelConfig:
    transformer: TransformerEncoderConfig
    vocab_size: int
    pad_token: int
    max_seq_length: int

    def init(self, device: Device[B]) -> TextGenerationModel[B]:
        d_model = self.transformer.d_model
        return TextGenerationModel(
            transformer=self.transformer.init(device),
            embedding_token=EmbeddingConfig(self.vocab_size, d_model).init(device),
            embedding_pos=EmbeddingConfig(self.max_seq_length, d_model).init(device),
            output=LinearConfig(d_model, self.vocab_size).init(device),
            vocab_size=self.vocab_size,
            pad_token=self.pad_token,
            max_seq_length=self.max_seq_length,
        )
