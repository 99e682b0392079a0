"""mypy plugin for ferrum: types what plain annotations cannot express.

Enable it in the mypy configuration, as with ``pydantic.mypy``::

    [tool.mypy]
    plugins = ["ferrum.mypy"]

What it adds:

- ``@config`` classes are frozen dataclasses (the generated ``__init__`` is
  checked: a missing required field is an error), with a typed
  ``with_<field>(value) -> <Config>`` builder per field, ``save(path)``,
  ``load(path) -> <Config>`` (a classmethod), ``to_dict()`` and
  ``from_dict(data) -> <Config>``.
- ``module.valid()`` on a ``M[Autodiff[I]]`` (any ``Module`` subclass) is a
  ``M[I]``: the module re-parametrised with the inner backend.
- ``SupervisedTraining.launch(Learner(model, ...))`` with a ``M[Autodiff[I]]``
  model returns a ``LearningResult[M[I]]``: ``result.model`` is the trained
  model on the inner backend, as ``valid()`` gives it.
- ``Learner(model, ...)`` with a model on a plain backend (``M[NdArray]``) is
  an error: the Learner trains on an autodiff backend, as ``backward()`` and
  the model's ``train_step(self: M[Autodiff[I]], ...)`` need.
- ``SupervisedTraining.launch(learner)`` checks what Burn's trait bounds
  check (``TrainStep``, ``InferenceStep``, the loaders' item types, the
  metrics' ``Adaptor``): the model is on an autodiff backend (also when it
  came through a generic helper), it has a ``train_step`` returning a
  ``TrainOutput`` and an ``inference_step``; the training loader's batches
  are what ``train_step`` takes, the validation loader's what
  ``model.valid().inference_step`` takes (on the inner backend); and every
  metric registered in the builder chain ending in ``launch`` (``metrics``,
  ``metric_train``, ...) reads the step output of its split.
- ``load_record`` takes records of its own kind, as Burn's ``Module::Record``
  and the optimizer's record types say: a module's ``into_record()`` (a
  ``ModuleRecord[M]``) loads into a module of that class only, and never into
  an optimizer; an optimizer's ``to_record()`` never into a module. Records
  read from files (plain dicts) load anywhere, checked at run time.
- ``M[NdArray].to_device(Autodiff[NdArray].device())`` is a
  ``M[Autodiff[NdArray]]`` (Burn's ``AutodiffModule::from_inner``).
- A name may be bound again to a value of another type (mypy's
  ``allow_redefinition``, turned on for the checked project): tensor code
  rebinds names whose type changes with each step, ``x = x.reshape((b, d))``
  turning a ``Tensor[B, D3]`` into a ``Tensor[B, D2]``, ``_`` holding a state
  and then a loop counter, a batch moving from the training backend to the
  inner one. mypy checks each binding at its own type, so uses stay checked.
  It needs mypy >= 1.16 with local partial types (mypy 2's default); turn it
  off with ``allow_redefinition = false`` in a ``[ferrum-mypy]`` section of
  ``mypy.ini``/``setup.cfg`` or ``[tool.ferrum-mypy]`` in ``pyproject.toml``.

Example (checked by mypy with the plugin)::

    @config
    class ExperimentConfig:
        hidden_size: int
        dropout: float = 0.5

    ExperimentConfig(64).with_dropout("high")  # error: expected "float"
    ExperimentConfig()                         # error: missing "hidden_size"

Hooks are looked up by the fully qualified name of what they type, in the
tables at the end of this file: a new hook is a function and a table entry
(plus, for a kind of hook not used yet, a table and its getter on
``FerrumPlugin``).
"""

from __future__ import annotations

import configparser
import re
import sys
from collections.abc import Callable
from pathlib import Path

from mypy import errorcodes as codes
from mypy.checker import TypeChecker
from mypy.messages import format_type
from mypy.nodes import (
    ARG_POS,
    Argument,
    CallExpr,
    Context,
    DataclassTransformSpec,
    Expression,
    MemberExpr,
    TypeInfo,
    Var,
)
from mypy.options import Options
from mypy.plugin import (
    ClassDefContext,
    FunctionContext,
    MethodContext,
    Plugin,
    SemanticAnalyzerPluginInterface,
)
from mypy.plugins.common import add_method_to_class
from mypy.plugins.dataclasses import DataclassAttribute, DataclassTransformer, dataclass_tag_callback
from mypy.subtypes import is_subtype
from mypy.types import (
    AnyType,
    CallableType,
    Instance,
    NoneType,
    ProperType,
    Type,
    TypeOfAny,
    TypeVarType,
    UnionType,
    get_proper_type,
)
from mypy.typevars import fill_typevars

