"""Behaviour of `@config`: builders, immutability, JSON save/load and validation messages."""

from __future__ import annotations

import dataclasses
import enum
import errno
import json
import os
import pickle
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Literal, Optional, Union

import pytest
from ferrum import ConfigError, config
from ferrum.config import ConfigFileNotFoundError, is_config
from hypothesis import given, settings
from hypothesis import strategies as st


class Activation(enum.Enum):
    RELU = "relu"
    GELU = "gelu"


@config
class ExperimentConfig:
    hidden_size: int
    dropout: float = 0.5
    activation: str = "relu"
    lr: float = 1e-4


@config
class TrainingConfig:
    experiment: ExperimentConfig
    batch_size: int = 64
    num_epochs: int = 10


@config
class RichConfig:
    name: str
    layers: list[int]
    kernel: tuple[int, int] = (3, 3)
    strides: tuple[int, ...] = ()
    # typing.Optional/Union and `X | Y` are different objects at run time; both must work.
    weight_decay: Optional[float] = None  # noqa: UP045
    warmup: int | None = None
    activation: Activation = Activation.RELU
    mode: Literal["train", "eval"] = "train"
    extra: dict[str, float] = dataclasses.field(default_factory=dict)
    nested: ExperimentConfig | None = None
    stack: tuple[ExperimentConfig, ...] = ()
    either: Union[int, str] = 0  # noqa: UP007
    flag: bool = False


@config
class WithMethods:
    size: int
    scale: int = 2

    def init(self, offset: int) -> int:
        return self.size * self.scale + offset

    def with_scale(self, value: int) -> WithMethods:
        return dataclasses.replace(self, scale=value * 10)


@config
class Holder:
    payload: object = None


def rich() -> RichConfig:
    return RichConfig(
        "net",
        [1, 2, 3],
        strides=(1, 2),
        weight_decay=0.01,
        activation=Activation.GELU,
        mode="eval",
        extra={"a": 1.5},
        nested=ExperimentConfig(8, dropout=0.1),
        stack=(ExperimentConfig(1), ExperimentConfig(2, lr=0.5)),
        either="auto",
        flag=True,
    )


def load_error(tmp_path: Path, load: Callable[[Path], object], text: str) -> ConfigError:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load(path)
    return info.value


# --- construction, builders, immutability -------------------------------------------------------


def test_defaults_and_positional_required_fields() -> None:
    cfg = ExperimentConfig(128)
    assert (cfg.hidden_size, cfg.dropout, cfg.activation, cfg.lr) == (128, 0.5, "relu", 1e-4)
    assert ExperimentConfig(hidden_size=128) == cfg


def test_builders_return_a_new_config_and_leave_the_original() -> None:
    cfg = ExperimentConfig(128)
    tuned = cfg.with_dropout(0.3).with_activation("gelu").with_hidden_size(64).with_lr(0.1)
    assert tuned == ExperimentConfig(64, 0.3, "gelu", 0.1)
    assert cfg == ExperimentConfig(128)
    assert type(tuned) is ExperimentConfig


def test_every_field_has_a_builder() -> None:
    for field in dataclasses.fields(RichConfig):
        assert callable(getattr(RichConfig, f"with_{field.name}"))
    assert RichConfig.with_layers.__qualname__ == "RichConfig.with_layers"


def test_configs_are_frozen_and_hashable() -> None:
    cfg = ExperimentConfig(128)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.dropout = 0.1  # type: ignore[misc]
    assert hash(cfg) == hash(ExperimentConfig(128))
    assert cfg != ExperimentConfig(129)
    assert len({cfg, ExperimentConfig(128), ExperimentConfig(1)}) == 2


def test_required_field_after_default_is_refused_at_definition() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        @config
        class Bad:
            a: int = 1
            b: int  # type: ignore[misc]


def test_config_decorates_only_classes() -> None:
    with pytest.raises(TypeError, match="@config decorates a class, found function"):
        config(test_config_decorates_only_classes)  # type: ignore[arg-type]


