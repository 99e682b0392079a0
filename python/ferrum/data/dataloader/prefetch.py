"""Running numbered tasks on worker threads and handing their results back in order."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["WORKER_THREAD_PREFIX", "OrderedPrefetcher"]

ResultT = TypeVar("ResultT")

WORKER_THREAD_PREFIX = "ferrum-dataloader-worker"
"""Name prefix of the data loader's worker threads."""


class OrderedPrefetcher(Generic[ResultT]):
    """Computes ``task(0) .. task(count - 1)`` on ``num_workers`` daemon threads.

    Workers run at most ``depth`` tasks ahead of the consumer, which bounds
    memory; with ``depth`` 0 a task starts only once ``take()`` asks for it.
    ``take()`` returns results strictly in task order, whichever worker
    finishes first, so the output does not depend on thread timing. A task's
    exception is re-raised by ``take()`` when its turn comes. With a
    ``timeout``, ``take()`` waits at most that many seconds for its result,
    then stops the workers and raises ``on_timeout(task, worker)`` (the worker
    thread running that task, or None if none had started it). ``close()``
    stops the workers without waiting for them: a task already running
    finishes in the background, its result is dropped and its worker exits.
    """

    def __init__(
        self,
        task: Callable[[int], ResultT],
        count: int,
        num_workers: int,
        depth: int,
        *,
        timeout: float | None = None,
        on_timeout: Callable[[int, threading.Thread | None], BaseException] | None = None,
    ) -> None:
        if num_workers < 1 or not (depth >= num_workers or depth == 0):
            raise ValueError(
                f"need num_workers >= 1 and depth >= num_workers (or 0), found {num_workers}, {depth}"
            )
        if timeout is not None and on_timeout is None:
            raise ValueError("a timeout needs on_timeout, the error to raise when it expires; found None")
        self._task = task
        self._count = count
        self._depth = depth
        self._timeout = timeout
        self._on_timeout = on_timeout
        self._cond = threading.Condition()
        self._next_task = 0
        self._next_out = 0
        self._done: dict[int, tuple[ResultT | None, BaseException | None]] = {}
        # Which thread runs each task, so a timeout can name the stuck worker.
        self._running: dict[int, threading.Thread] = {}
        self._waiting = False
        self._stopped = False
        self._threads = [
            threading.Thread(target=self._work, name=f"{WORKER_THREAD_PREFIX}-{k}", daemon=True)
            for k in range(min(num_workers, count))
        ]
        for thread in self._threads:
            thread.start()

    def take(self) -> ResultT:
        """The next result in task order; ``StopIteration`` once all were taken or after ``close()``."""
        deadline = None if self._timeout is None else time.monotonic() + self._timeout
        with self._cond:
            if self._depth == 0:
                self._waiting = True
                self._cond.notify_all()
            try:
                while not self._stopped and self._next_out < self._count and self._next_out not in self._done:
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        task, worker = self._next_out, self._running.get(self._next_out)
                        # Nobody will take the later results: stop every worker, not just the stuck one.
                        self._stop()
                        assert self._on_timeout is not None
                        raise self._on_timeout(task, worker)
                    self._cond.wait(remaining)
            finally:
                self._waiting = False
            if self._stopped or self._next_out >= self._count:
                raise StopIteration
            result, error = self._done.pop(self._next_out)
            self._next_out += 1
            self._cond.notify_all()
        if error is not None:
            self.close()
            raise error
        return result  # type: ignore[return-value]

    def close(self) -> None:
        """Stop handing out tasks and drop pending results, at once.

        Idle workers exit straight away. One in the middle of a task is not
        waited for (leaving a loop early must not wait for batches that will
        be thrown away, nor hang on a batcher that never returns): it exits
        when the task ends, dropping the result. Workers are daemon threads,
        so one stuck in a task never holds up the interpreter's exit.
        """
        with self._cond:
            self._stop()

    def _stop(self) -> None:
        self._stopped = True
        self._done.clear()
        self._running.clear()
        self._cond.notify_all()

    def _work(self) -> None:
        while True:
            with self._cond:
                while (
                    not self._stopped
                    and self._next_task < self._count
                    # Depth 0 lets a task start only while the consumer waits for it.
                    and self._next_task >= self._next_out + max(self._depth, int(self._waiting))
                ):
                    self._cond.wait()
                if self._stopped or self._next_task >= self._count:
                    return
                index = self._next_task
                self._next_task += 1
                self._running[index] = threading.current_thread()
            try:
                outcome: tuple[ResultT | None, BaseException | None] = (self._task(index), None)
            except BaseException as error:  # the consumer re-raises it in its own thread
                outcome = (None, error)
            with self._cond:
                if self._stopped:
                    return
                self._running.pop(index, None)
                self._done[index] = outcome
                self._cond.notify_all()
