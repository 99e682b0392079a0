"""Configs standing for Rust enums in serde's JSON form (ferrum.config.serde), as Burn's files hold them.

Configs written by Burn itself are read in tests/interop/test_burn_interop.py; here
the forms are checked one by one, with ferrum's older ``{"kind": ...}``
form still read, and bad values named.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ferrum import ConfigError
from ferrum.nn import Initializer, LinearConfig, LinearLayout, PaddingConfig1d, PaddingConfig2d
from ferrum.nn.conv import Conv1dConfig, Conv2dConfig
from ferrum.optim import AdamConfig, GradientClippingConfig

SERDE_FORMS: list[tuple[Any, Any]] = [
    (Initializer.Ones, "Ones"),
    (Initializer.Zeros, "Zeros"),
    (Initializer.Constant(0.5), {"Constant": {"value": 0.5}}),
    (Initializer.Uniform(-1.0, 2.0), {"Uniform": {"min": -1.0, "max": 2.0}}),
    (Initializer.Normal(0.0, 0.02), {"Normal": {"mean": 0.0, "std": 0.02}}),
    (Initializer.KaimingUniform(0.5, True), {"KaimingUniform": {"gain": 0.5, "fan_out_only": True}}),
    (Initializer.KaimingNormal(1.0, False), {"KaimingNormal": {"gain": 1.0, "fan_out_only": False}}),
    (Initializer.XavierUniform(2.0), {"XavierUniform": {"gain": 2.0}}),
    (Initializer.XavierNormal(1.0), {"XavierNormal": {"gain": 1.0}}),
    (Initializer.Orthogonal(1.5), {"Orthogonal": {"gain": 1.5}}),
    (PaddingConfig1d.Same, "Same"),
    (PaddingConfig1d.Valid, "Valid"),
    (PaddingConfig1d.Explicit(3), {"Explicit": 3}),
    (PaddingConfig2d.Same, "Same"),
    (PaddingConfig2d.Explicit(1, 2), {"Explicit": [1, 2]}),
    (GradientClippingConfig.Value(0.5), {"Value": 0.5}),
    (GradientClippingConfig.Norm(1.0), {"Norm": 1.0}),
]


@pytest.mark.parametrize(("value", "serde"), SERDE_FORMS, ids=repr)
def test_enum_configs_are_written_and_read_in_serdes_form(value: Any, serde: Any, tmp_path: Path) -> None:
    # Saved on its own: the file holds just the serde value (Burn's Config::save of an enum).
    path = tmp_path / "value.json"
    value.save(path)
    assert json.loads(path.read_text()) == serde
    assert type(value).load(path) == value
    assert json.loads(str(value)) == serde


def test_nested_enum_configs_in_a_layer_config() -> None:
    config = Conv2dConfig((2, 3), (3, 3)).with_padding(PaddingConfig2d.Explicit(1, 1))
    data = json.loads(str(config))
    assert data["padding"] == {"Explicit": [1, 1]}
    assert data["initializer"] == {"KaimingUniform": {"gain": pytest.approx(3**-0.5), "fan_out_only": False}}
    assert Conv2dConfig.from_dict(data) == config
    optim = AdamConfig().with_grad_clipping(GradientClippingConfig.Norm(2.0))
    assert json.loads(str(optim))["grad_clipping"] == {"Norm": 2.0}
    assert AdamConfig.from_dict(json.loads(str(optim))) == optim


def test_ferrums_older_tagged_form_is_still_read() -> None:
    old = {
        "channels_in": 2,
        "channels_out": 3,
        "kernel_size": 3,
        "padding": {"kind": "Explicit", "padding": 2},
        "initializer": {"kind": "Normal", "mean": 0.0, "std": 1.0},
    }
    config = Conv1dConfig.from_dict(old)
    assert config.padding == PaddingConfig1d.Explicit(2)
    assert config.initializer == Initializer.Normal(0.0, 1.0)
    # serde also accepts {"Valid": null} for a unit variant.
    assert PaddingConfig1d.from_dict({"Valid": None}) == PaddingConfig1d.Valid


def test_linear_layout() -> None:
    assert LinearConfig(2, 3).layout == LinearLayout.Row
    config = LinearConfig(2, 3).with_layout(LinearLayout.Col)
    assert json.loads(str(config))["layout"] == "Col"
    assert LinearConfig.from_dict(json.loads(str(config))) == config
    # A config file from before the field existed loads with Burn's default.
    assert LinearConfig.from_dict({"d_input": 2, "d_output": 3}).layout == LinearLayout.Row


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"padding": "Diagonal"},
            r"padding: expected one of the variants 'Same', 'Valid', 'Explicit' of PaddingConfig1d",
        ),
        (
            {"padding": "Explicit"},
            r"padding: PaddingConfig1d: variant 'Explicit' carries one value; found no value",
        ),
        ({"padding": {"Valid": 3}}, r"padding: PaddingConfig1d: variant 'Valid' carries no value, found 3"),
        ({"padding": {"Explicit": "wide"}}, r"padding\.padding: expected int, found str 'wide'"),
        ({"padding": {"Same": None, "Valid": None}}, r"padding: expected one of the variants"),
        (
            {"initializer": {"Normal": 0.5}},
            r"variant 'Normal' carries an object with 'mean', 'std'; found float 0.5",
        ),
        ({"initializer": {"Normal": {"mean": 0.0}}}, r"Initializer refused these values: .*needs 'std'"),
        ({"initializer": {"Normal": {"mean": 0.0, "std": 1.0, "gain": 2.0}}}, r"takes no 'gain'"),
    ],
)
def test_bad_enum_values_name_the_field(data: dict[str, Any], message: str) -> None:
    base: dict[str, Any] = {"channels_in": 2, "channels_out": 3, "kernel_size": 3}
    with pytest.raises(ConfigError, match=message):
        Conv1dConfig.from_dict({**base, **data})