def test_user_methods_are_kept() -> None:
    cfg = WithMethods(3)
    assert cfg.init(1) == 7
    # The user's own builder wins over the generated one.
    assert cfg.with_scale(1).scale == 10
    assert cfg.with_size(5).size == 5


def test_is_config() -> None:
    assert is_config(ExperimentConfig) and is_config(ExperimentConfig(1))
    assert not is_config(Activation) and not is_config({"hidden_size": 1})


def test_subclass_config_has_builders_for_all_fields() -> None:
    @config
    class Wider(ExperimentConfig):
        width: int = 4

    cfg = Wider(1).with_width(8).with_dropout(0.2)
    assert (cfg.hidden_size, cfg.dropout, cfg.width) == (1, 0.2, 8)
    assert type(cfg) is Wider
    assert Wider.from_dict(cfg.to_dict()) == cfg


# --- printing and dicts --------------------------------------------------------------------------


def test_str_is_pretty_json_and_repr_is_dataclass_style() -> None:
    cfg = TrainingConfig(ExperimentConfig(128))
    assert json.loads(str(cfg)) == {
        "experiment": {"hidden_size": 128, "dropout": 0.5, "activation": "relu", "lr": 1e-4},
        "batch_size": 64,
        "num_epochs": 10,
    }
    assert str(cfg).startswith('{\n  "experiment": {\n    "hidden_size": 128,')
    assert repr(cfg) == (
        "TrainingConfig(experiment=ExperimentConfig(hidden_size=128, dropout=0.5, activation='relu',"
        " lr=0.0001), batch_size=64, num_epochs=10)"
    )


def test_str_shows_values_json_cannot_hold_as_their_repr() -> None:
    assert json.loads(str(Holder({1, 2}))) == {"payload": "{1, 2}"}


def test_to_dict_uses_plain_json_values() -> None:
    assert rich().to_dict() == {
        "name": "net",
        "layers": [1, 2, 3],
        "kernel": [3, 3],
        "strides": [1, 2],
        "weight_decay": 0.01,
        "warmup": None,
        "activation": "GELU",
        "mode": "eval",
        "extra": {"a": 1.5},
        "nested": {"hidden_size": 8, "dropout": 0.1, "activation": "relu", "lr": 1e-4},
        "stack": [
            {"hidden_size": 1, "dropout": 0.5, "activation": "relu", "lr": 1e-4},
            {"hidden_size": 2, "dropout": 0.5, "activation": "relu", "lr": 0.5},
        ],
        "either": "auto",
        "flag": True,
    }


def test_from_dict_inverts_to_dict_and_fills_defaults() -> None:
    assert RichConfig.from_dict(rich().to_dict()) == rich()
    assert RichConfig.from_dict({"name": "x", "layers": []}) == RichConfig("x", [])


def test_to_dict_refuses_values_json_cannot_hold() -> None:
    with pytest.raises(ConfigError, match=r"payload: cannot save a value of type set as JSON"):
        Holder({1}).to_dict()


# --- save and load -------------------------------------------------------------------------------


def test_save_load_round_trip_nested(tmp_path: Path) -> None:
    training = TrainingConfig(ExperimentConfig(128).with_dropout(0.3)).with_batch_size(128)
    path = tmp_path / "training.json"
    training.save(path)
    assert json.loads(path.read_text()) == training.to_dict()
    again = TrainingConfig.load(path)
    assert again == training and again.experiment.dropout == 0.3


def test_save_load_round_trip_all_field_kinds(tmp_path: Path) -> None:
    path = str(tmp_path / "rich.json")
    rich().save(path)
    loaded = RichConfig.load(path)
    assert loaded == rich()
    assert isinstance(loaded.kernel, tuple) and isinstance(loaded.stack, tuple)
    assert loaded.activation is Activation.GELU


def test_int_is_accepted_where_float_is_expected(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"hidden_size": 3, "dropout": 1, "lr": 2}')
    loaded = ExperimentConfig.load(path)
    assert loaded == ExperimentConfig(3, dropout=1.0, lr=2.0)
    assert type(loaded.dropout) is float


