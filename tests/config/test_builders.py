"""Every exported config has a ``with_<field>`` builder for each defaulted field, named as in Burn 0.20.1.

``burn_config_builders.json`` lists, for each ``#[derive(Config)]`` struct of
Burn 0.20.1's burn-nn, burn-optim, burn-train and burn-core crates, the
fields that get a ``with_`` builder: those with ``#[config(default = ...)]``
and the ``Option`` ones (Burn's derive gives both a builder; required fields
get none). It was read from ``git show v0.20.1:<file>`` of each listed file.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import pkgutil
from pathlib import Path
from typing import Any

import ferrum
import pytest
from ferrum.config import is_config
from ferrum.nn.pool import AvgPool2dConfig, MaxPool2dConfig

BURN = json.loads((Path(__file__).parent / "burn_config_builders.json").read_text())


def exported_configs() -> dict[str, type[Any]]:
    """Every config class a ferrum module lists in its ``__all__``, by name."""
    found: dict[str, type[Any]] = {}
    for info in pkgutil.walk_packages(ferrum.__path__, prefix="ferrum."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue  # a module of an extra that is not installed (mpi4py)
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name, None)
            if inspect.isclass(value) and is_config(value):
                found.setdefault(name, value)
    return found


CONFIGS = exported_configs()


def test_the_walk_finds_the_configs_of_every_area() -> None:
    for name in ("LinearConfig", "MaxPool2dConfig", "AdamConfig", "CosineAnnealingLrSchedulerConfig"):
        assert name in CONFIGS
    assert len(CONFIGS) >= 60


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_defaulted_field_has_a_builder(name: str) -> None:
    cls = CONFIGS[name]
    for field in dataclasses.fields(cls):
        missing = dataclasses.MISSING
        if field.init and (field.default is not missing or field.default_factory is not missing):
            assert callable(getattr(cls, f"with_{field.name}", None)), f"{name}.with_{field.name}"
    # A field Python names differently from Burn has Burn's builder too.
    for burn_name in getattr(cls, "__serde_rename__", {}).values():
        assert callable(getattr(cls, f"with_{burn_name}", None)), f"{name}.with_{burn_name}"


@pytest.mark.parametrize("name", sorted(BURN))
def test_every_burn_builder_exists(name: str) -> None:
    assert name in CONFIGS, f"Burn's {name} ({BURN[name]['file']}) has no ferrum config"
    cls = CONFIGS[name]
    missing = [field for field in BURN[name]["with"] if not callable(getattr(cls, f"with_{field}", None))]
    assert not missing, f"{name} lacks Burn's builders {missing}"


def test_the_pool_builders_are_burns() -> None:
    assert {name: BURN[name]["with"] for name in BURN if "Pool" in name} == {
        "AdaptiveAvgPool1dConfig": [],
        "AdaptiveAvgPool2dConfig": [],
        "AvgPool1dConfig": ["stride", "padding", "count_include_pad", "ceil_mode"],
        "AvgPool2dConfig": ["strides", "padding", "count_include_pad", "ceil_mode"],
        "MaxPool1dConfig": ["stride", "padding", "dilation", "ceil_mode"],
        "MaxPool2dConfig": ["strides", "padding", "dilation", "ceil_mode"],
    }


def test_with_strides_sets_the_stride() -> None:
    config = MaxPool2dConfig((2, 2)).with_strides((2, 1))
    assert config == MaxPool2dConfig((2, 2)).with_stride((2, 1))
    assert config.init().stride == (2, 1)
    assert config.to_dict()["strides"] == [2, 1]  # Burn's file field
    assert AvgPool2dConfig((3, 3)).with_strides((1, 1)).init().stride == (1, 1)
    with pytest.raises(ValueError, match="stride"):
        MaxPool2dConfig((2, 2)).with_strides((0, 1))
