"""``Module``: Burn's Module trait, as a typed dataclass base class.

Subclass ``Module[B]`` and declare fields: parameters (``Param[...]``),
sub-modules, lists of sub-modules, optional sub-modules (``X | None``) or
constants. The subclass becomes a dataclass (keyword or positional
construction, identity equality). Modules are values: ``map``, ``valid``,
``no_grad``, ``fork``, ``to_device`` and ``load_record`` return new modules
and leave the original as it was.

Example:
    >>> from typing import TypeVar
    >>> from ferrum import D2, Tensor
    >>> from ferrum.backend import Backend, NdArray
    >>> from ferrum.module import Module, Param
    >>> B = TypeVar("B", bound=Backend)
    >>> class Scale(Module[B]):
    ...     weight: Param[Tensor[B, D2]]
    ...     factor: float
    ...     def forward(self, x: Tensor[B, D2]) -> Tensor[B, D2]:
    ...         return x * self.weight.val() * self.factor
    >>> scale = Scale(Param(Tensor.ones((1, 3), NdArray.device())), 2.0)
    >>> scale.num_params(), [name for name, _ in scale.named_parameters()]
    (3, ['weight'])
    >>> scale(Tensor.ones((2, 3), NdArray.device())).dims()  # model(x) is model.forward(x)
    (2, 3)
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from typing_extensions import Self, dataclass_transform

from ferrum._ferrum import Device, Float, Tensor
from ferrum.backend import Autodiff
from ferrum.module import declaration, display, sealed, tree
from ferrum.module.call import CallForward
from ferrum.module.param import Param, ParamId, RunningState
from ferrum.module.record import into_record as _into_record
from ferrum.module.record import load_record as _load_record
from ferrum.record import ModuleRecord
from ferrum.tensor.type_vars import B

if TYPE_CHECKING:
    from ferrum.quantization.quantizer import Quantizer
    from ferrum.record import FileRecorder

__all__ = ["Module", "ModuleMapper", "ModuleVisitor", "TensorStore"]

M = TypeVar("M", bound="Module[Any]")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class ModuleVisitor(Protocol):
    """Reads every float tensor of a module (parameters and running states), by id.

    Example:
        >>> class Counter:
        ...     def __init__(self) -> None:
        ...         self.total = 0
        ...     def visit_float(self, id, tensor) -> None:
        ...         self.total += tensor.num_elements()
    """

    def visit_float(self, id: ParamId, tensor: Tensor[Any, Any, Float]) -> None:
        """Called once per tensor, in declaration order."""
        ...


class ModuleMapper(Protocol):
    """Replaces every float tensor of a module, by id; ``Module.map`` builds the new module.

    Example:
        >>> class Halve:
        ...     def map_float(self, id, tensor):
        ...         return tensor * 0.5
    """

    def map_float(self, id: ParamId, tensor: Tensor[Any, Any, Float]) -> Tensor[Any, Any, Float]:
        """The new tensor for ``id``; it must keep the shape."""
        ...


class TensorStore(Protocol[R_co]):
    """A file of tensors a module loads from and saves into: the stores of ``ferrum.store``
    (``PytorchStore``, ``SafetensorsStore``, ``BurnpackStore``), Burn's ``ModuleStore``.

    The store does the work (``load_from`` calls ``store.apply_to(module)``),
    so the module system knows no file format; ``R_co`` is what loading
    reports (``ferrum.store.ApplyResult``).
    """

    def apply_to(self, module: M) -> tuple[M, R_co]:
        """A copy of ``module`` holding the store's tensors, and what was applied."""
        ...

    def collect_from(self, module: Module[Any]) -> None:
        """Write ``module``'s tensors into the store."""
        ...