__all__ = ["FerrumPlugin", "plugin"]

CONFIG_DECORATOR = "ferrum.config.config"
MODULE_CLASS = "ferrum.module.base.Module"
LAUNCH_METHOD = "ferrum.train.supervised.SupervisedTraining.launch"
LEARNER_CLASS = "ferrum.train.learner.Learner"
BACKEND_CLASS = "ferrum.backend.Backend"
AUTODIFF_CLASS = "ferrum.backend.Autodiff"
DEVICE_CLASS = "ferrum._ferrum._device.Device"
OPTIMIZER_CLASS = "ferrum.optim.base.Optimizer"
MODULE_RECORD_CLASS = "ferrum.record.base.ModuleRecord"
OPTIMIZER_RECORD_CLASS = "ferrum.record.base.OptimizerRecord"
TRAIN_OUTPUT_CLASS = "ferrum.train.step.TrainOutput"
# SupervisedTraining's builder methods that register metrics, and the splits each registers on.
_METRIC_METHODS: dict[str, tuple[str, ...]] = {
    "metrics": ("train", "valid"),
    "metrics_text": ("train", "valid"),
    "metric_train": ("train",),
    "metric_train_numeric": ("train",),
    "metric_valid": ("valid",),
    "metric_valid_numeric": ("valid",),
}


def _shown(t: Type, options: Options) -> str:
    """``format_type``, with ``Autodiff[X, Any]`` (the default strategy argument) shown as users write it."""
    return re.sub(r"Autodiff\[(\w+), Any\]", r"Autodiff[\1]", format_type(t, options))


# `@config` is `dataclass(frozen=True)`; mirrors the decorator's @dataclass_transform(frozen_default=True).
_CONFIG_SPEC = DataclassTransformSpec(frozen_default=True)


def transform_config(ctx: ClassDefContext) -> bool:
    """Second-pass hook for ``@config``: the dataclass transform, then the config methods.

    Returns False while a field type is not ready yet, so mypy calls it again.
    """
    transformer = DataclassTransformer(ctx.cls, ctx.reason, _CONFIG_SPEC, ctx.api)
    if not transformer.transform():
        return False
    info = ctx.cls.info
    self_type = fill_typevars(info)
    for attribute in _dataclass_attributes(info, ctx.api):
        field_type = attribute.expand_type(info)
        if not attribute.is_in_init or field_type is None:
            continue
        _add_method(ctx, f"with_{attribute.name}", [_arg("value", field_type)], self_type)
    path_type = _path_type(ctx.api)
    any_type = AnyType(TypeOfAny.explicit)
    str_type = ctx.api.named_type("builtins.str")
    _add_method(ctx, "save", [_arg("path", path_type)], NoneType())
    _add_method(ctx, "load", [_arg("path", path_type)], self_type, is_classmethod=True)
    _add_method(ctx, "to_dict", [], ctx.api.named_type("builtins.dict", [str_type, any_type]))
    mapping = ctx.api.named_type("typing.Mapping", [str_type, any_type])
    _add_method(ctx, "from_dict", [_arg("data", mapping)], self_type, is_classmethod=True)
    return True


def _dataclass_attributes(info: TypeInfo, api: SemanticAnalyzerPluginInterface) -> list[DataclassAttribute]:
    # The transformer stores the fields, inherited ones included, in the class metadata.
    return [
        DataclassAttribute.deserialize(info, data, api)
        for data in info.metadata["dataclass"]["attributes"]
    ]


def _path_type(api: SemanticAnalyzerPluginInterface) -> Type:
    str_type = api.named_type("builtins.str")
    path_like = api.named_type_or_none("os.PathLike", [str_type])
    return str_type if path_like is None else UnionType([str_type, path_like])


