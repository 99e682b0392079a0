"""The data loader's worker threads as the loader tests see them: which are alive, waiting for their end."""

from __future__ import annotations

import threading
import time

from ferrum.data.dataloader import WORKER_THREAD_PREFIX


def workers_alive() -> list[threading.Thread]:
    """The loader worker threads still running."""
    return [t for t in threading.enumerate() if t.name.startswith(WORKER_THREAD_PREFIX)]


def workers_gone(timeout: float = 5.0) -> bool:
    """Whether every worker has exited within ``timeout``: a stopped loader does
    not wait for its workers, which exit as soon as their current batch ends."""
    deadline = time.monotonic() + timeout
    while workers_alive():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True
