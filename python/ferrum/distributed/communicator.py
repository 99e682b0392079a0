"""``Communicator``: MPI collectives on ferrum tensors, with failures that stop every rank.

Every collective is started non-blocking and waited for in a loop that also
watches a second communicator for failure notices. A rank that raises tells
the others (``notify_failure``), which then raise ``RankFailedError`` naming
it instead of waiting forever; a rank that dies outright is caught by the MPI
runtime, which ends the job, or by the collective timeout. Waiting sleeps
between polls (releasing the GIL) and a Ctrl-C lands as ``KeyboardInterrupt``.
"""

from __future__ import annotations

import atexit
import enum
import os
import sys
import time
from collections.abc import Callable, Mapping, Sized
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt

from ferrum._ferrum import Tensor
from ferrum.distributed.errors import (
    CollectiveTimeoutError,
    DistributedError,
    RankFailedError,
    UnevenRanksError,
)
from ferrum.distributed.gradients import sync_gradients as _sync_gradients
from ferrum.distributed.module_sync import broadcast_module as _broadcast_module
from ferrum.distributed.replicas import check_replicas as _check_replicas
from ferrum.distributed.replicas import require_same as _require_same
from ferrum.extras import require

if TYPE_CHECKING:
    from mpi4py import MPI

    from ferrum.module import Module
    from ferrum.optim import GradientsParams

    ModuleT = TypeVar("ModuleT", bound=Module[Any])

__all__ = ["Communicator", "ReduceOp", "launched_rank", "launched_ranks"]

T = TypeVar("T", bound=Tensor[Any, Any, Any])

_FAILURE_TAG = 7919
# A rank waiting for a collective polls without sleeping for this long: MPI makes progress
# only while some rank polls, and a sleeping rank adds its wake-up time to every exchange
# (sleeps of 20 us to 1 ms doubled a 2 MB gradient all-reduce on one machine). A rank has
# nothing else to do meanwhile; past this, a long wait (a rank validating) sleeps.
_SPIN_SECONDS = 0.02
_MAX_PAUSE = 1e-3
# How long a failed rank waits for the others to report its failure before it ends the job.
_ABORT_GRACE = 10.0
# The same for an error every rank raised at once (the ranks uneven): the others print theirs
# at the same moment, and need only the time to write it.
_AGREED_GRACE = 1.0
# A rank whose program ended tells the others; one waiting in a collective raises if the
# collective has not completed this long after the notice came (the notice travels apart from
# the collective's own messages, so it may overtake the last contribution of a rank that did join).
_EXIT_GRACE = 1.0
_EXITED = "exited"
# What a custom loop's uneven ranks should do (the Learner's DataParallel gives its own hint).
_EVEN_HINT = (
    "build every rank's loader from the same dataset with .shard(comm.rank, comm.size), "
    "which gives every rank as many batches"
)


class ReduceOp(enum.Enum):
    """How ``all_reduce`` and ``reduce_scatter`` combine the ranks' tensors."""

    SUM = "sum"
    MEAN = "mean"
    MAX = "max"
    MIN = "min"


def _mpi() -> Any:
    note = " (brings mpi4py and an MPICH build), or mpi4py built against your cluster's MPI"
    return require("mpi4py.MPI", "ferrum.distributed (MPI)", "mpi", note)