def _arg(name: str, typ: Type) -> Argument:
    return Argument(Var(name, typ), typ, None, ARG_POS)


def _add_method(
    ctx: ClassDefContext, name: str, args: list[Argument], returns: Type, *, is_classmethod: bool = False
) -> None:
    existing = ctx.cls.info.names.get(name)
    # A method the user wrote in the class body wins, as it does at run time.
    if existing is not None and not existing.plugin_generated:
        return
    add_method_to_class(ctx.api, ctx.cls, name, args=args, return_type=returns, is_classmethod=is_classmethod)


def module_valid(ctx: MethodContext) -> Type:
    """``M[Autodiff[I]].valid() -> M[I]``: every ``Autodiff[I]`` type argument becomes ``I``."""
    returned = get_proper_type(ctx.default_return_type)
    receiver = get_proper_type(ctx.type)
    if not (isinstance(receiver, Instance) and receiver.type.has_base(MODULE_CLASS)):
        return ctx.default_return_type
    if not isinstance(returned, Instance) or returned.type is not receiver.type:
        return ctx.default_return_type
    return returned.copy_modified(args=[_strip_autodiff(arg) for arg in returned.args])


def training_launch(ctx: MethodContext) -> Type:
    """``launch(Learner[M[Autodiff[I]]]) -> LearningResult[M[I]]``: the result holds ``model.valid()``.

    Before that, the learner is checked against the run (``_check_launch``).
    """
    if isinstance(ctx.api, TypeChecker):
        _check_launch(ctx, ctx.api)
    returned = get_proper_type(ctx.default_return_type)
    if not isinstance(returned, Instance) or len(returned.args) != 1:
        return ctx.default_return_type
    model = get_proper_type(returned.args[0])
    if not (isinstance(model, Instance) and model.type.has_base(MODULE_CLASS)):
        return ctx.default_return_type
    inner = model.copy_modified(args=[_strip_autodiff(arg) for arg in model.args])
    return returned.copy_modified(args=[inner])


def _check_launch(ctx: MethodContext, api: TypeChecker) -> None:
    """What Burn's bounds on ``Learner`` and ``SupervisedTraining`` reject, reported as type errors."""
    learner = get_proper_type(ctx.arg_types[0][0]) if ctx.arg_types and ctx.arg_types[0] else None
    if not (isinstance(learner, Instance) and learner.type.fullname == LEARNER_CLASS and learner.args):
        return
    model = get_proper_type(learner.args[0])
    if not (isinstance(model, Instance) and model.type.has_base(MODULE_CLASS)):
        return
    plain = _plain_backend(model)
    if plain is not None:
        api.fail(
            "launch trains the Learner's model on an autodiff backend"
            f' (e.g. "Autodiff[{plain.type.name}]"), found "{model.type.name}[{plain.type.name}]"',
            ctx.context,
            code=codes.ARG_TYPE,
        )
        return
    if any(isinstance(get_proper_type(arg), TypeVarType) for arg in model.args):
        return  # a generic model: its backend is only known where the helper is called
    loaders = get_proper_type(ctx.type)
    batches = loaders.args if isinstance(loaders, Instance) and len(loaders.args) == 2 else None
    train_item = _check_step(ctx, api, model, "train_step", batches[0] if batches else None)
    inner = model.copy_modified(args=[_strip_autodiff(arg) for arg in model.args])
    valid_item = _check_step(ctx, api, inner, "inference_step", batches[1] if batches else None)
    items = {"train": train_item, "valid": valid_item}
    for split_names, metric in _chained_metrics(ctx.context):
        for split in split_names:
            item = items[split]
            if item is not None:
                _check_metric(api, metric, item, split, ctx.context)


