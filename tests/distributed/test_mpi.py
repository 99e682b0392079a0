"""ferrum.distributed on real MPI ranks: collectives, data-parallel training equal to one process, failures.

The multi-rank checks run the scripts in tests/distributed/mpi/ under ``mpiexec`` (from
the ``mpich`` wheel the test extra installs); sharding and the single-rank
communicator are checked in this process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from ferrum.data.dataloader import Batcher, DataLoaderBuilder, Shard
from ferrum.data.dataset import InMemDataset

from tests.support.mpi import MPIEXEC, WHY, needs_mpi

ROOT = Path(__file__).resolve().parents[2]


def run(ranks: int, *args: str, timeout: float = 180) -> tuple[subprocess.CompletedProcess[str], float]:
    """``python -m <args>`` on ``ranks`` MPI ranks, from the repository root; the result and its duration."""
    assert MPIEXEC is not None
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.monotonic()
    done = subprocess.run(
        [MPIEXEC, "-n", str(ranks), sys.executable, "-m", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
    )
    return done, time.monotonic() - start


# ------------------------------------------------------------------ sharding (no MPI)


class AsList(Batcher[int, list[int]]):
    def batch(self, items: list[int]) -> list[int]:
        return items


@pytest.mark.parametrize(
    ("size", "world", "drop_last"), [(10, 2, False), (11, 3, False), (11, 3, True), (5, 5, False)]
)
def test_shards_deal_out_each_epoch(size: int, world: int, drop_last: bool) -> None:
    builder = DataLoaderBuilder(AsList()).batch_size(2).shuffle(3)
    data = InMemDataset(list(range(size)))
    whole = [i for batch in builder.build(data) for i in batch]
    shards = [
        [i for batch in builder.shard(rank, world, drop_last=drop_last).build(data) for i in batch]
        for rank in range(world)
    ]
    share = size // world if drop_last else -(-size // world)
    assert all(len(shard) == share for shard in shards)
    # Position k of the epoch's order goes to rank k % world: the shuffled order is shared.
    padded = (whole * 2)[: share * world]
    assert [padded[rank::world] for rank in range(world)] == shards
    assert set(whole) == {i for shard in shards for i in shard} or drop_last


def test_shard_counts_and_errors() -> None:
    loader = DataLoaderBuilder(AsList()).batch_size(4).build(InMemDataset(list(range(10))))
    sharded = loader.shard(1, 3)
    assert (sharded.num_items(), len(sharded), sharded.sharding) == (4, 1, Shard(1, 3))
    assert "shard=1/3" in repr(sharded)
    with pytest.raises(ValueError, match="rank 3 of 3"):
        loader.shard(3, 3)
    with pytest.raises(TypeError, match="world_size must be an int"):
        loader.shard(0, 2.0)  # type: ignore[arg-type]


def test_one_rank_communicator_is_the_identity() -> None:
    pytest.importorskip("mpi4py", reason=WHY)
    from ferrum import Tensor
    from ferrum.backend import NdArray
    from ferrum.distributed import Communicator, ReduceOp

    comm = Communicator(abort_on_uncaught=False)
    t = Tensor.from_numpy(np.array([1.0, -2.0], np.float32), NdArray.device())
    if comm.size != 1:
        pytest.skip("pytest itself runs under mpiexec")
    for op in ReduceOp:
        np.testing.assert_array_equal(comm.all_reduce(t, op).to_numpy(), [1.0, -2.0])
    with pytest.raises(TypeError, match="MEAN needs a Float tensor"):
        comm.all_reduce(Tensor.from_numpy(np.array([1]), NdArray.device()), ReduceOp.MEAN)
    with pytest.raises(ValueError, match="root must be a rank"):
        comm.broadcast(t, root=1)
    with pytest.raises(TypeError, match="needs a ferrum Tensor"):
        comm.all_reduce(np.zeros(2))  # type: ignore[type-var]


def test_uneven_and_mismatch_errors_name_every_rank() -> None:
    from ferrum.distributed import DistributedError, GradientMismatchError, UnevenRanksError

    uneven = UnevenRanksError([3, 2, 3], "shard one dataset")
    assert isinstance(uneven, DistributedError) and uneven.on_every_rank
    assert uneven.counts == (3, 2, 3)
    assert "(rank 0: 3, rank 1: 2, rank 2: 3)" in str(uneven)
    assert "expected every rank to hold rank 0's 3, found rank 1 with 2;" in str(uneven)
    assert "gradients by rank: rank 0: 4, rank 1: 3" in str(GradientMismatchError([4, 3], "hint"))
    assert "each rank holds 4, of parameters whose ids" in str(GradientMismatchError([4, 4], "hint"))


@pytest.mark.parametrize(
    ("learner", "hint"), [(False, "broadcast the module"), (True, "the Learner broadcast")]
)
def test_the_mismatch_hint_fits_the_caller(learner: bool, hint: str) -> None:
    # A custom loop is told to broadcast the module; the Learner did, so its users are told what else differs.
    from ferrum.backend import NdArray
    from ferrum.distributed import GradientMismatchError
    from ferrum.distributed.gradients import sync_gradients
    from ferrum.nn import LinearConfig
    from ferrum.optim import GradientsParams

    class TwoRanks:  # what the all-gather of two ranks with different gradients returns
        size = 2

        def all_gather_ints(self, values: list[int], what: str) -> list[list[int]]:
            return [values, [values[0] - 1, values[1]]]

    model = LinearConfig(2, 1).init(NdArray.device())
    grads = GradientsParams()
    for param in model.parameters():
        grads.register(param.id, param.val())
    with pytest.raises(GradientMismatchError, match=f"rank 0: 2, rank 1: 1\\); {hint}"):
        sync_gradients(TwoRanks(), grads, 25.0, learner=learner)  # type: ignore[arg-type]


# ------------------------------------------------------------------ on MPI ranks


@needs_mpi
@pytest.mark.parametrize("ranks", [2, 3])
def test_collectives(ranks: int) -> None:
    done, _ = run(ranks, "tests.distributed.mpi.collectives")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ok {ranks} ranks", done.stdout


@pytest.fixture(scope="module")
def single_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One process, batch 64: the reference each data-parallel run must reproduce."""
    if MPIEXEC is None:
        pytest.skip(WHY)
    out = tmp_path_factory.mktemp("single")
    paths = {}
    for model in ("mlp", "cnn"):
        paths[model] = out / f"{model}.npz"
        subprocess.run(
            [sys.executable, "-m", "tests.distributed.mpi.equivalence", "single", model, str(paths[model])],
            check=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=180,
        )
    return paths


