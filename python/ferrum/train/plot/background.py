"""Plots drawn by a helper process while training goes on.

Drawing two figures with matplotlib takes a few hundred milliseconds of
Python, longer than a small model's epoch may last; in a thread it would
also hold the GIL the training loop needs. So the Learner starts one
worker process (``python -m ferrum.train.plot.worker DIR NAME...``, but
without the working directory on ``sys.path``, at a lower CPU priority: it
draws with what training leaves idle), asks it to redraw after each epoch
and goes on training. A request made while the worker is drawing is kept
and sent when it is done (requests coalesce: only the latest epoch matters).

At the end, ``close`` stops the worker; if its last drawing does not cover
the last epoch yet (on a busy machine a low-priority process may lag far
behind), the final plots are drawn in the training process itself, at
normal priority, so they are complete when ``launch`` returns.

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

# How long an idle worker gets to exit once its input closes, before it is killed.
_EXIT_TIMEOUT = 10.0
_hinted = False
# Only an empty first entry is the working directory: with -P or PYTHONSAFEPATH there is none to remove.
_RUN_WORKER = (
    "import runpy, sys\n"
    "if sys.path[:1] == ['']:\n"
    "    del sys.path[0]\n"
    "runpy.run_module('ferrum.train.plot.worker', run_name='__main__', alter_sys=True)\n"
)


def start_plotter(directory: Path, names: list[str]) -> BackgroundPlotter | None:
    """A worker for ``names``' plots; None when there is nothing to plot or no matplotlib (said once)."""
    global _hinted
    if not names:
        return None
    if importlib.util.find_spec("matplotlib") is None:
        if not _hinted:
            _hinted = True
            print("ferrum.train: plots need matplotlib: pip install 'ferrum-dl[plot]'", file=sys.stderr)
        return None
    try:
        return BackgroundPlotter(directory, names)
    except OSError as err:
        _log.warning("cannot start the plotting process, no plots: %s", err)
        return None


def _worker_command(directory: Path, names: list[str]) -> list[str]:
    # ``-m`` puts the working directory first on ``sys.path``, so a ``ferrum`` folder there (say, in
    # a downloaded experiment) would be imported instead of the installed package. Python 3.10 has
    # no ``-P``: the worker module is run from ``-c`` (which puts ``''`` first), without that entry.
    return [sys.executable, "-c", _RUN_WORKER, str(directory), *names]


class BackgroundPlotter:
    """A worker process redrawing ``<directory>/plots`` for metrics ``names`` on request."""

    def __init__(self, directory: Path, names: list[str]) -> None:
        self._directory = directory
        self._names = names
        self._proc = subprocess.Popen(
            _worker_command(directory, names),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self._lock = threading.Lock()
        self._in_flight: int | None = None  # the epoch the worker is drawing
        self._pending: int | None = None  # the epoch to draw once it is done
        self._drawn: int | None = None  # the epoch its last finished drawing covered
        self._requested: int | None = None  # the latest epoch asked for
        self._reader = threading.Thread(target=self._read, name="ferrum-plot-reader", daemon=True)
        self._reader.start()

    @property
    def drawn(self) -> int | None:
        """The last epoch the worker's finished drawings cover (None before the first)."""
        with self._lock:
            return self._drawn

    def request(self, last_epoch: int) -> None:
        """Redraw with the logs of epochs up to ``last_epoch``, now or once the current drawing is done."""
        with self._lock:
            self._requested = last_epoch
            if self._in_flight is not None:
                self._pending = last_epoch
            else:
                self._send(last_epoch)

    def close(self, *, draw: bool = True) -> None:
        """Stop the worker; with ``draw``, make sure the plots show the last requested epoch."""
        with self._lock:
            busy = self._in_flight is not None
            up_to_date = self._requested is None or self._drawn == self._requested
        stdin = self._proc.stdin
        if stdin is not None:
            try:
                stdin.close()
            except OSError:
                pass
        if busy:
            self._proc.terminate()
        try:
            self._proc.wait(timeout=_EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        if draw and not up_to_date:
            from ferrum.train.plot import write_plots

            try:
                write_plots(self._directory, self._names, last_epoch=self._requested)
            except Exception as err:  # a plot must never end a training run
                _log.warning("drawing the plots failed: %s", err)

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
        self._in_flight = last_epoch

    def _read(self) -> None:
        stdout = self._proc.stdout
        assert stdout is not None
        for line in stdout:
            reply = line.rstrip("\n")
            if reply.startswith("error "):
                _log.warning("drawing the plots failed: %s", reply[len("error ") :])
            with self._lock:
                if reply == "done":
                    self._drawn = self._in_flight
                self._in_flight = None
                if self._pending is not None:
                    epoch, self._pending = self._pending, None
                    self._send(epoch)
        with self._lock:
            self._in_flight = None