def _check_step(
    ctx: MethodContext, api: TypeChecker, model: Instance, method: str, batch: Type | None
) -> Type | None:
    """Check ``model.<method>`` against the loader's ``batch``; the step output (None: unknown)."""
    name = _type_name(model, api)
    burn = "TrainStep" if method == "train_step" else "InferenceStep"
    if model.type.get(method) is None:
        api.fail(
            f"{name} has no {method}(batch) method: the Learner needs it"
            f" (Burn's {burn}; see ferrum.train.step)",
            ctx.context,
            code=codes.ARG_TYPE,
        )
        return None
    with api.msg.filter_errors():
        bound = get_proper_type(api.expr_checker.analyze_external_member_access(method, model, ctx.context))
    if not isinstance(bound, CallableType) or not bound.arg_types:
        return None
    returned = get_proper_type(bound.ret_type)
    item: Type | None = bound.ret_type
    if method == "train_step":
        item = None
        if isinstance(returned, Instance) and returned.type.fullname == TRAIN_OUTPUT_CLASS:
            item = returned.args[0] if returned.args else None
        elif not isinstance(returned, AnyType):
            api.fail(
                f"{name}.train_step must return a TrainOutput (TrainOutput(self, loss.backward(), item)),"
                f" found {_shown(bound.ret_type, api.options)}",
                ctx.context,
                code=codes.ARG_TYPE,
            )
    if batch is not None and not is_subtype(batch, bound.arg_types[0]):
        loader, where = (
            ("dataloader_train", "training batches are on the autodiff backend the model trains on")
            if method == "train_step"
            else ("dataloader_valid", "validation runs model.valid(), on the inner backend")
        )
        api.fail(
            f"{loader} yields {_shown(batch, api.options)}, but {name}.{method} takes"
            f" {_shown(bound.arg_types[0], api.options)} ({where})",
            ctx.context,
            code=codes.ARG_TYPE,
        )
    return item if item is None else _synced(api, item, ctx.context)


def _synced(api: TypeChecker, item: Type, context: Context) -> Type:
    """What metrics see: ``item.sync()`` where the item has one (Burn's ``ItemLazy``)."""
    proper = get_proper_type(item)
    if not (isinstance(proper, Instance) and proper.type.get("sync") is not None):
        return item
    with api.msg.filter_errors():
        sync = get_proper_type(api.expr_checker.analyze_external_member_access("sync", proper, context))
    return sync.ret_type if isinstance(sync, CallableType) and not sync.arg_types else item


def _chained_metrics(call: Context) -> list[tuple[tuple[str, ...], Expression]]:
    """The metric arguments of the builder calls chained before ``.launch(...)``."""
    found: list[tuple[tuple[str, ...], Expression]] = []
    if not (isinstance(call, CallExpr) and isinstance(call.callee, MemberExpr)):
        return found
    expr = call.callee.expr
    while isinstance(expr, CallExpr) and isinstance(expr.callee, MemberExpr):
        splits = _METRIC_METHODS.get(expr.callee.name)
        if splits is not None:
            found.extend((splits, arg) for arg in expr.args)
        expr = expr.callee.expr
    return found


def _check_metric(api: TypeChecker, metric: Expression, item: Type, split: str, context: Context) -> None:
    """The metric's ``update`` must take the split's step output (Burn ties them through ``Adaptor``)."""
    try:
        metric_type = get_proper_type(api.lookup_type(metric))
    except KeyError:
        return
    if not isinstance(metric_type, Instance) or metric_type.type.get("update") is None:
        return
    with api.msg.filter_errors():
        update = get_proper_type(
            api.expr_checker.analyze_external_member_access("update", metric_type, context)
        )
    if not isinstance(update, CallableType) or not update.arg_types:
        return
    if not is_subtype(item, update.arg_types[0]):
        output = "training" if split == "train" else "validation"
        api.fail(
            f"{metric_type.type.name} cannot read the {output} step output {_shown(item, api.options)}:"
            f" its update takes {_shown(update.arg_types[0], api.options)}"
            " (Burn's Adaptor; see ferrum.train.metric.adaptor)",
            metric,
            code=codes.ARG_TYPE,
        )


