"""``Interrupter``: stop a training run cleanly, from code or with Ctrl-C (Burn's ``Interrupter``).

``interrupter.stop(reason)`` asks the Learner to stop: the current step
finishes, a checkpoint is written (with a file checkpointer) and ``launch``
returns the model trained so far. While ``launch`` runs in the main thread,
the first Ctrl-C does the same; a second Ctrl-C aborts at once
(``KeyboardInterrupt``).

Example:
    >>> from ferrum.train import Interrupter
    >>> interrupter = Interrupter()
    >>> interrupter.should_stop()
    False
    >>> interrupter.stop("enough")
    >>> interrupter.should_stop(), interrupter.get_message()
    (True, 'enough')
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["Interrupter", "sigint_stops"]


class Interrupter:
    """A flag, safe to set from any thread or a signal handler, that the Learner checks after each step.

    Pass one to ``SupervisedTraining.with_interrupter`` to stop training from elsewhere (a
    callback, another thread): the Learner then writes a checkpoint and returns the model.

    Example:
        >>> interrupter = Interrupter()
        >>> interrupter.stop("time is up")
        >>> interrupter.should_stop(), interrupter.get_message()
        (True, 'time is up')
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._message: str | None = None

    def stop(self, reason: str | None = None) -> None:
        """Ask the training to stop after the current step; ``reason`` is logged."""
        if reason is not None:
            self._message = reason
        self._event.set()

    def reset(self) -> None:
        """Clear the request (the message is kept until the next ``stop`` with a reason)."""
        self._event.clear()

    def should_stop(self) -> bool:
        """Whether ``stop`` was called."""
        return self._event.is_set()

    def get_message(self) -> str | None:
        """The reason given to ``stop``, if any."""
        return self._message

    def __repr__(self) -> str:
        return f"Interrupter(stopped={self.should_stop()}, message={self._message!r})"


@contextlib.contextmanager
def sigint_stops(interrupter: Interrupter) -> Iterator[None]:
    """While inside, the first SIGINT stops ``interrupter``; the next raises ``KeyboardInterrupt``.

    Outside the main thread signals cannot be caught: then nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        if interrupter.should_stop():
            raise KeyboardInterrupt
        interrupter.stop("Ctrl-C")
        print(
            "\nferrum.train: Ctrl-C: finishing the current step, then writing a checkpoint and returning "
            "the model; press Ctrl-C again to abort",
            file=sys.stderr,
            flush=True,
        )

    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
