"""Peak memory of the guide CNN's training step, ferrum against PyTorch
(issue 19: no more than PyTorch's), for benches/compare.py.

Each framework runs in a fresh child process (this file run as a script), so
neither's libraries, thread pools or allocator caches count against the
other; the torch child never imports ferrum. The child imports its
framework, builds the guide CNN and one batch of 64 images (the
"cnn guide adam step b64" row's workload), reads its resident set (VmRSS,
"before"), resets the kernel's high-water mark so that peaks of the imports
do not count, runs the training steps and reads the high-water mark (VmHWM,
"peak"). "growth" is peak minus before: what the steps themselves hold at
their worst (gradients, Adam's moments, the autodiff graph, caches).

Needs Linux's /proc/self/status; elsewhere the child says so and compare.py
prints the reason instead of a figure. Run a child alone with::

    python benches/compare_memory.py ferrum --steps 100
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from compare_core import FERRUM, GUIDE_BATCH, GUIDE_IMAGE, TORCH, Thunk, format_cells, training_data

TITLE = f"peak RSS cnn guide adam step b{GUIDE_BATCH}"
STATUS = Path("/proc/self/status")
CHILD_TIMEOUT_S = 1800


@dataclass(frozen=True)
class Memory:
    """One child's figures, in KiB as /proc reports them; ``reset``: whether the
    high-water mark was reset before the first step (else it spans the imports too)."""

    framework: str
    steps: int
    before_kib: int
    peak_kib: int
    reset: bool

    @property
    def growth_kib(self) -> int:
        return self.peak_kib - self.before_kib


# --------------------------------------------------------------------------- child


def _status_kib(field: str) -> int:
    for line in STATUS.read_text(encoding="ascii").splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])  # "VmHWM:    123456 kB"
    raise RuntimeError(f"{STATUS} has no {field} line")


def _reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux 4.0+: write 5 to clear_refs)."""
    try:
        Path("/proc/self/clear_refs").write_text("5", encoding="ascii")
    except OSError:
        return False
    return True


def _ferrum_step() -> Thunk:
    from compare_training import guide_step_cases
    from ferrum.backend import NdArray

    NdArray.seed(0)
    return guide_step_cases(None)[FERRUM]


def _torch_step(threads: int) -> Thunk:
    from compare_torch import load_torch, torch_guide_cnn, torch_train_step

    torch = load_torch(False, threads)
    if torch is None:
        raise RuntimeError("torch is not importable")
    torch.manual_seed(0)
    nx, ny = training_data(GUIDE_BATCH, GUIDE_IMAGE)
    return torch_train_step(torch, torch_guide_cnn(torch), nx, ny)


def measure(framework: str, steps: int, threads: int) -> Memory:
    """In this process: build the step, then run it ``steps`` times, reading RSS around."""
    if not STATUS.exists():
        raise RuntimeError(f"the peak-memory check reads {STATUS}, which this system lacks (Linux only)")
    step = _ferrum_step() if framework == FERRUM else _torch_step(threads)
    before = _status_kib("VmRSS")
    reset = _reset_peak()
    for _ in range(steps):
        step()
    return Memory(framework, steps, before, _status_kib("VmHWM"), reset)


def child_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Peak RSS of guide CNN training steps in this process")
    parser.add_argument("framework", choices=(FERRUM, TORCH))
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--torch-threads", type=int, default=2)
    args = parser.parse_args(argv)
    memory = measure(args.framework, args.steps, args.torch_threads)
    print(json.dumps(memory.__dict__))
    return 0


# --------------------------------------------------------------------------- parent


def run_child(framework: str, steps: int, threads: int) -> Memory | str:
    """``measure`` in a fresh Python process: its figures, or why there are none."""
    script = str(Path(__file__).resolve())
    try:
        proc = subprocess.run(
            [sys.executable, script, framework, "--steps", str(steps), "--torch-threads", str(threads)],
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"{framework} did not finish {steps} steps in {CHILD_TIMEOUT_S} s"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        return f"{framework} failed: {last}"
    return Memory(**json.loads(proc.stdout.strip().splitlines()[-1]))


def _mib(kib: int) -> str:
    return f"{kib / 1024:.1f}"


def memory_metrics(memory: Memory) -> dict[str, float]:
    """One child's figures in MiB, as the table shows them."""
    return {
        "before MiB": memory.before_kib / 1024,
        "peak MiB": memory.peak_kib / 1024,
        "growth MiB": memory.growth_kib / 1024,
    }


WIDTHS = (10, 9, 9, 9)


def memory_report(steps: int, with_torch: bool, threads: int) -> tuple[list[str], bool, dict[str, Memory]]:
    """The peak-memory section's lines, whether every child gave its figures, and the figures."""
    lines = [
        f"{TITLE}: {steps} steps, each framework in a fresh process",
        "(MiB; before: RSS after imports, model and data; peak: VmHWM over the steps; growth: peak - before)",
        format_cells(("framework", "before", "peak", "growth"), WIDTHS),
    ]
    ok = True
    found: dict[str, Memory] = {}
    for framework in (FERRUM, TORCH):
        if framework == TORCH and not with_torch:
            lines.append(format_cells((TORCH, "-", "-", "-"), WIDTHS) + "  (torch not loaded)")
            continue
        got = run_child(framework, steps, threads)
        if isinstance(got, str):
            ok = False
            lines.append(format_cells((framework, "-", "-", "-"), WIDTHS) + f"  ! {got}")
            continue
        found[framework] = got
        note = "" if got.reset else "  (peak not reset: it includes the imports)"
        cells = (framework, _mib(got.before_kib), _mib(got.peak_kib), _mib(got.growth_kib))
        lines.append(format_cells(cells, WIDTHS) + note)
    if FERRUM in found and TORCH in found:
        ratio = found[TORCH].peak_kib / found[FERRUM].peak_kib
        growth = found[TORCH].growth_kib / max(found[FERRUM].growth_kib, 1)
        lines.append(f"torch/ferrum peak: {ratio:.2f}x, growth: {growth:.2f}x (above 1: ferrum holds less)")
    return lines, ok, found


if __name__ == "__main__":
    sys.exit(child_main())