class Communicator:
    """The ranks of an MPI communicator, exchanging ferrum tensors.

    ``Communicator()`` spans every process ``mpiexec`` started
    (``MPI.COMM_WORLD``); pass any mpi4py communicator to use a subset.
    ``timeout`` bounds each collective in seconds (``None``: no bound; a
    rank that raises still stops the others through its failure notice).
    Creating one installs an exception hook: an exception nobody catches on
    this rank tells the other ranks (which raise ``RankFailedError`` naming
    it) and then aborts the job, so no rank waits for it forever.

    Example (``mpiexec -n 2 python script.py``)::

        comm = Communicator()
        total = comm.all_reduce(Tensor.ones((3,), device), ReduceOp.SUM)  # [2., 2., 2.] on both
        grads = comm.sync_gradients(GradientsParams.from_grads(loss.backward(), model))
    """

    def __init__(
        self, comm: MPI.Comm | None = None, *, timeout: float | None = 1800.0, abort_on_uncaught: bool = True
    ) -> None:
        mpi = _mpi()
        base = mpi.COMM_WORLD if comm is None else comm
        if not isinstance(base, mpi.Comm):
            raise TypeError(f"Communicator needs an mpi4py communicator, found {type(base).__name__}")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"Communicator timeout must be > 0 seconds or None, found {timeout!r}")
        self._mpi = mpi
        self._comm: Any = base
        # Failure notices travel on their own communicator so they never match a collective.
        self._control: Any = base.Dup()
        self._timeout = timeout
        self._failed: RankFailedError | None = None
        self._exited: tuple[int, float] | None = None
        self._notified = False
        if abort_on_uncaught:
            _install_hook(self)
            atexit.register(self._notify_exit)

    @property
    def rank(self) -> int:
        """This process's rank, from 0."""
        return int(self._comm.Get_rank())

    @property
    def size(self) -> int:
        """The number of ranks."""
        return int(self._comm.Get_size())

    @property
    def is_main(self) -> bool:
        """Whether this is rank 0, the rank that logs, renders and writes checkpoints."""
        return self.rank == 0

    def __repr__(self) -> str:
        return f"Communicator(rank={self.rank}, size={self.size})"

    # ---- collectives on tensors

    def all_reduce(self, tensor: T, op: ReduceOp = ReduceOp.SUM) -> T:
        """Every rank's ``tensor`` combined elementwise by ``op``, on every rank (same shape and dtype).

        ``MEAN`` of an Int tensor is a ``TypeError`` (its mean is not an int).
        """
        array = self._send_array(tensor, "all_reduce")
        if op is ReduceOp.MEAN and array.dtype.kind not in "f":
            raise TypeError(f"all_reduce: MEAN needs a Float tensor, found {tensor.dtype}")
        self._check_same("all_reduce", array)
        out = np.empty_like(array)
        self._wait(self._comm.Iallreduce(array, out, self._op(op)), "all_reduce")
        if op is ReduceOp.MEAN:
            out /= self.size
        return self._like(tensor, out)

    def broadcast(self, tensor: T, root: int = 0) -> T:
        """``root``'s tensor on every rank; each rank's ``tensor`` gives the shape and dtype to expect."""
        self._check_root(root)
        # to_numpy may be a read-only view of the tensor: the root sends from it, the others receive into it.
        array = np.array(self._send_array(tensor, "broadcast"), order="C", copy=True)
        self._check_same("broadcast", array)
        self._wait(self._comm.Ibcast(array, root=root), "broadcast")
        return self._like(tensor, array)

    def all_gather(self, tensor: T) -> T:
        """Every rank's ``tensor`` concatenated along dim 0, in rank order: shape ``[size * n, ...]``."""
        array = self._send_array(tensor, "all_gather")
        self._check_same("all_gather", array)
        out = np.empty(
            (self.size * array.shape[0], *array.shape[1:]) if array.ndim else (self.size,), array.dtype
        )
        self._wait(self._comm.Iallgather(array, out), "all_gather")
        return self._like(tensor, out)

    def reduce_scatter(self, tensor: T, op: ReduceOp = ReduceOp.SUM) -> T:
        """The ranks' tensors combined by ``op``, split along dim 0: rank ``r`` gets part ``r``.

        Dim 0 must be a multiple of ``size``; the result has ``dims[0] // size`` rows.
        """
        array = self._send_array(tensor, "reduce_scatter")
        if array.ndim == 0 or array.shape[0] % self.size:
            raise ValueError(
                f"reduce_scatter: dim 0 must be a multiple of the {self.size} ranks, "
                f"found shape {list(array.shape)}"
            )
        if op is ReduceOp.MEAN and array.dtype.kind not in "f":
            raise TypeError(f"reduce_scatter: MEAN needs a Float tensor, found {tensor.dtype}")
        self._check_same("reduce_scatter", array)
        out = np.empty((array.shape[0] // self.size, *array.shape[1:]), array.dtype)
        self._wait(self._comm.Ireduce_scatter_block(array, out, self._op(op)), "reduce_scatter")
        if op is ReduceOp.MEAN:
            out /= self.size
        return self._like(tensor, out)

    def barrier(self) -> None:
        """Wait until every rank has reached this call."""
        self._wait(self._comm.Ibarrier(), "barrier")

    # ---- plain values

    def all_reduce_array(self, array: npt.NDArray[Any], op: ReduceOp = ReduceOp.SUM) -> npt.NDArray[Any]:
        """``all_reduce`` on a NumPy array (the Learner's metric and flag exchanges)."""
        send = np.ascontiguousarray(array)
        out = np.empty_like(send)
        self._wait(self._comm.Iallreduce(send, out, self._op(op)), "all_reduce")
        if op is ReduceOp.MEAN:
            out = out / self.size
        return out

    def broadcast_bytes(self, data: bytes | None, root: int = 0) -> bytes:
        """``root``'s bytes on every rank (the others pass ``None``)."""
        self._check_root(root)
        length = np.array([len(data) if self.rank == root and data is not None else 0], np.int64)
        if self.rank == root and data is None:
            raise ValueError("broadcast_bytes: the root rank must pass the bytes to send")
        self._wait(self._comm.Ibcast(length, root=root), "broadcast")
        buffer = (
            np.frombuffer(data, np.uint8).copy()
            if self.rank == root and data
            else np.empty(int(length[0]), np.uint8)
        )
        self._wait(self._comm.Ibcast(buffer, root=root), "broadcast")
        return buffer.tobytes()

    def same_everywhere(self, values: list[int]) -> bool:
        """Whether every rank passed the same integers (one exchange: the max of them and of minus them)."""
        code = np.array(values, np.int64)
        both = self.all_reduce_array(np.concatenate([code, -code]), ReduceOp.MAX)
        return bool(np.array_equal(both[: code.size], -both[code.size :]))

    def start_sum_in_place(self, buffer: npt.NDArray[Any]) -> Any:
        """Start summing ``buffer`` over ranks into itself; ``wait(request, what)`` finishes it."""
        return self._comm.Iallreduce(self._mpi.IN_PLACE, buffer, self._mpi.SUM)

    def wait(self, request: Any, what: str) -> None:
        """Finish a started exchange, watching for failed ranks and the timeout (as every collective does)."""
        self._wait(request, what)

    def agree(self, flag: bool) -> bool:
        """Whether any rank passed True (every rank gets the same answer)."""
        return bool(self.all_reduce_array(np.array([int(bool(flag))], np.int64), ReduceOp.MAX)[0])

    def all_gather_ints(self, values: list[int], what: str = "all_gather") -> list[list[int]]:
        """Every rank's ``values`` (as many on each rank), in rank order: one small exchange."""
        out = self.all_gather_array(np.array(values, np.int64), what)
        return [[int(value) for value in row] for row in out]

    def all_gather_array(self, array: npt.NDArray[Any], what: str = "all_gather") -> npt.NDArray[Any]:
        """Every rank's 1-D ``array`` (the same length and dtype on each) as the rows of a
        ``[size, n]`` array, in rank order."""
        send = np.ascontiguousarray(array).reshape(-1)
        out = np.empty((self.size, send.size), send.dtype)
        self._wait(self._comm.Iallgather(send, out), what)
        return out

    def check_even(self, loader: Sized, *, hint: str | None = None) -> int:
        """This rank's ``len(loader)``, once every rank is known to hold as many batches.

        A custom loop calls it at the start of each epoch: a rank with fewer
        batches would leave its loop while the others wait in
        ``sync_gradients`` for its gradients until the timeout. Raises
        ``UnevenRanksError`` on every rank, naming each rank's count, when
        they differ. ``hint`` replaces the advice the error ends with.
        """
        count = len(loader)
        counts = [row[0] for row in self.all_gather_ints([count], "check_even")]
        if any(other != count for other in counts):
            raise UnevenRanksError(counts, _EVEN_HINT if hint is None else hint)
        return count

    # ---- gradients and modules (see gradients.py and module_sync.py)

    def sync_gradients(self, grads: GradientsParams, *, bucket_mb: float = 25.0) -> GradientsParams:
        """The mean of every rank's ``GradientsParams``, in buckets of about ``bucket_mb`` MB.

        Call it between ``GradientsParams.from_grads`` and ``optim.step``;
        every rank must hold gradients for the same parameters (ids agree
        once ``broadcast_module`` gave every rank rank 0's module), else it
        raises ``GradientMismatchError`` on every rank. Every rank must also
        take as many steps: call ``check_even(loader)`` at each epoch's start.
        """
        return _sync_gradients(self, grads, bucket_mb)

    def broadcast_module(self, module: ModuleT, root: int = 0) -> ModuleT:
        """``root``'s module (parameters, ids and running statistics) on every rank.

        Every rank must pass a module of the same structure (parameter
        paths, shapes and dtypes), else ``ReplicaMismatchError`` on every
        rank: a record is never loaded into a model built differently.
        """
        return _broadcast_module(self, module, root)

    def require_same(self, what: str, description: str) -> None:
        """Raise ``ReplicaMismatchError`` on every rank unless every rank passed the same ``description``.

        A custom loop checks its settings once at the start, e.g.
        ``comm.require_same("optimizer", repr(optim_config))``; the Learner
        checks its optimizer, schedule and run settings itself. One exchange
        of a digest; rank 0's text is sent only when they differ.
        """
        _require_same(self, what, description)

    def check_replicas(self, module: Module[Any], *, when: str = "", tolerance: float = 1e-5) -> None:
        """Raise ``ReplicaDriftError`` on every rank when the ranks' parameters are no longer equal.

        Compares each parameter's sum and sum of magnitudes across ranks (one
        exchange of two floats per parameter, one pass over the weights): a
        difference above ``tolerance`` of the parameter's magnitude is drift.
        A custom loop calls it once per epoch; ``DataParallel`` does so after
        every training epoch unless built with ``check_replicas=False``.
        ``when`` is added to the message (``"after epoch 3"``).
        """
        _check_replicas(self, module, when, tolerance)

    # ---- failure

    def notify_failure(self, error: BaseException) -> None:
        """Tell every other rank that this one failed with ``error`` (they raise ``RankFailedError``)."""
        if isinstance(error, RankFailedError) or self._notified:
            return  # the others were told already (by the rank that failed first, or by this one)
        if isinstance(error, DistributedError) and error.on_every_rank:
            return  # every rank raised it too: a notice would only be left unread
        self._notify(f"{type(error).__name__}: {error}", 5.0)

    def _notify(self, reason: str, wait: float) -> None:
        self._notified = True
        requests = [
            self._control.isend((self.rank, reason), dest=peer, tag=_FAILURE_TAG)
            for peer in range(self.size)
            if peer != self.rank
        ]
        deadline = time.monotonic() + wait
        while requests and time.monotonic() < deadline:
            requests = [r for r in requests if not r.Test()]
            time.sleep(1e-3)

    def _notify_exit(self) -> None:
        # At interpreter exit (sys.exit, the end of the script): a rank that leaves while the
        # others still wait in a collective would otherwise hold them until the timeout. Sent at
        # every exit; the others read it only while they wait for a collective this rank left.
        if self.size == 1 or self._notified:
            return
        try:
            self._notify(_EXITED, 1.0)
        except Exception:  # MPI may be finalized already; the exit must go on
            pass

    def abort(self, code: int = 1) -> None:
        """End every rank of the job now (MPI's abort)."""
        sys.stdout.flush()
        sys.stderr.flush()
        # The launcher forwards each rank's output through pipes and stops forwarding when the
        # job is torn down: give it a moment, or the last lines (the error itself) are lost.
        time.sleep(0.5)
        self._comm.Abort(code)

    # ---- internals

    def _wait(self, request: Any, what: str) -> None:
        start = time.monotonic()
        deadline = None if self._timeout is None else start + self._timeout
        pause = 0.0
        while not request.Test():
            self._check_failures(what)
            now = time.monotonic()
            if now - start < _SPIN_SECONDS:
                continue
            if deadline is not None and now > deadline:
                raise CollectiveTimeoutError(
                    f"{what}: not every one of the {self.size} ranks joined within {self._timeout:g} s "
                    "(a rank died, hangs, or called a different collective)"
                )
            pause = min(pause * 2 or 2e-5, _MAX_PAUSE)
            time.sleep(pause)

    def _check_failures(self, what: str) -> None:
        if self._failed is not None:
            raise self._failed
        if self._control.iprobe(source=self._mpi.ANY_SOURCE, tag=_FAILURE_TAG):
            rank, reason = self._control.recv(source=self._mpi.ANY_SOURCE, tag=_FAILURE_TAG)
            if reason != _EXITED:
                self._failed = RankFailedError(int(rank), str(reason), what)
                raise self._failed
            if self._exited is None:
                self._exited = (int(rank), time.monotonic())
        if self._exited is not None and time.monotonic() - self._exited[1] > _EXIT_GRACE:
            why = "its program ended, by sys.exit or the end of the script, without joining"
            self._failed = RankFailedError(self._exited[0], why, what)
            raise self._failed

    def _check_same(self, what: str, array: npt.NDArray[Any]) -> None:
        # Mismatched shapes would make MPI read or write past a buffer: compare first.
        shape = [*array.shape[:7], *([0] * (7 - min(array.ndim, 7)))]
        if not self.same_everywhere([array.ndim, *shape, _dtype_code(array)]):
            raise DistributedError(
                f"{what}: the ranks passed different tensors; "
                f"this rank's is {list(array.shape)} {array.dtype}"
            )

    def _check_root(self, root: int) -> None:
        if isinstance(root, bool) or not isinstance(root, int) or not 0 <= root < self.size:
            raise ValueError(f"root must be a rank in [0, {self.size}), found {root!r}")

    def _op(self, op: ReduceOp) -> Any:
        if not isinstance(op, ReduceOp):
            raise TypeError(f"op must be a ReduceOp (SUM, MEAN, MAX, MIN), found {op!r}")
        mpi = self._mpi
        return {ReduceOp.SUM: mpi.SUM, ReduceOp.MEAN: mpi.SUM, ReduceOp.MAX: mpi.MAX, ReduceOp.MIN: mpi.MIN}[
            op
        ]

    @staticmethod
    def _send_array(tensor: Tensor[Any, Any, Any], what: str) -> npt.NDArray[Any]:
        if not isinstance(tensor, Tensor):
            raise TypeError(f"{what} needs a ferrum Tensor, found {type(tensor).__name__}")
        if tensor.device().is_autodiff:
            tensor = tensor.inner()
        return np.ascontiguousarray(tensor.to_numpy())

    @staticmethod
    def _like(tensor: T, array: npt.NDArray[Any]) -> T:
        device = tensor.device()
        out = Tensor.from_numpy(array, device.inner if device.is_autodiff else device, dtype=tensor.dtype)
        return out  # type: ignore[return-value]


def _dtype_code(array: npt.NDArray[Any]) -> int:
    return int.from_bytes(array.dtype.str.encode()[:8].ljust(8, b"\0"), "little") & 0x7FFF_FFFF_FFFF_FFFF


def _install_hook(comm: Communicator) -> None:
    """An uncaught exception on this rank tells the others, then aborts the job."""
    previous: Callable[[type[BaseException], BaseException, TracebackType | None], Any] = sys.excepthook

    def hook(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        previous(kind, error, tb)
        if comm.size > 1:
            comm.notify_failure(error)
            if isinstance(error, RankFailedError):
                why = f"rank {error.rank} failed"
            elif isinstance(error, DistributedError) and error.on_every_rank:
                why = "every rank found the same error"
                time.sleep(_AGREED_GRACE)
            else:
                why = "it failed"
                # The others raise RankFailedError, print it and end the job themselves; wait for
                # that (a bounded time: a rank busy in a long step is not polling) so that their
                # message is not lost to this rank's abort.
                time.sleep(_ABORT_GRACE)
            print(
                f"ferrum.distributed: rank {comm.rank} of {comm.size} stops because {why}; aborting the job",
                file=sys.stderr,
                flush=True,
            )
            comm.abort(1)

    sys.excepthook = hook


def launched_ranks(environ: Mapping[str, str] | None = None) -> int:
    """How many ranks the launcher (mpiexec, srun) started, from its environment; 1 when not launched.

    Read without starting MPI, so a script can decide whether to before it does.

    Example:
        >>> launched_ranks({"PMI_SIZE": "4", "PMI_RANK": "1"}), launched_ranks({})
        (4, 1)
    """
    return _launcher_value(environ, ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE"), 1)


def launched_rank(environ: Mapping[str, str] | None = None) -> int:
    """This process's rank as the launcher numbered it (0 when not launched); see ``launched_ranks``.

    Example:
        >>> launched_rank({"OMPI_COMM_WORLD_RANK": "3"}), launched_rank({})
        (3, 0)
    """
    return _launcher_value(environ, ("OMPI_COMM_WORLD_RANK", "PMI_RANK"), 0)


def _launcher_value(environ: Mapping[str, str] | None, keys: tuple[str, ...], default: int) -> int:
    # Open MPI's launcher, and the PMI that MPICH's hydra and Slurm's srun --mpi=pmi2 set up.
    env = os.environ if environ is None else environ
    for key in keys:
        value = env.get(key)
        if value and value.isdigit():
            return int(value)
    return default