def test_union_keeps_the_exact_type() -> None:
    @config
    class Number:
        value: float | int

    assert type(Number.from_dict({"value": 3}).value) is int
    assert type(Number.from_dict({"value": 3.5}).value) is float


@settings(max_examples=40, deadline=None)
@given(
    hidden=st.integers(-(2**53), 2**53),
    dropout=st.floats(allow_nan=False, allow_infinity=False),
    activation=st.text(),
    layers=st.lists(st.integers(-1000, 1000), max_size=5),
    weight_decay=st.none() | st.floats(allow_nan=False),
    extra=st.dictionaries(st.text(max_size=5), st.floats(allow_nan=False), max_size=3),
)
def test_round_trip_property(
    hidden: int,
    dropout: float,
    activation: str,
    layers: list[int],
    weight_decay: float | None,
    extra: dict[str, float],
) -> None:
    cfg = RichConfig(
        activation,
        layers,
        weight_decay=weight_decay,
        extra=extra,
        nested=ExperimentConfig(hidden, dropout, activation),
    )
    assert RichConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg


def test_save_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    ExperimentConfig(1).save(path)
    ExperimentConfig(2).save(path)
    assert os.listdir(tmp_path) == ["config.json"]
    assert ExperimentConfig.load(path) == ExperimentConfig(2)


def test_failed_save_keeps_the_previous_file(tmp_path: Path) -> None:
    path = tmp_path / "holder.json"
    Holder(1).save(path)
    before = path.read_text()
    with pytest.raises(ConfigError, match="payload: cannot save a value of type set"):
        Holder({1}).save(path)
    assert path.read_text() == before
    assert os.listdir(tmp_path) == ["holder.json"]