def record_kind(ctx: MethodContext) -> Type:
    """``load_record(record)``: a record of another module class, or another kind of owner, is an error."""
    receiver = get_proper_type(ctx.type)
    record = get_proper_type(ctx.arg_types[0][0]) if ctx.arg_types and ctx.arg_types[0] else None
    if not (isinstance(receiver, Instance) and isinstance(record, Instance)):
        return ctx.default_return_type
    owner = receiver.type.name
    made_by = get_proper_type(record.args[0]) if record.args else None
    if record.type.fullname == MODULE_RECORD_CLASS and isinstance(made_by, Instance):
        maker = made_by.type.name
        if receiver.type.has_base(OPTIMIZER_CLASS):
            ctx.api.fail(
                f"{owner}.load_record takes an optimizer's record (optimizer.to_record()),"
                f" found the record of a {maker} module ({maker}.into_record())",
                ctx.context,
                code=codes.ARG_TYPE,
            )
        elif receiver.type.has_base(MODULE_CLASS) and not (
            receiver.type.has_base(made_by.type.fullname) or made_by.type.has_base(receiver.type.fullname)
        ):
            ctx.api.fail(
                f"{owner}.load_record takes the record of a {owner}, found the record of a {maker}"
                f" ({maker}.into_record(); Burn's Module::Record)",
                ctx.context,
                code=codes.ARG_TYPE,
            )
    elif record.type.fullname == OPTIMIZER_RECORD_CLASS and receiver.type.has_base(MODULE_CLASS):
        ctx.api.fail(
            f"{owner}.load_record takes the record of a {owner} (its into_record()),"
            " found an optimizer's record (optimizer.to_record())",
            ctx.context,
            code=codes.ARG_TYPE,
        )
    return ctx.default_return_type


def module_to_device(ctx: MethodContext) -> Type:
    """``M[I].to_device(Device[Autodiff[I]]) -> M[Autodiff[I]]``: Burn's ``AutodiffModule::from_inner``."""
    receiver = get_proper_type(ctx.type)
    returned = get_proper_type(ctx.default_return_type)
    device = get_proper_type(ctx.arg_types[0][0]) if ctx.arg_types and ctx.arg_types[0] else None
    if not (
        isinstance(receiver, Instance)
        and receiver.type.has_base(MODULE_CLASS)
        and isinstance(returned, Instance)
        and returned.type is receiver.type
        and isinstance(device, Instance)
        and device.type.fullname == DEVICE_CLASS
        and device.args
    ):
        return ctx.default_return_type
    target = get_proper_type(device.args[0])
    if not (isinstance(target, Instance) and target.type.fullname == AUTODIFF_CLASS and target.args):
        return ctx.default_return_type
    inner = get_proper_type(target.args[0])
    args = [
        target if isinstance(get_proper_type(arg), Instance) and get_proper_type(arg) == inner else arg
        for arg in returned.args
    ]
    return returned.copy_modified(args=args)


def _plain_backend(model: Instance) -> Instance | None:
    """The first backend argument of ``model`` that is a plain backend (``NdArray``), if any."""
    for arg in model.args:
        backend = get_proper_type(arg)
        if (
            isinstance(backend, Instance)
            and backend.type.has_base(BACKEND_CLASS)
            and not backend.type.has_base(AUTODIFF_CLASS)
        ):
            return backend
    return None


def _type_name(model: Instance, api: TypeChecker) -> str:
    return _shown(model, api.options).strip('"')


def learner_model_on_autodiff(ctx: FunctionContext) -> Type:
    """``Learner(model, ...)``: a model whose backend is a plain one (``Net[NdArray]``) is an error."""
    if ctx.arg_types and ctx.arg_types[0]:
        model = get_proper_type(ctx.arg_types[0][0])
        if isinstance(model, Instance) and model.type.has_base(MODULE_CLASS):
            for arg in model.args:
                backend = get_proper_type(arg)
                if (
                    isinstance(backend, Instance)
                    and backend.type.has_base(BACKEND_CLASS)
                    and not backend.type.has_base(AUTODIFF_CLASS)
                ):
                    ctx.api.fail(
                        "Learner trains a model on an autodiff backend"
                        f' (e.g. "Autodiff[{backend.type.name}]"),'
                        f' found "{model.type.name}[{backend.type.name}]"',
                        ctx.context,
                    )
                    break
    return ctx.default_return_type


def _strip_autodiff(arg: Type) -> Type:
    proper: ProperType = get_proper_type(arg)
    if isinstance(proper, Instance) and proper.type.fullname == AUTODIFF_CLASS and proper.args:
        return proper.args[0]
    return arg


_ClassHook = Callable[[ClassDefContext], None]
_ClassHook2 = Callable[[ClassDefContext], bool]

