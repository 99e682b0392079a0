"""``python -m examples.text_generation``: train a character-level transformer on Shakespeare, then write.

Options: ``--text PATH`` (default: ``coriolanus.txt`` beside this file; any
UTF-8 play text, speeches separated by blank lines), ``--artifact-dir DIR``
(default: ``text_generation`` in the temporary directory), ``--epochs N``
(default 3), ``--prompt TEXT`` (repeatable; default two speakers' names),
``--max-new N`` (characters to write, default 200), ``--temperature T``
(default 0.8; 0 for the likeliest character each time), ``--smoke`` (a tiny
model, 2 epochs of 128 passages, a temporary artifact folder).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from ferrum.backend import Autodiff, NdArray
from ferrum.data.dataset import InMemDataset
from ferrum.nn.transformer import TransformerEncoderConfig
from ferrum.optim import AdamConfig
from ferrum.train import Split

from ..common.cli import example_parser
from .data import DEFAULT_TEXT, CharTokenizer, read_passages, split_passages
from .inference import generate
from .training import ExperimentConfig, train

DEFAULT_PROMPTS = ["MENENIUS:\n", "CORIOLANUS:\nI "]


def main() -> None:
    parser = example_parser("text_generation", __doc__, epochs=3, artifact_dir=True, smoke=True)
    parser.add_argument("--text", type=Path, default=DEFAULT_TEXT)
    parser.add_argument("--prompt", action="append", default=None)
    parser.add_argument("--max-new", type=int, default=200)
    parser.add_argument("--temperature", type=float, default=0.8)
    args = parser.parse_args()

    if not args.text.is_file():
        sys.exit(f"{args.text}: no such file; give --text a UTF-8 text, passages separated by blank lines")
    cfg = ExperimentConfig(
        # Burn's: TransformerEncoderConfig(384, 1536, 12, 6) with norm_first; smaller to train on a CPU.
        TransformerEncoderConfig(128, 512, 4, 3).with_norm_first(True).with_dropout(0.1),
        AdamConfig(),
        CharTokenizer.of_text(args.text).alphabet,
        num_epochs=args.epochs,
    )
    max_new = args.max_new
    prompts = args.prompt or DEFAULT_PROMPTS
    try:  # checked before training, not after
        for prompt in prompts:
            CharTokenizer(cfg.alphabet).encode(prompt, False)
    except ValueError as err:
        sys.exit(str(err))
    with tempfile.TemporaryDirectory(prefix="text_generation-") as tmp:
        artifact_dir = args.artifact_dir
        if args.smoke:
            cfg = ExperimentConfig(
                TransformerEncoderConfig(32, 64, 2, 1).with_norm_first(True).with_dropout(0.0),
                AdamConfig(),
                cfg.alphabet,
                max_seq_length=64,
                batch_size=16,
                num_epochs=2,
                grads_accumulation=1,
                items_per_epoch=128,
                warmup_steps=4,
                lr_factor=0.15,
                num_workers=0,
            )
            artifact_dir, max_new = tmp, min(max_new, 40)
        try:
            passages = read_passages(args.text, cfg.max_seq_length - 2)
        except (ValueError, UnicodeDecodeError) as err:
            sys.exit(f"{args.text}: {err}")
        train_data, test_data = split_passages(passages, 0.1)
        print(
            f"{len(passages)} passages of at most {cfg.max_seq_length - 2} characters "
            f"({train_data.len()} train, {test_data.len()} test), "
            f"{len(cfg.alphabet)} characters + 3 special tokens"
        )
        if args.smoke:
            test_data = InMemDataset(list(test_data)[:32])  # the validation of a few batches only

        start = time.perf_counter()
        result = train(artifact_dir, cfg, train_data, test_data, Autodiff[NdArray].device())
        seconds = time.perf_counter() - start
        for name, split in (("train", Split.Train), ("valid", Split.Valid)):
            loss = result.summary.metric("Loss", split)
            accuracy = result.summary.metric("Accuracy", split)
            perplexity = result.summary.metric("Perplexity", split)
            print(
                f"{name}: loss {loss.entries[0][1]:.3f} -> {loss.last:.3f}, "
                f"perplexity {perplexity.last:.2f}, "
                f"next-character accuracy {accuracy.last:.1f} % after {len(loss.entries)} epochs"
            )
        print(f"trained in {seconds:.1f}s")
        try:
            generate(artifact_dir, NdArray.device(), prompts, max_new, args.temperature)
        except ValueError as err:  # a prompt longer than the model reads
            sys.exit(str(err))
        if not args.smoke:
            print(f"artifacts (logs, checkpoints, config.json, model.mpk) in {artifact_dir}")


if __name__ == "__main__":
    main()
