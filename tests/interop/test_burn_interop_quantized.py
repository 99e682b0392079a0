"""Quantized records written by Burn 0.20.1 itself (interop/burn/src/quantized.rs):
tests/fixtures/burn/quantized_{level}_{recorder}.* hold a model of two Linears
quantized by Burn's ``Quantizer`` (min-max, Q8S) per tensor and in blocks of 16.
ferrum must load them to the int8 values and scales of Burn's formula (computed
here with NumPy), and quantize the same model into the same bytes. Burn loading
ferrum's files is checked by test_burn_interop.py's last test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.burn_interop_model import DEVICE, FIXTURES, id_of, values
from tests.support.burn_interop_quantized import (
    CASES,
    LAYOUT,
    LEVELS,
    burn_quantize,
    fresh,
    model,
    quantizer,
    recorder,
)


def _params(net: Any) -> list[tuple[str, Any]]:
    fields = ("weight", "bias")
    return [(f"{layer}.{field}", getattr(getattr(net, layer), field)) for layer in "ab" for field in fields]


@pytest.mark.parametrize(("level", "name"), CASES)
def test_burn_quantized_record_loads_to_burns_int8_values(level: str, name: str) -> None:
    net = fresh().load_file(FIXTURES / f"quantized_{level}_{name}", recorder(name), DEVICE)
    for (path, param), (want_path, shape, salt) in zip(_params(net), LAYOUT, strict=True):
        assert path == want_path
        assert param.id.value == id_of(salt), path
        q = param.quantized()
        assert q is not None, f"{path} loaded as float, expected quantized"
        want_q, want_scales = burn_quantize(values(shape, salt), LEVELS[level])
        np.testing.assert_array_equal(q.values().to_numpy(), want_q, err_msg=path)
        np.testing.assert_array_equal(q.scales().to_numpy().reshape(-1), want_scales, err_msg=path)
        # Dequantized, every value is within half a step of the formula.
        step = np.repeat(want_scales, want_q.size // want_scales.size).reshape(shape)
        assert np.all(np.abs(param.val().to_numpy() - values(shape, salt)) <= step / 2 + 1e-7), path


@pytest.mark.parametrize(("level", "name"), CASES)
def test_ferrum_quantizes_and_writes_what_burn_writes(tmp_path: Path, level: str, name: str) -> None:
    rec = recorder(name)
    model().quantize_weights(quantizer(level)).save_file(tmp_path / "net", rec)
    ours = Path(rec.file_path(tmp_path / "net"))
    burns = Path(rec.file_path(FIXTURES / f"quantized_{level}_{name}"))
    assert ours.read_bytes() == burns.read_bytes()
