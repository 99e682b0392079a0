"""Text classification with a transformer encoder, in the spirit of Burn's
`examples/text-classification`: token ids are embedded, given positions, run
through a `TransformerEncoder` with a padding mask, mean-pooled over the real
tokens and classified.

The data is generated: sentences of 3 to 12 tokens over a vocabulary of 20,
labelled 1 when the token "7" occurs more often than the token "3". Sentences
of one batch have different lengths, so the batch is padded with token 0 and
the encoder is told where the padding is.

Run with `python examples/text_classification.py` (about half a minute on one core).
"""

from __future__ import annotations

import random
from typing import TypeVar

from ferrum import D1, D2, D3, Bool, Device, Float, Int, Tensor, config
from ferrum.backend import Autodiff, Backend, NdArray
from ferrum.module import Module
from ferrum.nn import (
    Embedding,
    EmbeddingConfig,
    Linear,
    LinearConfig,
    PositionalEncoding,
    PositionalEncodingConfig,
)
from ferrum.nn.attention import generate_padding_mask
from ferrum.nn.loss import CrossEntropyLossConfig
from ferrum.nn.transformer import TransformerEncoder, TransformerEncoderConfig, TransformerEncoderInput
from ferrum.optim import AdamConfig, GradientsParams

B = TypeVar("B", bound=Backend)
TrainB = Autodiff[NdArray]

PAD, VOCAB, MAX_LEN = 0, 20, 12


class TextClassifier(Module[B]):
    embedding: Embedding[B]
    positions: PositionalEncoding[B]
    encoder: TransformerEncoder[B]
    output: Linear[B]

    def forward(self, tokens: Tensor[B, D2, Int], mask_pad: Tensor[B, D2, Bool]) -> Tensor[B, D2]:
        """``[batch, seq]`` token ids and their padding mask -> ``[batch, 2]`` logits."""
        x: Tensor[B, D3] = self.positions.forward(self.embedding.forward(tokens))
        x = self.encoder.forward(TransformerEncoderInput(x).mask_pad(mask_pad))
        # Mean over the real tokens only: padding gets weight 0.
        keep: Tensor[B, D3] = mask_pad.bool_not().float().unsqueeze_dim(2)
        pooled: Tensor[B, D2] = (x * keep).sum_dim(1).squeeze_dim(1) / keep.sum_dim(1).squeeze_dim(1)
        return self.output.forward(pooled)


@config
class TextClassifierConfig:
    d_model: int = 32
    d_ff: int = 64
    n_heads: int = 4
    n_layers: int = 2

    def init(self, device: Device[B]) -> TextClassifier[B]:
        return TextClassifier(
            embedding=EmbeddingConfig(VOCAB, self.d_model).init(device),
            positions=PositionalEncodingConfig(self.d_model).with_max_sequence_size(MAX_LEN).init(device),
            encoder=TransformerEncoderConfig(self.d_model, self.d_ff, self.n_heads, self.n_layers)
            .with_dropout(0.0)
            .init(device),
            output=LinearConfig(self.d_model, 2).init(device),
        )


def sentence(rng: random.Random) -> tuple[list[int], int]:
    tokens = [rng.randrange(1, VOCAB) for _ in range(rng.randint(3, MAX_LEN))]
    return tokens, int(tokens.count(7) > tokens.count(3))


def batch(
    items: list[tuple[list[int], int]], device: Device[B]
) -> tuple[Tensor[B, D2, Int], Tensor[B, D2, Bool], Tensor[B, D1, Int]]:
    padded = generate_padding_mask(PAD, [tokens for tokens, _ in items], MAX_LEN, device)
    labels: Tensor[B, D1, Int] = Tensor.from_ints([label for _, label in items], device)
    return padded.tensor, padded.mask, labels


def accuracy(model: TextClassifier[NdArray], items: list[tuple[list[int], int]]) -> float:
    tokens, mask, labels = batch(items, NdArray.device())
    predicted = model.forward(tokens, mask).argmax(1).squeeze_dim(1)
    correct: Tensor[NdArray, D1, Float] = predicted.equal(labels).float()
    return correct.mean().into_scalar()


def main(steps: int = 300, batch_size: int = 32) -> float:
    """Train for ``steps`` batches; the accuracy on 500 fresh sentences."""
    TrainB.seed(0)
    rng = random.Random(0)
    device = TrainB.device()
    model = TextClassifierConfig().init(device)
    optim = AdamConfig().init()
    loss_fn = CrossEntropyLossConfig().init(device)
    for step in range(1, steps + 1):
        tokens, mask, labels = batch([sentence(rng) for _ in range(batch_size)], device)
        loss = loss_fn.forward(model.forward(tokens, mask), labels)
        grads = GradientsParams.from_grads(loss.backward(), model)
        model = optim.step(1e-3, model, grads)
        if step % 50 == 0:
            print(f"step {step}: loss {loss.into_scalar():.3f}")
    test = [sentence(random.Random(1000 + i)) for i in range(500)]
    result = accuracy(model.valid(), test)
    print(f"test accuracy: {result:.1%}")
    return result


if __name__ == "__main__":
    main()
