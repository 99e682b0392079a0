"""Plots drawn by a helper process while training goes on.

Drawing two figures with matplotlib takes a few hundred milliseconds of
Python, longer than a small model's epoch may last; in a thread it would
also hold the GIL the training loop needs. So the Learner starts one
worker process (``python -m ferrum.train.plot.worker DIR NAME...``, at
a lower CPU priority), asks it to redraw after each epoch and goes on
training. A request made while the worker is drawing is kept and sent when
it is done (requests coalesce: only the latest epoch matters); ``close``
waits for the last one, so the files are complete when ``launch`` returns.

The protocol, one line each way: ``plot <last_epoch>`` to the worker,
``done`` or ``error <message>`` back.
"""

from __future__ import annotations

import importlib.util
import logging
import subprocess
import sys
import threading
from pathlib import Path

__all__ = ["BackgroundPlotter", "start_plotter"]

_log = logging.getLogger("ferrum.train")

_CLOSE_TIMEOUT = 120.0
_hinted = False


def start_plotter(directory: Path, names: list[str]) -> BackgroundPlotter | None:
    """A worker for ``names``' plots; None when there is nothing to plot or no matplotlib (said once)."""
    global _hinted
    if not names:
        return None
    if importlib.util.find_spec("matplotlib") is None:
        if not _hinted:
            _hinted = True
            print("ferrum.train: plots need matplotlib: pip install 'ferrum[plot]'", file=sys.stderr)
        return None
    try:
        return BackgroundPlotter(directory, names)
    except OSError as err:
        _log.warning("cannot start the plotting process, no plots: %s", err)
        return None


class BackgroundPlotter:
    """A worker process redrawing ``<directory>/plots`` for metrics ``names`` on request."""

    def __init__(self, directory: Path, names: list[str]) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "ferrum.train.plot.worker", str(directory), *names],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._busy = False
        self._pending: int | None = None
        self._reader = threading.Thread(target=self._read, name="ferrum-plot-reader", daemon=True)
        self._reader.start()

    def request(self, last_epoch: int) -> None:
        """Redraw with the logs of epochs up to ``last_epoch``, now or once the current drawing is done."""
        with self._lock:
            if self._busy:
                self._pending = last_epoch
            else:
                self._send(last_epoch)

    def close(self) -> None:
        """Wait for the requested drawings, then stop the worker."""
        with self._lock:
            done = lambda: not self._busy or self._proc.poll() is not None  # noqa: E731
            self._idle.wait_for(done, timeout=_CLOSE_TIMEOUT)
        if self._proc.stdin is not None:
            try:
                self._proc.stdin.close()
            except OSError:
                pass
        try:
            self._proc.wait(timeout=_CLOSE_TIMEOUT)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join()
        if self._proc.stdout is not None:
            self._proc.stdout.close()

    def _send(self, last_epoch: int) -> None:
        # Called with the lock held.
        stdin = self._proc.stdin
        if stdin is None or self._proc.poll() is not None:
            return
        try:
            stdin.write(f"plot {last_epoch}\n")
            stdin.flush()
        except OSError:
            return
        self._busy = True

    def _read(self) -> None:
        stdout = self._proc.stdout
        assert stdout is not None
        for line in stdout:
            reply = line.rstrip("\n")
            if reply.startswith("error "):
                _log.warning("drawing the plots failed: %s", reply[len("error ") :])
            with self._lock:
                self._busy = False
                if self._pending is not None:
                    epoch, self._pending = self._pending, None
                    self._send(epoch)
                self._idle.notify_all()
        with self._lock:
            self._busy = False
            self._idle.notify_all()