@needs_mpi
@pytest.mark.parametrize("model", ["mlp", "cnn"])
@pytest.mark.parametrize("mode", ["ddp", "learner"])
def test_two_ranks_train_as_one_process_with_twice_the_batch(
    mode: str, model: str, single_runs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "ranks.npz"
    done, _ = run(2, "tests.distributed.mpi.equivalence", mode, model, str(out))
    assert done.returncode == 0, done.stderr
    single, ranks = np.load(single_runs[model]), np.load(out)
    assert sorted(single.files) == sorted(ranks.files)
    for name in single.files:
        np.testing.assert_allclose(ranks[name], single[name], atol=1e-5, rtol=0, err_msg=name)
    # The weights are far larger than the tolerance: the comparison means something.
    assert max(float(np.abs(single[name]).max()) for name in single.files) > 1e-2


@needs_mpi
def test_a_rank_that_raises_stops_the_others_with_its_name() -> None:
    done, took = run(2, "tests.distributed.mpi.failure", "raise", timeout=120)
    assert done.returncode != 0
    assert "ValueError: a bad batch on rank 1" in done.stderr
    assert "RankFailedError: rank 1 failed (ValueError: a bad batch on rank 1)" in done.stderr, done.stderr
    assert "finished without noticing" not in done.stdout
    assert took < 60, took


@needs_mpi
@pytest.mark.parametrize(("mode", "counts"), [("learner", (3, 2)), ("loop", (6, 3))])
def test_ranks_with_uneven_batches_fail_at_once_naming_each_count(mode: str, counts: tuple[int, int]) -> None:
    # Without the check, the Learner failed after 11 s blaming a non-finite loss or unbroadcast
    # parameters, and a custom loop's rank 0 waited in sync_gradients for the collective timeout.
    done, took = run(2, "tests.distributed.mpi.uneven", mode, timeout=120)
    assert done.returncode != 0
    assert "finished without noticing" not in done.stdout
    named = f"UnevenRanksError: the ranks hold different numbers of batches this epoch (rank 0: {counts[0]}, "
    named += f"rank 1: {counts[1]})"
    assert done.stderr.count(named) == 2, done.stderr  # raised on both ranks, before any step
    assert "RankFailedError" not in done.stderr and "not finite" not in done.stderr, done.stderr
    hint = (
        "give every rank the same training dataset" if mode == "learner" else ".shard(comm.rank, comm.size)"
    )
    assert hint in done.stderr, done.stderr
    assert took < 30, took


@needs_mpi
def test_a_rank_that_dies_ends_the_job() -> None:
    done, took = run(2, "tests.distributed.mpi.failure", "kill", timeout=120)
    assert done.returncode != 0
    assert "finished without noticing" not in done.stdout
    assert took < 60, took


@needs_mpi
def test_resume_on_another_number_of_ranks(tmp_path: Path) -> None:
    # Two epochs on two ranks, against one epoch on two ranks resumed for the second on one process
    # (with the same global batch): the checkpoint does not depend on how many ranks wrote it.
    whole, _ = run(
        2, "tests.distributed.mpi.resume", "2", "0", str(tmp_path / "whole"), str(tmp_path / "whole.npz")
    )
    assert whole.returncode == 0, whole.stderr
    first, _ = run(
        2, "tests.distributed.mpi.resume", "1", "0", str(tmp_path / "split"), str(tmp_path / "first.npz")
    )
    assert first.returncode == 0, first.stderr
    subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.distributed.mpi.resume",
            "2",
            "1",
            str(tmp_path / "split"),
            str(tmp_path / "rest.npz"),
        ],
        check=True,
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=180,
    )
    want, got, midway = (np.load(tmp_path / f"{name}.npz") for name in ("whole", "rest", "first"))
    for name in want.files:
        np.testing.assert_allclose(got[name], want[name], atol=1e-5, rtol=0, err_msg=name)
    assert max(float(np.abs(want[name] - midway[name]).max()) for name in want.files) > 1e-3
    # The checkpoints are whole (rank 0 wrote them; the other rank wrote nothing beside them).
    assert sorted(p.name for p in (tmp_path / "split" / "checkpoint").iterdir()) == sorted(
        f"{kind}-{epoch}.{ext}"
        for epoch in (1, 2)
        for kind, ext in (
            ("manifest", "json"),
            ("model", "mpk"),
            ("optim", "mpk"),
            ("scheduler", "mpk"),
            ("training", "json"),
        )
    )


