"""The module system: ParamId, Param, Module traversal, records, valid/no_grad/to_device, repr."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
from ferrum import D1, D2, Float, Tensor
from ferrum.backend import Autodiff, Backend, NdArray
from ferrum.module import Module, Param, ParamId, RunningState
from ferrum.nn import Linear, LinearConfig, Relu

from tests.support.devices import AD, DEVICE
from tests.support.f64 import arr

B = TypeVar("B", bound=Backend)


class Block(Module[B]):
    fc: Linear[B]
    scale: Param[Tensor[B, D1]]
    stats: RunningState[Tensor[B, D1]]
    label: str


class Net(Module[B]):
    first: Block[B]
    blocks: list[Block[B]]
    extra: Linear[B] | None
    relu: Relu
    width: int


def block(device: Any, d_in: int = 3, d_out: int = 2) -> Block[Any]:
    return Block(
        fc=LinearConfig(d_in, d_out).init(device),
        scale=Param(Tensor.ones((d_out,), device)),
        stats=RunningState(Tensor.zeros((d_out,), device)),
        label="b",
    )


def net(device: Any = DEVICE, extra: bool = False) -> Net[Any]:
    return Net(
        first=block(device),
        blocks=[block(device, 2, 2), block(device, 2, 4)],
        extra=LinearConfig(4, 1).init(device) if extra else None,
        relu=Relu(),
        width=7,
    )


# ------------------------------------------------------------------ ParamId


def test_param_ids_are_unique_and_round_trip_through_str() -> None:
    ids = {ParamId.new() for _ in range(200)}
    assert len(ids) == 200
    pid = ParamId.new()
    assert ParamId.from_str(str(pid)) == pid
    assert hash(ParamId.from_str(str(pid))) == hash(pid)
    assert str(ParamId(42)) == "42"


def test_param_id_from_legacy_string_is_stable_and_rejects_garbage() -> None:
    assert ParamId.from_str("abc123") == ParamId.from_str("abc123")
    assert ParamId.from_str("abc123") != ParamId.from_str("abc124")
    with pytest.raises(ValueError, match="non-empty"):
        ParamId.from_str("")
    with pytest.raises(ValueError, match="2\\*\\*64"):
        ParamId(-1)


def test_param_ids_do_not_follow_the_seed() -> None:
    NdArray.seed(3)
    first = ParamId.new()
    NdArray.seed(3)
    assert ParamId.new() != first


# ------------------------------------------------------------------ Param


def test_param_on_autodiff_is_a_tracked_leaf_and_val_is_stable() -> None:
    param = Param(Tensor.from_floats([1.0, 2.0, 3.0], AD))
    assert param.val() is param.val()
    assert param.val().is_require_grad()
    grads = (param.val() * param.val()).sum().backward()
    grad = param.val().grad(grads)
    assert grad is not None
    assert grad.to_data().to_list() == [2.0, 4.0, 6.0]


def test_param_without_require_grad_gets_no_gradient() -> None:
    param = Param(Tensor.from_floats([1.0, 2.0], AD), require_grad=False)
    assert not param.is_require_grad() and not param.val().is_require_grad()
    other = Tensor.from_floats([1.0, 1.0], AD).require_grad()
    grads = (param.val() * other).sum().backward()
    assert param.val().grad(grads) is None
    assert param.set_require_grad(True).val().is_require_grad()


def test_param_detaches_from_the_graph_it_was_built_from() -> None:
    source = Tensor.from_floats([1.0, 2.0], AD).require_grad()
    param = Param(source * 2.0)
    grads = (param.val() * 3.0).sum().backward()
    assert source.grad(grads) is None
    grad = param.val().grad(grads)
    assert grad is not None and grad.to_data().to_list() == [3.0, 3.0]


def test_param_map_keeps_id_and_flag_and_returns_to_the_autodiff_backend() -> None:
    param = Param(Tensor.from_floats([1.0, 2.0], AD), require_grad=True)
    mapped = param.map(lambda t: Tensor.from_inner(t.inner() * 10.0))
    assert mapped.id == param.id and mapped.is_require_grad()
    assert mapped.val().to_data().to_list() == [10.0, 20.0]
    # A function computing on the inner backend still gives an autodiff parameter.
    inner_mapped: Param[Any] = param.map(lambda t: t.inner() + 1.0)  # type: ignore[arg-type, return-value]
    assert inner_mapped.val().device() == AD and inner_mapped.val().is_require_grad()
    assert param.val().to_data().to_list() == [1.0, 2.0]


def test_param_rejects_non_float_tensors() -> None:
    with pytest.raises(TypeError, match="Float"):
        Param(Tensor.from_ints([1, 2], DEVICE))  # type: ignore[type-var]
    with pytest.raises(TypeError, match="Tensor"):
        Param([1.0, 2.0])  # type: ignore[type-var]


# ------------------------------------------------------------------ traversal


def test_named_parameters_follow_declaration_order_with_list_indices() -> None:
    model = net(extra=True)
    names = [name for name, _ in model.named_parameters()]
    assert names == [
        "first.fc.weight",
        "first.fc.bias",
        "first.scale",
        "blocks.0.fc.weight",
        "blocks.0.fc.bias",
        "blocks.0.scale",
        "blocks.1.fc.weight",
        "blocks.1.fc.bias",
        "blocks.1.scale",
        "extra.weight",
        "extra.bias",
    ]
    assert model.parameters() == [param for _, param in model.named_parameters()]


def test_num_params_counts_parameters_but_not_running_states() -> None:
    model = net()
    expected = (3 * 2 + 2 + 2) + (2 * 2 + 2 + 2) + (2 * 4 + 4 + 4)
    assert model.num_params() == expected
    assert net(extra=True).num_params() == expected + 4 + 1
    assert Relu().num_params() == 0


def test_visit_sees_parameters_and_running_states_by_id() -> None:
    model = net()
    seen: list[tuple[ParamId, tuple[int, ...]]] = []

    class Collect:
        def visit_float(self, id: ParamId, tensor: Tensor[Any, Any, Float]) -> None:
            seen.append((id, tensor.dims()))

    model.visit(Collect())
    assert len(seen) == 9 + 3
    assert seen[0] == (model.first.fc.weight.id, (3, 2))
    assert (model.first.stats.id, (2,)) in seen


def test_map_returns_a_new_module_and_leaves_the_old_one() -> None:
    model = net()

    class AddOne:
        def map_float(self, id: ParamId, tensor: Tensor[Any, Any, Float]) -> Tensor[Any, Any, Float]:
            return tensor + 1.0

    mapped = model.map(AddOne())
    assert type(mapped) is Net and mapped is not model
    for (name, old), (new_name, new) in zip(model.named_parameters(), mapped.named_parameters(), strict=True):
        assert name == new_name and old.id == new.id
        np.testing.assert_allclose(arr(new.val()), arr(old.val()) + 1.0)
    np.testing.assert_allclose(arr(mapped.first.stats.value()), 1.0)
    np.testing.assert_allclose(arr(model.first.stats.value()), 0.0)
    assert mapped.width == 7 and mapped.first.label == "b" and isinstance(mapped.relu, Relu)


class Tagged(Module[B]):
    """A module that keeps a per-copy attribute out of the fields and counts its copies."""

    fc: Linear[B]
    copies: int = 0

    def __copy__(self) -> Tagged[B]:
        new = Tagged(fc=self.fc, copies=self.copies + 1)
        object.__setattr__(new, "note", "copied by __copy__")
        return new


def test_map_copies_plain_modules_attribute_for_attribute_and_honours_copy_hooks() -> None:
    class Identity:
        def map_float(self, id: ParamId, tensor: Tensor[Any, Any, Float]) -> Tensor[Any, Any, Float]:
            return tensor

    model = net()
    # An attribute outside the fields (a cache a layer keeps) travels with the copy, as with copy.copy.
    object.__setattr__(model.first, "cache", [1, 2])
    mapped = model.map(Identity())
    assert mapped.first is not model.first and mapped.first.cache is model.first.cache  # type: ignore[attr-defined]
    assert mapped.blocks[1] is not model.blocks[1] and mapped.blocks[1].label == "b"
    assert mapped.width == 7 and type(mapped.relu) is Relu and mapped.relu is not model.relu

    tagged = Tagged(fc=LinearConfig(2, 2).init(DEVICE))
    again = tagged.map(Identity()).map(Identity())
    assert again.copies == 2 and again.note == "copied by __copy__"  # type: ignore[attr-defined]
    assert again.fc.weight.id == tagged.fc.weight.id and again.fc is not tagged.fc


def test_map_refuses_a_shape_change() -> None:
    class Grow:
        def map_float(self, id: ParamId, tensor: Tensor[Any, Any, Float]) -> Tensor[Any, Any, Float]:
            return tensor.reshape((1, -1)) if tensor.rank() == 1 else tensor

    with pytest.raises(ValueError, match=r"first\.fc\.bias.*\[2\].*\[1, 2\]"):
        net().map(Grow())


def test_mixed_list_field_is_refused() -> None:
    class Bad(Module[Any]):
        items: list[Any]

    with pytest.raises(TypeError, match=r"Bad\.items mixes"):
        Bad(items=[Relu(), 3]).num_params()


# ------------------------------------------------------------------ records


def test_record_has_nested_ids_and_tensors_and_no_constants() -> None:
    model = net()
    record = model.into_record()
    # Burn's shape: every field, constants as None (Burn's ConstantRecord), absent options None.
    assert set(record) == {"first", "blocks", "relu", "width", "extra"}
    assert record["width"] is None and record["extra"] is None
    assert set(record["first"]) == {"fc", "scale", "stats", "label"} and record["first"]["label"] is None
    assert record["first"]["fc"]["weight"]["id"] == str(model.first.fc.weight.id)
    assert record["first"]["fc"]["weight"]["param"] is model.first.fc.weight.val()
    # Relu has no backend in Burn: a constant module, recorded as nil (ConstantRecord).
    assert len(record["blocks"]) == 2 and record["relu"] is None


def test_record_round_trip_restores_values_and_ids() -> None:
    source = net()
    source.first.stats.update(Tensor.from_floats([5.0, 6.0], DEVICE))
    target = net()
    loaded = target.load_record(source.into_record())
    for (_, a), (_, b) in zip(source.named_parameters(), loaded.named_parameters(), strict=True):
        assert a.id == b.id
        np.testing.assert_array_equal(arr(a.val()), arr(b.val()))
    assert loaded.first.stats.value().to_data().to_list() == [5.0, 6.0]
    assert loaded.first.stats.id == source.first.stats.id
    # The module it was loaded into is unchanged.
    assert target.first.fc.weight.id != source.first.fc.weight.id


def test_record_loads_onto_the_module_device_and_keeps_it_trainable() -> None:
    loaded = net(AD).load_record(net(DEVICE).into_record())
    assert loaded.devices() == [AD]
    assert all(param.val().is_require_grad() for param in loaded.parameters())


def test_record_accepts_numpy_and_tensor_data_values() -> None:
    model = LinearConfig(2, 2).init(DEVICE)
    weights = np.arange(4, dtype=np.float64).reshape(2, 2)
    zeros = Tensor.zeros((2,), DEVICE).to_data()
    record = {"weight": {"id": "7", "param": weights}, "bias": {"param": zeros}}
    loaded = model.load_record(record)
    assert loaded.bias is not None and model.bias is not None
    assert loaded.weight.id == ParamId(7) and loaded.bias.id == model.bias.id
    assert loaded.weight.val().to_data().to_list() == [[0.0, 1.0], [2.0, 3.0]]
    assert loaded.weight.val().dtype == model.weight.val().dtype


def test_record_with_wrong_shape_names_the_parameter_and_both_shapes() -> None:
    record = net().into_record()
    record["blocks"][1]["fc"]["weight"]["param"] = Tensor.zeros((2, 5), DEVICE)
    with pytest.raises(ValueError, match=r"blocks\.1\.fc\.weight.*\[2, 5\].*\[2, 4\]"):
        net().load_record(record)


def test_record_with_missing_or_extra_entries_is_refused() -> None:
    record = net().into_record()
    del record["first"]["scale"]
    with pytest.raises(ValueError, match=r"missing 'first\.scale'"):
        net().load_record(record)
    record = net().into_record()
    record["first"]["bogus"] = {}
    with pytest.raises(ValueError, match=r"first\.bogus"):
        net().load_record(record)
    record = net().into_record()
    record["blocks"] = record["blocks"][:1]
    with pytest.raises(ValueError, match=r"blocks.*expected 2 items, found 1"):
        net().load_record(record)
    with pytest.raises(ValueError, match=r"extra.*None"):
        net(extra=False).load_record(net(extra=True).into_record())
    with pytest.raises(ValueError, match=r"no value for 'extra' \(None\)"):
        net(extra=True).load_record(net(extra=False).into_record())


def test_record_value_of_wrong_type_is_refused() -> None:
    record = net().into_record()
    record["first"]["scale"] = [1.0, 2.0]
    with pytest.raises(ValueError, match=r"first\.scale"):
        net().load_record(record)
    record = net().into_record()
    record["first"]["scale"]["param"] = "weights"
    with pytest.raises(ValueError, match=r"first\.scale.*str"):
        net().load_record(record)


# ------------------------------------------------------------------ backends and devices


def test_valid_moves_everything_to_the_inner_backend() -> None:
    model = net(AD)
    valid = model.valid()
    assert valid.devices() == [DEVICE]
    assert model.devices() == [AD]
    for (_, a), (_, b) in zip(model.named_parameters(), valid.named_parameters(), strict=True):
        assert a.id == b.id
        np.testing.assert_array_equal(arr(a.val()), arr(b.val()))
    x = Tensor.ones((1, 3), DEVICE)
    np.testing.assert_allclose(
        arr(valid.first.fc.forward(x)), arr(model.first.fc.forward(Tensor.from_inner(x))), rtol=1e-6
    )
    # On a plain backend valid() changes nothing.
    assert net().valid().devices() == [DEVICE]


def test_no_grad_keeps_values_but_stops_training() -> None:
    model = net(AD).no_grad()
    assert not any(param.is_require_grad() for param in model.parameters())
    loss = model.first.fc.forward(Tensor.ones((1, 3), AD).require_grad()).sum()
    grads = loss.backward()
    assert model.first.fc.weight.val().grad(grads) is None


def test_to_device_and_fork_move_the_module() -> None:
    model = net(DEVICE)
    moved = model.to_device(AD)
    assert moved.devices() == [AD] and model.devices() == [DEVICE]
    assert all(param.val().is_require_grad() for param in moved.parameters())
    forked = moved.fork(AD)
    assert forked.first.fc.weight.val() is not moved.first.fc.weight.val()
    assert forked.first.fc.weight.id == moved.first.fc.weight.id
    with pytest.raises(TypeError, match="Device"):
        model.to_device("cpu")  # type: ignore[arg-type]


def test_gradients_reach_parameters_through_a_module_forward() -> None:
    model = LinearConfig(3, 2).init(AD)
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32)
    loss = model.forward(Tensor.from_floats(x, AD)).sum()
    grads = loss.backward()
    grad = model.weight.val().grad(grads)
    assert grad is not None
    np.testing.assert_allclose(arr(grad), x.T @ np.ones((2, 2)), rtol=1e-6)


# ------------------------------------------------------------------ dataclass behaviour and repr


def test_subclasses_are_dataclasses_with_identity_equality() -> None:
    a = LinearConfig(2, 2).init(DEVICE)
    b = Linear(a.weight, a.bias)
    assert a != b and a == a
    assert b.weight is a.weight
    with pytest.raises(TypeError):
        Linear(a.weight)  # type: ignore[call-arg]


def test_repr_is_burns_module_display() -> None:
    # Burn's ModuleDisplay: parameters as ParamTensor, running states by name, lists as
    # Vec<0..n>, and params counting running states too (Burn's num_params).
    text = repr(net(extra=True))
    block = (
        "Block {{\n{p}  fc: Linear {{d_input: {i}, d_output: {o}, bias: true, params: {n}}}\n"
        "{p}  scale: ParamTensor {{rank: 1, shape: [{o}], kind: float}}\n{p}  stats: RunningState\n"
        "{p}  label: b\n{p}  params: {total}\n{p}}}"
    )
    expected = (
        "Net {\n"
        f"  first: {block.format(p='  ', i=3, o=2, n=8, total=12)}\n"
        "  blocks: Vec<0..2> {\n"
        f"    0: {block.format(p='    ', i=2, o=2, n=6, total=10)}\n"
        f"    1: {block.format(p='    ', i=2, o=4, n=12, total=20)}\n"
        "  }\n"
        "  extra: Linear {d_input: 4, d_output: 1, bias: true, params: 5}\n"
        "  relu: Relu\n"
        "  width: 7\n"
        "  params: 47\n"
        "}"
    )
    assert text == expected
    assert net(extra=True).num_params() == 47 - 8
    assert repr(Relu()) == "Relu"


def test_running_state_update_is_checked_and_detached() -> None:
    state: RunningState[Tensor[Any, D1]] = RunningState(Tensor.zeros((2,), AD))
    tracked = Tensor.ones((2,), AD).require_grad() * 2.0
    state.update(tracked)
    assert not state.value().is_require_grad()
    with pytest.raises(ValueError, match=r"\[2\].*\[3\]"):
        state.update(Tensor.zeros((3,), AD))


def test_generic_annotations_are_subscriptable_at_run_time() -> None:
    alias: Any = Linear[NdArray]
    assert alias.__origin__ is Linear
    hint: Any = Param[Tensor[NdArray, D2]]
    assert hint.__origin__ is Param
    # `self: Model[Autodiff[I]]` in a generic method: Autodiff of a type variable is an alias too.
    inner = TypeVar("inner", bound=Backend)
    decorated: Any = Linear[Autodiff[inner]]  # type: ignore[valid-type]
    # The checkpoint strategy, left out, is filled with its default (Any to the type checker).
    assert decorated.__args__[0].__origin__ is Autodiff and decorated.__args__[0].__args__[0] is inner
    with pytest.raises(TypeError, match="decorates a plain backend such as NdArray, found <class 'int'>"):
        Autodiff[int]  # type: ignore[type-var]


# ------------------------------------------------------------------ typing (mypy with the ferrum.mypy plugin)

TYPING_SNIPPET = '''
from typing import TypeVar

from ferrum import D2, Int, Tensor
from ferrum.backend import Autodiff, Backend, NdArray
from ferrum.module import Module
from ferrum.nn import Linear, LinearConfig, Relu

B = TypeVar("B", bound=Backend)


class Mlp(Module[B]):
    fc: Linear[B]
    act: Relu

    def forward(self, x: Tensor[B, D2]) -> Tensor[B, D2]:
        return self.act.forward(self.fc.forward(x))


train = Mlp(fc=LinearConfig(2, 2).init(Autodiff[NdArray].device()), act=Relu())
valid = train.valid()
reveal_type(valid)
plain = Tensor.ones((1, 2), NdArray.device())
valid.forward(plain)
train.forward(plain)
reveal_type(Relu().valid())
linear = LinearConfig(2, 2).init(NdArray.device())
reveal_type(linear.valid())
ids: Tensor[NdArray, D2, Int] = Tensor.from_ints([[1, 2]], NdArray.device())
valid.fc.forward(ids)
Mlp(fc=valid.fc)
'''


def test_mypy_types_valid_as_the_module_on_the_inner_backend(tmp_path: Path) -> None:
    from mypy import api

    (tmp_path / "snippet.py").write_text(TYPING_SNIPPET)
    config = tmp_path / "mypy.ini"
    repo_python = Path(__file__).resolve().parents[2] / "python"
    config.write_text(f"[mypy]\nstrict = True\nmypy_path = {repo_python}\nplugins = ferrum.mypy\n")
    stdout, _, _ = api.run(
        ["--config-file", str(config), "--cache-dir", str(tmp_path / "cache"), "--no-error-summary",
         str(tmp_path / "snippet.py")]
    )
    lines = {int(line.split(":")[1]): line for line in stdout.splitlines() if "snippet.py:" in line}
    source = TYPING_SNIPPET.splitlines()

    def at(text: str) -> str:
        return lines.get(source.index(text) + 1, "")

    assert 'Revealed type is "snippet.Mlp[ferrum.backend.NdArray]"' in at("reveal_type(valid)")
    assert at("valid.forward(plain)") == ""
    assert "incompatible type" in at("train.forward(plain)")
    assert 'Revealed type is "ferrum.nn.activation.Relu"' in at("reveal_type(Relu().valid())")
    assert "Linear[ferrum.backend.NdArray]" in at("reveal_type(linear.valid())")
    assert "incompatible type" in at("valid.fc.forward(ids)")
    assert 'Missing positional argument "act"' in at("Mlp(fc=valid.fc)")
    expected_lines = {source.index(text) + 1 for text in (
        "reveal_type(valid)", "train.forward(plain)", "reveal_type(Relu().valid())",
        "reveal_type(linear.valid())", "valid.fc.forward(ids)",
        "Mlp(fc=valid.fc)",
    )}
    assert set(lines) == expected_lines, stdout