# First pass (main semantic analysis): only tag dataclasses, so subclasses see their bases as such.
_CLASS_DECORATOR_HOOKS: dict[str, _ClassHook] = {CONFIG_DECORATOR: dataclass_tag_callback}
_MethodHook = Callable[[MethodContext], Type]
# Method hooks are looked up by the receiver's class, so these match on the method name;
# the hook itself checks that the receiver is a Module.
_METHOD_NAME_HOOKS: dict[str, _MethodHook] = {
    "valid": module_valid,
    "to_device": module_to_device,
    "load_record": record_kind,
}
# Methods of one class, by fully qualified name.
_METHOD_HOOKS: dict[str, _MethodHook] = {LAUNCH_METHOD: training_launch}
_FunctionHook = Callable[[FunctionContext], Type]
# Calls of functions and classes, by fully qualified name.
_FUNCTION_HOOKS: dict[str, _FunctionHook] = {LEARNER_CLASS: learner_model_on_autodiff}
# Second pass (after semantic analysis, all types known).
_CLASS_DECORATOR_HOOKS_2: dict[str, _ClassHook2] = {CONFIG_DECORATOR: transform_config}


def _settings(config_file: str | None) -> dict[str, object]:
    """The ``[ferrum-mypy]`` (ini) or ``[tool.ferrum-mypy]`` (pyproject) section of mypy's config file."""
    if config_file is None or not Path(config_file).is_file():
        return {}
    path = Path(config_file)
    if path.suffix == ".toml":
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # mypy itself depends on tomli before Python 3.11
            import tomli as tomllib
        with path.open("rb") as stream:
            table = tomllib.load(stream).get("tool", {}).get("ferrum-mypy", {})
        return dict(table) if isinstance(table, dict) else {}
    parser = configparser.ConfigParser()
    parser.read(path)
    if not parser.has_section("ferrum-mypy"):
        return {}
    section = parser["ferrum-mypy"]
    return {key: section.getboolean(key) for key in section}


def _allow_redefinition(options: Options) -> None:
    """Turn on mypy's flexible redefinition, unless the project's config turns it off.

    The flag is per module in mypy's ``Options``; set on the global options
    before any module's options are derived from them, every module gets it.
    mypy 2 calls flexible redefinition ``allow_redefinition`` (the old, same-block
    kind became ``allow_redefinition_old``); mypy 1.16-1.x calls it
    ``allow_redefinition_new``. Both need local partial types, which this does
    not turn on behind the user's back.
    """
    if _settings(options.config_file).get("allow_redefinition", True) is False:
        return
    if not options.local_partial_types:
        return
    if hasattr(options, "allow_redefinition_old"):
        if not options.allow_redefinition_old:
            options.allow_redefinition = True
    elif hasattr(options, "allow_redefinition_new"):
        options.allow_redefinition_new = True


class FerrumPlugin(Plugin):
    """Dispatches mypy's hooks to ferrum's, by fully qualified name."""

    def __init__(self, options: Options) -> None:
        _allow_redefinition(options)
        super().__init__(options)

    def get_class_decorator_hook(self, fullname: str) -> _ClassHook | None:
        """The first hook of ``@config``: it tags the class as a dataclass, as ``@dataclass`` does."""
        return _CLASS_DECORATOR_HOOKS.get(fullname)

    def get_class_decorator_hook_2(self, fullname: str) -> _ClassHook2 | None:
        """The second hook of ``@config``, once field types are known: its builders and JSON methods."""
        return _CLASS_DECORATOR_HOOKS_2.get(fullname)

    def get_function_hook(self, fullname: str) -> _FunctionHook | None:
        """The hook typing ``Learner(model, ...)``: the model must be on an autodiff backend."""
        return _FUNCTION_HOOKS.get(fullname)

    def get_method_hook(self, fullname: str) -> _MethodHook | None:
        """The hooks typing ``Module.valid()`` and ``SupervisedTraining.launch`` on the inner backend."""
        return _METHOD_HOOKS.get(fullname) or _METHOD_NAME_HOOKS.get(fullname.rpartition(".")[2])


def plugin(version: str) -> type[Plugin]:
    """Entry point mypy calls with its version string."""
    return FerrumPlugin