def test_a_failed_write_keeps_the_previous_file(tmp_path: Path) -> None:
    # A file size limit makes the write itself fail partway, as a full disk would.
    path = tmp_path / "config.json"
    ExperimentConfig(1).save(path)
    before = path.read_text()
    code = f"""
import resource, signal
from ferrum import ConfigError, config
@config
class Long:
    text: str = "x" * 100
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (20, 20))
try:
    Long().save({str(path)!r})
except ConfigError as err:
    print(err)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().startswith(f"cannot write config file '{path}': write failed: File too large")
    assert path.read_text() == before
    assert os.listdir(tmp_path) == ["config.json"]


def test_a_save_removes_what_a_killed_save_left(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # its id now names no process
    stale = tmp_path / f".config.json.{child.pid}.0.tmp"
    stale.write_text('{"hidden_size": ')
    ExperimentConfig(1).save(path)
    assert os.listdir(tmp_path) == ["config.json"]


def test_save_into_missing_directory_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "config.json"
    with pytest.raises(ConfigError, match=r"cannot write config file '.*missing/config\.json'") as info:
        ExperimentConfig(1).save(path)
    assert info.value.file == str(path)
    assert os.listdir(tmp_path) == []


def test_saved_file_mode_follows_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        ExperimentConfig(1).save(tmp_path / "c.json")
    finally:
        os.umask(old)
    assert (tmp_path / "c.json").stat().st_mode & 0o777 == 0o644


# --- validation errors ---------------------------------------------------------------------------


def test_wrong_nested_type_names_the_field_path(tmp_path: Path) -> None:
    err = load_error(tmp_path, TrainingConfig.load, '{"experiment": {"hidden_size": "many"}}')
    assert err.problems == ("experiment.hidden_size: expected int, found str 'many'",)
    assert str(err) == (
        f"config file '{tmp_path / 'bad.json'}' does not match TrainingConfig: "
        "experiment.hidden_size: expected int, found str 'many'"
    )
    assert err.file == str(tmp_path / "bad.json")
    assert isinstance(err, ValueError)


def test_missing_required_field(tmp_path: Path) -> None:
    err = load_error(tmp_path, TrainingConfig.load, '{"experiment": {"dropout": 0.1}}')
    assert err.problems == ("experiment.hidden_size: missing required field of type int",)


def test_unknown_field(tmp_path: Path) -> None:
    err = load_error(tmp_path, ExperimentConfig.load, '{"hidden_size": 1, "hiden": 2}')
    assert err.problems == (
        "hiden: unknown field (ExperimentConfig has: hidden_size, dropout, activation, lr)",
    )


def test_every_problem_is_reported(tmp_path: Path) -> None:
    text = '{"experiment": {"lr": "fast"}, "batch_size": 1.5, "x": 0}'
    err = load_error(tmp_path, TrainingConfig.load, text)
    assert err.problems == (
        "x: unknown field (TrainingConfig has: experiment, batch_size, num_epochs)",
        "experiment.hidden_size: missing required field of type int",
        "experiment.lr: expected float, found str 'fast'",
        "batch_size: expected int, found float 1.5",
    )
    assert "4 problems:\n  x: unknown field" in str(err)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"layers": [1, "x"]}, "layers[1]: expected int, found str 'x'"),
        ({"layers": 3}, "layers: expected list[int], found int 3"),
        ({"layers": [], "kernel": [1, 2, 3]}, "kernel: expected tuple[int, int] with 2 items, found 3 items"),
        ({"layers": [], "strides": [1, None]}, "strides[1]: expected int, found None"),
        ({"layers": [], "weight_decay": "big"}, "weight_decay: expected float | None, found str 'big'"),
        ({"layers": [], "warmup": 1.0}, "warmup: expected int | None, found float 1.0"),
        (
            {"layers": [], "activation": "TANH"},
            "activation: expected Activation (one of 'RELU', 'GELU'), found str 'TANH'",
        ),
        ({"layers": [], "mode": "test"}, "mode: expected Literal['train', 'eval'], found str 'test'"),
        ({"layers": [], "extra": {"a": "b"}}, "extra['a']: expected float, found str 'b'"),
        ({"layers": [], "extra": [1]}, "extra: expected dict[str, float], found list [1]"),
        (
            {"layers": [], "nested": {"hidden_size": True}},
            "nested.hidden_size: expected int, found bool True",
        ),
        ({"layers": [], "nested": 5}, "nested: expected ExperimentConfig | None, found int 5"),
        (
            {"layers": [], "stack": [{"hidden_size": 1}, {}]},
            "stack[1].hidden_size: missing required field of type int",
        ),
        ({"layers": [], "either": 1.5}, "either: expected int | str, found float 1.5"),
        ({"layers": [], "flag": 1}, "flag: expected bool, found int 1"),
        ({"layers": [], "name": None}, "name: expected str, found None"),
    ],
)
def test_type_errors_name_field_expected_and_found(data: dict[str, object], problem: str) -> None:
    with pytest.raises(ConfigError) as info:
        RichConfig.from_dict({"name": "n", **data})
    assert info.value.problems == (problem,)
    assert str(info.value) == problem
    assert info.value.file is None


def test_long_values_are_shortened_in_messages() -> None:
    with pytest.raises(ConfigError) as info:
        ExperimentConfig.from_dict({"hidden_size": "x" * 100})
    assert info.value.problems == ("hidden_size: expected int, found str '" + "x" * 56 + "...",)


def test_top_level_must_be_an_object(tmp_path: Path) -> None:
    err = load_error(tmp_path, ExperimentConfig.load, "[1, 2]")
    assert err.problems == ("expected a JSON object for ExperimentConfig, found list [1, 2]",)


def test_invalid_json_names_the_file_and_position(tmp_path: Path) -> None:
    err = load_error(tmp_path, ExperimentConfig.load, '{"hidden_size": 1,,}')
    assert str(err) == (
        f"config file '{tmp_path / 'bad.json'}' is not valid JSON: "
        "Expecting property name enclosed in double quotes at line 1 column 19"
    )


def test_unreadable_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(ConfigError) as info:
        ExperimentConfig.load(path)
    assert str(info.value) == f"cannot read config file '{path}': No such file or directory"
    assert info.value.file == str(path)


def test_a_missing_file_is_also_file_not_found(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(FileNotFoundError) as info:
        ExperimentConfig.load(path)
    err = info.value
    assert isinstance(err, ConfigError) and isinstance(err, ConfigFileNotFoundError)
    assert err.errno == errno.ENOENT and err.strerror == "No such file or directory"
    assert err.filename == str(path) and err.file == str(path)
    assert str(err) == f"cannot read config file '{path}': No such file or directory"
    assert isinstance(err.__cause__, FileNotFoundError) and not isinstance(err.__cause__, ConfigError)
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is ConfigFileNotFoundError and str(copy) == str(err)
    assert (copy.errno, copy.filename, copy.file, copy.problems) == (
        err.errno,
        err.filename,
        err.file,
        err.problems,
    )


def test_other_read_failures_stay_plain_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        ExperimentConfig.load(tmp_path)  # a directory: IsADirectoryError, not a missing file
    assert not isinstance(info.value, FileNotFoundError)
    assert info.value.file == str(tmp_path)


def test_non_utf8_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bin.json"
    path.write_bytes(b'{"hidden_size": "\xff"}')
    with pytest.raises(ConfigError, match="is not UTF-8 text"):
        ExperimentConfig.load(path)


@config
class Positive:
    value: int

    def __post_init__(self) -> None:
        if self.value <= 0:
            raise ValueError(f"value must be positive, got {self.value}")


@config
class Wrapper:
    inner: Positive


def test_post_init_refusal_is_reported_with_its_path() -> None:
    with pytest.raises(ConfigError) as info:
        Wrapper.from_dict({"inner": {"value": -1}})
    assert info.value.problems == ("inner: Positive refused these values: value must be positive, got -1",)


def test_unresolvable_field_type_is_reported() -> None:
    class Local:
        pass

    @config
    class UsesLocal:
        thing: Local | None = None

    with pytest.raises(ConfigError, match=r"cannot resolve the field types of .*UsesLocal: name 'Local'"):
        UsesLocal.from_dict({})


def test_unsupported_field_type_is_reported() -> None:
    with pytest.raises(ConfigError) as info:
        Unsupported.from_dict({"keys": {"1": 2}, "when": 3})
    assert info.value.problems == (
        "keys: field type dict[int, int] is not supported in configs (keys must be str)",
        "when: field type Path is not supported in configs",
    )


@config
class Unsupported:
    keys: dict[int, int]
    when: Path


def test_empty_tuple_field() -> None:
    @config
    class Empty:
        nothing: tuple[()] = ()

    assert Empty.from_dict({"nothing": []}) == Empty()
    with pytest.raises(ConfigError, match=r"nothing: expected tuple\[\(\)\] with 0 items, found 1 items"):
        Empty.from_dict({"nothing": [1]})


def test_an_integer_too_long_to_convert_names_its_field(tmp_path: Path) -> None:
    digits = "9" * 5000
    err = load_error(tmp_path, TrainingConfig.load, '{"experiment": {"hidden_size": ' + digits + "}}")
    assert str(err) == (
        f"config file '{tmp_path / 'bad.json'}': experiment.hidden_size: an integer of 5000 digits,"
        " more than the 4300 Python converts"
    )
    assert err.file == str(tmp_path / "bad.json")
    err = load_error(tmp_path, RichConfig.load, '{"name": "n", "layers": [1, -' + digits + "]}")
    assert err.problems == ("layers[1]: an integer of 5000 digits, more than the 4300 Python converts",)


@pytest.mark.parametrize("depth", [101, 100_000])
def test_deep_nesting_names_the_file_and_the_depth(tmp_path: Path, depth: int) -> None:
    text = '{"payload": ' + "[" * depth + "]" * depth + "}"
    err = load_error(tmp_path, Holder.load, text)
    assert str(err) == (
        f"config file '{tmp_path / 'bad.json'}' nests deeper than 100 levels (line 1 column 112):"
        " it is damaged or not a config"
    )


def test_nesting_up_to_the_limit_and_brackets_in_strings_load(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"payload": ' + "[" * 99 + "]" * 99 + "}")
    value = Holder.load(path).payload
    for _ in range(98):
        assert isinstance(value, list)
        value = value[0]
    assert value == []
    path.write_text(json.dumps({"payload": "[{" * 500 + '\\"'}))
    assert Holder.load(path).payload == "[{" * 500 + '\\"'