@needs_mpi
def test_the_guide_trains_on_two_ranks(tmp_path: Path) -> None:
    done, _ = run(
        2, "examples.guide", "--epochs", "1", "--digits", "4", "--artifact-dir", str(tmp_path / "guide")
    )
    assert done.returncode == 0, done.stderr
    # Rank 0 alone reports, and writes the artifacts once.
    assert done.stdout.count("test digits right") == 1, done.stdout
    assert (tmp_path / "guide" / "model.mpk").is_file()
    assert json.loads((tmp_path / "guide" / "result.json").read_text())["world_size"] == 2
    assert "model-1.mpk" in {p.name for p in (tmp_path / "guide" / "checkpoint").iterdir()}
    summary = (tmp_path / "guide" / "summary.txt").read_text()
    valid = [line for line in summary.splitlines() if "| Valid | Accuracy" in line]
    # One epoch on 4,000 digits (each rank 2,000, batch 32) reaches ~87%, as one process does.
    assert valid and float(valid[0].split("|")[3]) > 70.0, summary


@needs_mpi
@pytest.mark.parametrize(
    ("mode", "what", "shown"),
    [
        ("lr", "learning rate schedule", "rank 0's: ConstantLr(lr=0.001); this rank's: ConstantLr(lr=0.002)"),
        ("structure", "model structure", "rank 0's: 'weight (8, 1) f32' (line 2 of 3); this rank's: 'weight"),
    ],
)
def test_ranks_started_differently_fail_before_the_first_step(mode: str, what: str, shown: str) -> None:
    # Before the check, another learning rate on one rank trained to the end with replicas 0.2
    # apart, and broadcast_module loaded rank 0's record into a model of another shape.
    done, took = run(2, "tests.distributed.mpi.drift", mode, timeout=120)
    assert done.returncode != 0
    assert "finished without noticing" not in done.stdout
    named = f"ReplicaMismatchError: the ranks were started with different {what}: rank 1 differs from rank 0"
    assert done.stderr.count(named) == 2, done.stderr  # every rank raises it
    assert done.stderr.count(shown) == 1, done.stderr  # rank 1 shows both settings
    assert "RankFailedError" not in done.stderr, done.stderr
    assert took < 30, took