@dataclass_transform(eq_default=False)
class Module(tree.ModuleNode, Generic[B]):
    """Base class of every module; subclasses are dataclasses over their annotated fields.

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import LinearConfig
        >>> layer = LinearConfig(4, 2).init(NdArray.device())
        >>> layer.num_params()
        10
        >>> layer
        Linear {d_input: 4, d_output: 2, bias: true, params: 10}
    """

    #: Burn records a module that has no backend parameter (``Relu``, ``Dropout``,
    #: the pools) as a constant: nil in the file, whatever settings it holds.
    _constant_record: ClassVar[bool] = False
    #: Record keys of fields whose Burn name Python cannot use (``BiLstm.forward``
    #: would hide the ``forward`` method): ``{field name: key in the record}``.
    _record_keys: ClassVar[Mapping[str, str]] = {}

    #: ``model(x)`` calls ``model.forward(x)``, as in PyTorch and Equinox, with ``forward``'s types.
    __call__ = CallForward()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # repr=False keeps Module.__repr__ (the tree) unless the subclass writes its own.
        dataclasses.dataclass(eq=False, repr=False)(cls)
        init = cls.__dict__.get("__init__")
        if init is not None:
            cls.__init__ = sealed.sealing(init)  # type: ignore[method-assign]

    if not TYPE_CHECKING:
        # Only at run time: a __setattr__ seen by type checkers would let them accept any attribute.

        def __setattr__(self, name: str, value: Any) -> None:
            # PyTorch's habit of assigning layers in __init__ would leave them out of the tree
            # (no parameters, nothing trained or saved): refuse it, showing the field to declare.
            if name not in getattr(self, "__dataclass_fields__", ()) and declaration.holds_tree_value(value):
                raise declaration.undeclared_error(self, name, value)
            # Modules are values, as in Burn: once built, a field only changes in a copy.
            if sealed.is_sealed(self):
                raise sealed.sealed_error(self, name, "assign")
            object.__setattr__(self, name, value)

        def __delattr__(self, name: str) -> None:
            if sealed.is_sealed(self):
                raise sealed.sealed_error(self, name, "delete")
            object.__delattr__(self, name)

    def replace(self, **changes: Any) -> Self:
        """A copy with the fields in ``changes`` set: Burn's struct update ``Linear { bias: None, ..layer }``.

        A built module refuses assignment (``layer.bias = None`` raises
        ``dataclasses.FrozenInstanceError``): modules are values. ``replace``
        is how to change one; the original is left as it was, and the other
        fields (parameters included, with their ids) are shared with it.
        ``__post_init__`` is not run again; ``dataclasses.replace(module, ...)``
        builds the copy through the constructor instead (checked by mypy).

        Raises:
            TypeError: a name in ``changes`` is not a field of the module.

        Example:
            >>> from ferrum.backend import NdArray
            >>> from ferrum.nn import LinearConfig
            >>> layer = LinearConfig(4, 2).init(NdArray.device())
            >>> no_bias = layer.replace(bias=None)
            >>> no_bias.bias is None, layer.bias is not None, no_bias.weight is layer.weight
            (True, True, True)
        """
        names = tree.field_names(self)
        unknown = [name for name in changes if name not in names]
        if unknown:
            raise TypeError(
                f"{type(self).__name__}.replace: no field named {', '.join(map(repr, unknown))};"
                f" its fields are {', '.join(names) or 'none'}"
            )
        return tree.with_fields(self, changes)  # type: ignore[no-any-return]

    def _record_variant(self) -> tuple[str, int, Module[Any]] | None:
        """Burn's enum modules (``Activation``, ``Normalization``): the variant's name,
        its index in the Rust enum and the module it holds; None for a struct module."""
        return None

    def num_params(self) -> int:
        """The number of trainable scalars.

        Running states are not parameters; the module's printed ``params:`` counts them too, as Burn's does.
        """
        return sum(param.num_params() for param in self.parameters())

    def named_parameters(self) -> list[tuple[str, Param[Any]]]:
        """``(dotted path, parameter)`` pairs in declaration order, e.g. ``linear1.weight``."""
        return [(path, leaf) for path, leaf in tree.leaves(self) if isinstance(leaf, Param)]

    def parameters(self) -> list[Param[Any]]:
        """Every parameter, in declaration order."""
        return [param for _, param in self.named_parameters()]

    def visit(self, visitor: ModuleVisitor) -> None:
        """Call ``visitor.visit_float(id, tensor)`` for every parameter and running state."""
        for _, leaf in tree.leaves(self):
            visitor.visit_float(leaf.id, leaf.val() if isinstance(leaf, Param) else leaf.value())

    def map(self, mapper: ModuleMapper) -> Self:
        """A new module whose tensors are ``mapper.map_float(id, tensor)``; ids and flags are kept.

        Example:
            >>> from ferrum.backend import NdArray
            >>> from ferrum.nn import LinearConfig
            >>> class Zero:
            ...     def map_float(self, id, tensor):
            ...         return tensor.zeros_like()
            >>> layer = LinearConfig(2, 2).init(NdArray.device())
            >>> layer.map(Zero()).weight.val().sum().into_scalar()
            0.0
        """

        def on_param(path: str, param: Param[Any]) -> Param[Any]:
            return param.map(lambda tensor: _checked(path, tensor, mapper.map_float(param.id, tensor)))

        def on_state(path: str, state: RunningState[Any]) -> RunningState[Any]:
            value = state.value()
            return RunningState(_checked(path, value, mapper.map_float(state.id, value)), state.id)

        return tree.rebuild(self, on_param, on_state)  # type: ignore[no-any-return]

    def quantize_weights(self, quantizer: Quantizer) -> Self:
        """A copy whose float parameters are quantized by ``quantizer`` (Burn's
        ``quantize_weights``); see ``ferrum.quantization``. Linear layers then run
        on an int8 product where the scheme allows it; every parameter's
        ``quantized()`` holds its quantized tensor.

        Example:
            >>> from ferrum.backend import NdArray
            >>> from ferrum.nn import LinearConfig
            >>> from ferrum.quantization import QuantScheme, QuantValue, Quantizer
            >>> layer = LinearConfig(4, 2).init(NdArray.device())
            >>> quantizer = Quantizer(scheme=QuantScheme().with_value(QuantValue.Q8S))
            >>> layer.quantize_weights(quantizer).weight.quantized() is not None
            True
        """

        def on_param(path: str, param: Param[Any]) -> Param[Any]:
            try:
                return param.with_quantized(quantizer.quantize(param.val().detach()))
            except (ValueError, TypeError) as err:
                raise type(err)(f"quantize_weights: parameter {path!r}: {err}") from err

        return tree.rebuild(self, on_param)  # type: ignore[no-any-return]

    def into_record(self) -> ModuleRecord[Self]:
        """Nested dict of ``{"id": str, "param": Tensor}`` per parameter; constants are left out.

        A ``ModuleRecord`` typed by this module (Burn's ``Module::Record``): mypy
        with ``ferrum.mypy`` rejects it in another module type's ``load_record``.
        """
        record = _into_record(self)
        # Enum modules' records (and None for constant modules) keep their own kind for the encoders.
        return ModuleRecord(record) if type(record) is dict else record

    def load_record(self, record: Mapping[str, Any]) -> Self:
        """A new module holding the record's tensors and ids.

        The record must have this module's structure and shapes; ``ValueError``
        names the parameter path and both shapes otherwise.
        """
        resolve = getattr(record, "resolve", None)
        if callable(resolve):
            # A bincode record (ferrum.record.DeferredRecord) decodes against this module's structure.
            record = resolve(self.into_record())
        return _load_record(self, record, "")  # type: ignore[no-any-return]

    def load_from(self, store: TensorStore[Any]) -> Self:
        """A copy holding the tensors of ``store`` (a ``ferrum.store`` store: PyTorch, safetensors, Burnpack).

        ``ferrum.store.StoreError`` names missing tensors (unless the store
        allows partial loads) and tensors of the wrong shape.

        Example: ``model = NetConfig().init(device).load_from(PytorchStore.from_file("net.pt"))``.
        """
        return self.load_from_with_result(store)[0]

    def load_from_with_result(self, store: TensorStore[R]) -> tuple[Self, R]:
        """``load_from``, with what was applied, skipped, missing and unused (Burn's ``ApplyResult``)."""
        return store.apply_to(self)

    def save_into(self, store: TensorStore[Any]) -> None:
        """Write the module's tensors into ``store`` (a safetensors or Burnpack file).

        Example: ``model.save_into(SafetensorsStore.from_file("model.safetensors"))``.
        """
        store.collect_from(self)

    def save_file(self, path: str | os.PathLike[str], recorder: FileRecorder) -> None:
        """Write the record to ``path`` plus the recorder's extension, atomically.

        Example: ``model.save_file("model", CompactRecorder())`` writes ``model.mpk``.
        """
        recorder.record(self.into_record(), path)

    def load_file(self, path: str | os.PathLike[str], recorder: FileRecorder, device: Device[Any]) -> Self:
        """A copy holding the record saved at ``path``.

        ``ValueError`` names the file, or the mismatched parameter and both shapes.

        Example: ``NetConfig().init(device).load_file("model", CompactRecorder(), device)``.
        """
        return self.load_record(recorder.load(path, device, self.into_record()))

    def valid(self) -> Self:
        """The module on the inner backend (no gradient tracking, dropout off, BatchNorm on running stats).

        ``mypy`` with ``ferrum.mypy`` types ``M[Autodiff[I]].valid()`` as ``M[I]``.
        Tensors already on a plain backend stay where they are.
        """

        def on_param(path: str, param: Param[Any]) -> Param[Any]:
            tensor = param.val()
            if not tensor.device().is_autodiff:
                return param
            return param.with_value(tensor.inner())

        def on_state(path: str, state: RunningState[Any]) -> RunningState[Any]:
            value = state.value()
            return RunningState(value.inner() if value.device().is_autodiff else value, state.id)

        return tree.rebuild(self, on_param, on_state)  # type: ignore[no-any-return]

    def no_grad(self) -> Self:
        """A copy whose parameters are not trained (still saved in records)."""
        return tree.rebuild(self, lambda _, param: param.set_require_grad(False))  # type: ignore[no-any-return]

    def fork(self, device: Device[B]) -> Self:
        """A copy on ``device`` whose parameters are fresh leaves (no link to any earlier graph)."""
        return self.to_device(device)

    def to_device(self, device: Device[B] | Device[Autodiff[B]]) -> Self:
        """A copy with every tensor moved to ``device``, a device of the module's backend.

        A module on a plain backend may also move to its autodiff backend
        (Burn's ``AutodiffModule::from_inner``); mypy with ``ferrum.mypy``
        types ``M[NdArray].to_device(Autodiff[NdArray].device())`` as
        ``M[Autodiff[NdArray]]``. A device of any other backend is a type error,
        as in Burn (``valid()`` gives a trained module on the inner backend).
        """
        if not isinstance(device, Device):
            raise TypeError(f"to_device needs a Device, found {type(device).__name__}")

        def on_param(path: str, param: Param[Any]) -> Param[Any]:
            return param.with_value(param.val().to_device(device))

        def on_state(path: str, state: RunningState[Any]) -> RunningState[Any]:
            return RunningState(state.value().to_device(device), state.id)

        return tree.rebuild(self, on_param, on_state)  # type: ignore[no-any-return]

    def devices(self) -> list[Device[B]]:
        """The distinct devices of the module's tensors, in declaration order."""
        found: list[Device[B]] = []
        for _, leaf in tree.leaves(self):
            device = leaf.val().device() if isinstance(leaf, Param) else leaf.value().device()
            if device not in found:
                found.append(device)
        return found

    def __repr__(self) -> str:
        return display.format_module(self)


def _checked(path: str, before: Tensor[Any, Any, Any], after: object) -> Any:
    if not isinstance(after, Tensor):
        raise TypeError(f"map_float for '{path}' returned {type(after).__name__}, expected a Tensor")
    if after.dims() != before.dims():
        raise ValueError(
            f"map_float for '{path}' changed the shape from {list(before.dims())} to {list(after.dims())}"
        )
    return after
