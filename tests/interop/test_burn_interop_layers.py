"""Interop with Burn 0.20.1 for the layers of issue 16 (recurrent, attention, transformer,
encodings, 3-d and deformable convolution, the enum wrappers, parameter-free modules).

tests/fixtures/burn/layers_* were written by interop/burn (src/layers.rs) with every file
recorder at every precision. ferrum loads each one to the formula values and ids, writes the
same bytes (gzip: the same payload), and, when the program is built, Burn loads ferrum's files.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.interop.test_burn_interop import (
    CASES,
    _assert_written_as_burn,
    _burn_binary,
    _recorder,
    _write_all,
)
from tests.support.burn_interop_layers import check, fresh, model
from tests.support.burn_interop_model import DEVICE, FIXTURES

# Parameters of the layers model: a change in any layer's record layout shows here first.
PARAM_COUNT = 136


@pytest.mark.parametrize(("name", "precision"), CASES)
def test_burn_written_layers_load_with_every_value(name: str, precision: str) -> None:
    net = fresh().load_file(FIXTURES / f"layers_{name}_{precision}", _recorder(name, precision), DEVICE)
    assert check(net) == PARAM_COUNT


@pytest.mark.parametrize(("name", "precision"), CASES)
def test_ferrum_writes_the_layers_as_burn_does(tmp_path: Path, name: str, precision: str) -> None:
    _assert_written_as_burn(model(), tmp_path, f"layers_{name}_{precision}", name, precision)


def test_burn_loads_ferrums_layers(tmp_path: Path) -> None:
    binary = _burn_binary()
    if binary is None:
        pytest.skip("the Burn interop program is not built: cargo build in interop/burn")
    _write_all(tmp_path)
    net = model()
    for name, precision in CASES:
        net.save_file(tmp_path / f"layers_{name}_{precision}", _recorder(name, precision))
    proc = subprocess.run(
        [str(binary), "load", str(tmp_path)], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("ok") and "/layers_" in line]
    assert len(lines) == len(CASES), proc.stdout
