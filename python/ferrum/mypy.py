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
import sys
from collections.abc import Callable
from pathlib import Path

from mypy.nodes import ARG_POS, Argument, DataclassTransformSpec, TypeInfo, Var
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
from mypy.types import AnyType, Instance, NoneType, ProperType, Type, TypeOfAny, UnionType, get_proper_type
from mypy.typevars import fill_typevars

__all__ = ["FerrumPlugin", "plugin"]

CONFIG_DECORATOR = "ferrum.config.config"
MODULE_CLASS = "ferrum.module.base.Module"
LAUNCH_METHOD = "ferrum.train.supervised.SupervisedTraining.launch"
LEARNER_CLASS = "ferrum.train.learner.Learner"
BACKEND_CLASS = "ferrum.backend.Backend"
AUTODIFF_CLASS = "ferrum.backend.Autodiff"

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
    """``launch(Learner[M[Autodiff[I]]]) -> LearningResult[M[I]]``: the result holds ``model.valid()``."""
    returned = get_proper_type(ctx.default_return_type)
    if not isinstance(returned, Instance) or len(returned.args) != 1:
        return ctx.default_return_type
    model = get_proper_type(returned.args[0])
    if not (isinstance(model, Instance) and model.type.has_base(MODULE_CLASS)):
        return ctx.default_return_type
    inner = model.copy_modified(args=[_strip_autodiff(arg) for arg in model.args])
    return returned.copy_modified(args=[inner])


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
_METHOD_NAME_HOOKS: dict[str, _MethodHook] = {"valid": module_valid}
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
