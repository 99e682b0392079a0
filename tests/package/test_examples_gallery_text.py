"""The text and distributed gallery examples (examples/text_generation, text_classification, distributed)
run in their ``--smoke`` settings and say what they should; the distributed one also on two MPI ranks.

Each runs as a user runs it, ``python -m examples.<name> --smoke`` from the repository root.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from examples.text_generation.data import (
    CharTokenizer,
    TextGenerationBatcher,
    TextGenerationItem,
    read_passages,
)
from tests.support.examples_run import floats, run, smoke
from tests.support.mpi import MPIEXEC, WHY

# ------------------------------------------------------------------ text_generation


def test_text_generation_tokenizer_round_trips_with_special_tokens() -> None:
    tokenizer = CharTokenizer(" :ACabc\n")
    ids = tokenizer.encode("Ab:\nca", True)
    # Ids are positions in the alphabet; [START], [END], [PAD] follow it.
    assert ids == [8, 2, 5, 1, 7, 6, 4, 9]
    assert tokenizer.decode(ids) == "[START]Ab:\nca[END]"
    assert (tokenizer.vocab_size(), tokenizer.pad_token()) == (11, 10)
    with pytest.raises(ValueError, match=r"'Z' not in the alphabet"):
        tokenizer.encode("AZ", False)


def test_text_generation_batches_shift_targets_by_one() -> None:
    from ferrum.backend import NdArray

    tokenizer = CharTokenizer("abc")  # a=0 b=1 c=2, [START]=3 [END]=4 [PAD]=5
    batch = TextGenerationBatcher(tokenizer, 6).batch(
        [TextGenerationItem("abc"), TextGenerationItem("c")], NdArray.device()
    )
    # [START] a b c [END] and [START] c [END] padded; inputs drop the last, targets the first.
    assert batch.tokens_inputs.to_data().to_list() == [[3, 0, 1, 2], [3, 2, 4, 5]]
    assert batch.targets.to_data().to_list() == [[0, 1, 2, 4], [2, 4, 5, 5]]
    assert batch.mask_pad.to_data().to_list() == [[False] * 4, [False, False, False, True]]


def test_text_generation_passages_fit_and_keep_the_speaker(tmp_path: Path) -> None:
    play = tmp_path / "play.txt"
    play.write_text("ALL:\nSpeak, speak.\n\nFIRST:\nOne line here.\nTwo lines here.\nThree.\n")
    passages = read_passages(play, 24)
    # A speech cut in three: each piece repeats the speaker.
    assert passages == [
        "ALL:\nSpeak, speak.", "FIRST:\nOne line here.", "FIRST:\nTwo lines here.", "FIRST:\nThree."
    ]
    assert all(len(p) <= 24 for p in passages)


def test_text_generation_trains_and_writes() -> None:
    out = smoke("text_generation")
    [(count, longest, train, test, chars)] = floats(
        r"(\d+) passages of at most (\d+) characters \((\d+) train, (\d+) test\), (\d+) characters", out
    )
    assert longest == 62 and train + test == count and test == round(count / 10) and chars == 61
    [(first, last, perplexity, accuracy)] = floats(
        r"train: loss ([\d.]+) -> ([\d.]+), perplexity ([\d.]+), next-character accuracy ([\d.]+) %", out
    )
    assert last < first and math.isfinite(perplexity) and 0 < accuracy < 100
    # Two prompts, each continued by at most 40 characters of the text's alphabet.
    samples = re.findall(r"=== Sample (\d) \(prompt '([^']*)'\) ===\n(.*?)\n\n", out, re.S)
    assert [s[0] for s in samples] == ["0", "1"]
    for _, prompt, text in samples:
        prompt = prompt.replace("\\n", "\n")
        assert text.startswith(prompt) and len(text) <= len(prompt) + 40
        assert "[" not in text[len(prompt):]  # no special token is written out


def test_text_generation_names_an_unknown_prompt_character() -> None:
    done = run("examples.text_generation", "--smoke", "--prompt", "ZOË:")
    assert done.returncode == 1 and "passages" not in done.stdout  # refused before training
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("CharTokenizer: 'ZË' not in the alphabet of the training text (61 characters: ")


def test_text_generation_names_a_missing_text(tmp_path: Path) -> None:
    done = run("examples.text_generation", "--text", str(tmp_path / "none.txt"))
    assert done.returncode == 1
    assert done.stderr.strip() == f"{tmp_path / 'none.txt'}: no such file; give --text a UTF-8 text, " \
        "passages separated by blank lines"


# ------------------------------------------------------------------ text_classification


def test_text_classification_trains_and_classifies() -> None:
    out = smoke("text_classification")
    [(first, last)] = floats(r"train loss: epoch 1 ([\d.]+), epoch 2 ([\d.]+)", out)
    assert last < first
    [(accuracy,)] = floats(r"test accuracy: ([\d.]+) % on 128 sentences", out)
    assert 50 < accuracy <= 100
    items = floats(r"=== Item (\d) === '[\d ]+': probabilities \[([\d.]+), ([\d.]+)\] -> ", out)
    assert [int(i[0]) for i in items] == [0, 1, 2, 3]
    assert all(abs(p0 + p1 - 1) < 2e-3 for _, p0, p1 in items)


def test_text_classification_rejects_a_bad_sample_before_training() -> None:
    done = run("examples.text_classification", "--sample", "7 x 3")
    assert done.returncode == 1
    assert done.stderr.strip() == "Tokenizer: 'x' in '7 x 3' is no token; tokens are 1 to 19"


# ------------------------------------------------------------------ distributed

FINAL = r"(custom loop|Learner):\s+train loss ([\d.]+) -> ([\d.]+), test accuracy ([\d.]+) %"


def finals(out: str) -> list[tuple[str, float, float, float]]:
    return [(m[0], float(m[1]), float(m[2]), float(m[3])) for m in re.findall(FINAL, out)]


def test_distributed_runs_as_one_process() -> None:
    out = smoke("distributed")
    assert re.search(r"\[rank 0/1\] host \S+, pid \d+", out)
    [(worst,)] = floats(r"largest relative difference from NumPy ([\d.e+-]+)", out)
    assert worst < 1e-5
    results = finals(out)
    assert [r[0] for r in results] == ["custom loop", "Learner"]
    assert all(last < first and 20 < acc <= 100 for _, first, last, acc in results)
    # The same seeds, batches and steps: the Learner's run is the hand-written loop's.
    assert results[0][1:] == results[1][1:]


@pytest.mark.skipif(MPIEXEC is None, reason=WHY)
def test_distributed_on_two_ranks_equals_one_process() -> None:
    done = run("examples.distributed", "--smoke", ranks=2)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    out = done.stdout
    for rank in (0, 1):
        assert re.search(rf"(?m)^\[rank {rank}/2\] host \S+, pid \d+, engine threads: 1$", out), out
        assert f"[rank {rank}/2] custom loop: 8 batches of 32 per epoch" in out
    differences = floats(r"largest relative difference from NumPy ([\d.e+-]+)", out)
    assert len(differences) == 2 and all(d < 1e-5 for (d,) in differences)
    # Every rank ends with the same parameters, in both runs.
    checksum = r"\[rank (\d)/2\] (custom loop|Learner): trained in [\d.]+s; parameter checksum ([\d.]+)"
    sums = re.findall(checksum, out)
    assert sorted((kind, rank) for rank, kind, _ in sums) == [
        ("Learner", "0"), ("Learner", "1"), ("custom loop", "0"), ("custom loop", "1")
    ]
    assert len({value for _, kind, value in sums if kind == "Learner"}) == 1
    assert len({value for _, kind, value in sums if kind == "custom loop"}) == 1
    # Gradients averaged over two half batches are the gradient of the whole batch: the
    # metrics are one process's, to the printed digits.
    alone = finals(smoke("distributed"))
    two = finals(out)
    assert [r[0] for r in two] == ["custom loop", "Learner"]
    for (_, *a), (_, *b) in zip(alone, two, strict=True):
        assert a == pytest.approx(b, abs=2e-4)
