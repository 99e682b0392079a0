"""``python -m examples.text_classification``: train a transformer classifier on generated sentences.

Options: ``--epochs N`` (default 3 of 3200 sentences: 300 steps of 32),
``--train-size N``, ``--artifact-dir DIR`` (default:
``text_classification`` in the temporary directory), ``--sample TEXT``
(repeatable: a sentence to classify, such as ``"7 7 3 1"``), ``--smoke``
(320 sentences, 2 epochs, a temporary artifact folder).
"""

from __future__ import annotations

import sys
import tempfile
import time

from ferrum.backend import Autodiff, NdArray
from ferrum.optim import AdamConfig
from ferrum.train import Split

from ..common.cli import example_parser
from .data import MAX_LEN, CountingDataset, Tokenizer
from .inference import infer
from .model import TextClassificationModelConfig
from .training import ExperimentConfig, train

DEFAULT_SAMPLES = ["7 7 3 1 5", "3 3 7 12", "1 2 4 5 6 8", "7 3 7 3 7 19 11"]


def main() -> None:
    parser = example_parser("text_classification", __doc__, epochs=3, artifact_dir=True, smoke=True)
    parser.add_argument("--train-size", type=int, default=3200)
    parser.add_argument("--sample", action="append", default=None)
    args = parser.parse_args()

    samples = args.sample or DEFAULT_SAMPLES
    try:
        for text in samples:
            Tokenizer().encode(text)
    except ValueError as err:  # checked before training, not after
        sys.exit(str(err))
    model = TextClassificationModelConfig(CountingDataset.num_classes(), Tokenizer().vocab_size(), MAX_LEN)
    cfg = ExperimentConfig(model, AdamConfig(), max_seq_length=MAX_LEN, num_epochs=args.epochs)
    train_size, test_size = args.train_size, 500
    with tempfile.TemporaryDirectory(prefix="text_classification-") as tmp:
        artifact_dir = args.artifact_dir
        if args.smoke:
            cfg = cfg.with_num_epochs(2)
            train_size, test_size, artifact_dir = 320, 128, tmp
        start = time.perf_counter()
        result = train(
            artifact_dir,
            cfg,
            CountingDataset.train(train_size),
            CountingDataset.test(test_size),
            Autodiff[NdArray].device(),
        )
        seconds = time.perf_counter() - start
        loss = result.summary.metric("Loss", Split.Train)
        accuracy = result.summary.metric("Accuracy", Split.Valid)
        print(f"train loss: epoch 1 {loss.entries[0][1]:.3f}, epoch {len(loss.entries)} {loss.last:.3f}")
        print(f"test accuracy: {accuracy.last:.1f} % on {test_size} sentences; trained in {seconds:.1f}s")
        infer(artifact_dir, NdArray.device(), samples)
        if not args.smoke:
            print(f"artifacts (logs, checkpoints, config.json, model.mpk) in {artifact_dir}")


if __name__ == "__main__":
    main()