@needs_mpi
@pytest.mark.parametrize(("mode", "where"), [("loop", "'bias' on rank 1"), ("learner", "in epoch 1: 'fc")])
def test_replicas_that_drift_apart_are_found_after_the_epoch(mode: str, where: str) -> None:
    done, took = run(2, "tests.distributed.mpi.drift", mode, timeout=120)
    assert done.returncode != 0
    assert "finished without noticing" not in done.stdout
    # Every rank raises it. The two ranks share one stderr, so one rank's exception line can be split by
    # the other's traceback between the type and the message: count the message, and see the type once whole.
    assert done.stderr.count("the ranks' parameters drifted apart") == 2, done.stderr
    assert "ReplicaDriftError: the ranks' parameters drifted apart" in done.stderr, done.stderr
    assert where in done.stderr, done.stderr
    assert took < 30, took


@needs_mpi
def test_a_rank_whose_program_ends_stops_the_others_at_once(tmp_path: Path) -> None:
    # rank 1 calls sys.exit(0) inside the loop: rank 0 waited in sync_gradients for the timeout.
    done, took = run(2, "tests.distributed.mpi.early_exit", "loop", str(tmp_path), timeout=120)
    assert done.returncode != 0
    assert "RankFailedError: rank 1 failed (its program ended" in done.stderr, done.stderr
    assert "this rank stopped in sync_gradients" in done.stderr
    assert "rank 0 finished" not in done.stdout
    assert took < 30, took


@needs_mpi
def test_only_a_run_nobody_cut_leaves_its_result(tmp_path: Path) -> None:
    # os._exit(0) on rank 1 ends the job, and MPICH's launcher may report success: result.json,
    # written last by rank 0, is what tells the cut run from the finished one.
    cut, _ = run(2, "tests.distributed.mpi.early_exit", "hard", str(tmp_path / "cut"), timeout=120)
    assert "rank 0 finished" not in cut.stdout, cut.stdout
    assert (tmp_path / "cut" / "experiment.log").is_file()
    assert not (tmp_path / "cut" / "result.json").exists()
    whole, _ = run(2, "tests.distributed.mpi.early_exit", "none", str(tmp_path / "whole"), timeout=120)
    assert whole.returncode == 0, whole.stderr
    result = json.loads((tmp_path / "whole" / "result.json").read_text())
    assert (result["status"], result["last_epoch"], result["world_size"]) == ("finished", 2, 2)


def test_descriptions_compare_settings_not_addresses() -> None:
    from ferrum.distributed.replicas import describe
    from ferrum.lr_scheduler import CosineAnnealingLrSchedulerConfig
    from ferrum.optim import AdamConfig

    # Built twice, alike; a default repr would hold each object's address and differ.
    assert describe(AdamConfig().init()) == describe(AdamConfig().init())
    assert describe(AdamConfig().init()) != describe(AdamConfig(beta_1=0.8).init())
    first = describe(CosineAnnealingLrSchedulerConfig(0.1, 10).init())
    assert first == "CosineAnnealingLrScheduler(current_iter=-1, max_lr=0.1, min_lr=0.0, num_iters=10)"

    class Holder:
        def __init__(self) -> None:
            self.rng = np.random.default_rng(0)
            self.fn = print
            self.values = {"b": [1.5, None], "a": (True,)}

    held = "Holder(fn=builtin_function_or_method, rng=Generator, values={'a': (True,), 'b': [1.5, None]})"
    assert describe(Holder()).endswith(held)


def test_mismatch_messages_show_the_first_difference() -> None:
    from ferrum.distributed import ReplicaMismatchError
    from ferrum.distributed.replicas import _first_difference

    root, mine = "Net\nfc.weight (4, 2) f32\nfc.bias (2,) f32", "Net\nfc.weight (4, 3) f32\nfc.bias (3,) f32"
    assert _first_difference(root, mine) == (
        "'fc.weight (4, 2) f32' (line 2 of 3)",
        "'fc.weight (4, 3) f32' (line 2 of 3)",
    )
    assert _first_difference("Net\na", "Net\na\nb") == ("2 lines", "'b' (line 3 of 3)")
    assert _first_difference("x" * 1000, "y")[0].endswith("... (1000 characters)")
    error = ReplicaMismatchError("optimizer", [1, 3])
    assert "started with different optimizer: ranks 1, 3 differ from rank 0" in str(error)
    assert error.ranks == (1, 3) and error.on_every_rank
