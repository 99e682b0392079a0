"""Parameters: tensors with a stable id that optimizers and records refer to.

A ``Param`` wraps a Float tensor. On an autodiff device the stored tensor is
a tracked leaf (``require_grad()``), so ``loss.backward()`` reports its
gradient and ``param.val().grad(grads)`` reads it. ``RunningState`` holds a
tensor a module updates while it runs (BatchNorm's running statistics): it
has an id and is saved in records, but is never trained.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import NdArray
    >>> from ferrum.module import Param
    >>> weight = Param(Tensor.ones((2, 3), NdArray.device()))
    >>> weight.val().dims(), weight.is_require_grad()
    ((2, 3), True)
    >>> weight.map(lambda t: t * 2.0).id == weight.id
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ferrum import _ferrum
from ferrum._ferrum import Device, DType, Float, Tensor
from ferrum.record.param_id import ParamId

if TYPE_CHECKING:
    from ferrum._ferrum import QTensor

__all__ = ["Param", "ParamId", "RunningState"]

T = TypeVar("T", bound="Tensor[Any, Any, Float]")


def _tracked(tensor: T, require_grad: bool) -> T:
    # A detached copy is a fresh leaf: the parameter never drags an old graph along.
    if tensor.device().is_autodiff:
        leaf: Any = tensor.detach()
        return leaf.require_grad() if require_grad else leaf  # type: ignore[no-any-return]
    return tensor


def _check_float(tensor: object, what: str) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{what} holds a Tensor, found {type(tensor).__name__}")
    if tensor.kind is not Float:
        raise TypeError(f"{what} holds a Float tensor, found kind {tensor.kind.__name__}")


def _same_backend(tensor: T, like: Device[Any]) -> T:
    # A function applied to a parameter (an optimizer step) may compute on the
    # inner backend; the parameter stays on the autodiff one.
    dev = tensor.device()
    if like.is_autodiff and not dev.is_autodiff and dev == like.inner:
        return Tensor.from_inner(tensor)  # type: ignore[return-value]
    return tensor


class Param(Generic[T]):
    """A module parameter: a Float tensor with an id and a require-grad flag.

    ``val()`` returns the same tracked tensor on every call, so gradients
    looked up through it match the ones ``backward()`` computed.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import Autodiff, NdArray
        >>> from ferrum.module import Param
        >>> w = Param(Tensor.ones((2,), Autodiff[NdArray].device()))
        >>> grads = (w.val() * 3.0).sum().backward()
        >>> w.val().grad(grads).to_data().to_list()
        [3.0, 3.0]
    """

    __slots__ = ("_id", "_load_mapper", "_qdtype", "_quantized", "_require_grad", "_save_mapper", "_tensor")

    def __init__(
        self,
        value: T,
        id: ParamId | None = None,
        require_grad: bool = True,
        *,
        save_mapper: Callable[[T], T] | None = None,
        load_mapper: Callable[[T], T] | None = None,
    ) -> None:
        _check_float(value, "Param")
        if id is not None and not isinstance(id, ParamId):
            raise TypeError(f"Param id must be a ParamId, found {type(id).__name__}")
        self._id = id if id is not None else ParamId.new()
        self._require_grad = bool(require_grad)
        # None once quantized: the QTensor stands in for it (a quarter of the bytes at 8 bits).
        self._tensor: Any = _tracked(value, self._require_grad)
        # Burn's Param mappers: what records hold is save_mapper(val()); a loaded
        # record's tensor goes through load_mapper (a transposed layout, say).
        self._save_mapper = save_mapper
        self._load_mapper = load_mapper
        self._quantized: QTensor[Any, Any] | None = None
        self._qdtype: DType | None = None

    @property
    def id(self) -> ParamId:
        """The parameter's id, kept by ``map``, records and optimizer steps."""
        return self._id

    def val(self) -> T:
        """The tensor (a tracked leaf on an autodiff device when require_grad is set).

        A quantized parameter (``quantized()`` is not None) keeps only its
        quantized values: ``val()`` dequantizes them at each call.
        """
        if self._quantized is not None:
            value: Any = self._quantized.dequantize()
            return value if value.dtype == self._qdtype else value.cast(self._qdtype)  # type: ignore[no-any-return]
        return self._tensor  # type: ignore[no-any-return]

    def map(self, f: Callable[[T], T]) -> Param[T]:
        """A new parameter holding ``f(val())``, with the same id and require-grad flag."""
        value = self.val()
        return self.with_value(_same_backend(f(value), value.device()))

    def with_value(self, value: T, id: ParamId | None = None) -> Param[T]:
        """This parameter (id, require-grad flag, record mappers) holding ``value`` (and ``id``, if given)."""
        return Param(
            value,
            self._id if id is None else id,
            self._require_grad,
            save_mapper=self._save_mapper,
            load_mapper=self._load_mapper,
        )

    def quantized(self) -> QTensor[Any, Any] | None:
        """The quantized tensor this parameter holds after ``Module.quantize_weights``, else None."""
        return self._quantized

    def with_quantized(self, qtensor: QTensor[Any, Any]) -> Param[T]:
        """This parameter (id, record mappers) holding ``qtensor`` instead of its float
        tensor: ``val()`` is the float tensor it stands for, in this parameter's
        dtype, made at each call; not trained."""
        if not isinstance(qtensor, _ferrum.QTensor):
            raise TypeError(f"Param.with_quantized: expected a QTensor, found {type(qtensor).__name__}")
        if qtensor.dims() != self.shape():
            raise ValueError(
                f"Param.with_quantized: expected shape {list(self.shape())}, found {list(qtensor.dims())}"
            )
        dtype = self.val().dtype
        placeholder: Any = qtensor.dequantize()
        out: Param[T] = Param(
            placeholder, self._id, False, save_mapper=self._save_mapper, load_mapper=self._load_mapper
        )
        out._quantized, out._qdtype, out._tensor = qtensor, dtype, None
        return out

    def set_require_grad(self, require_grad: bool) -> Param[T]:
        """A new parameter with the flag changed; ``False`` keeps it out of training but in records."""
        value = self.val()
        out = self.with_value(value)
        out._require_grad = bool(require_grad)
        out._tensor = _tracked(value, out._require_grad)
        return out

    def record_value(self) -> T:
        """The tensor as records hold it (``save_mapper(val())``, or ``val()``)."""
        value = self.val()
        return value if self._save_mapper is None else self._save_mapper(value)

    def record_quantized(self) -> QTensor[Any, Any] | None:
        """The quantized tensor records hold for this parameter (Burn's ``QFloat``
        tensor data), or None when records hold ``record_value()``: the parameter
        is not quantized, or record mappers change its layout."""
        return self._quantized if self.keeps_record_layout() else None

    def keeps_record_layout(self) -> bool:
        """Whether records hold this parameter in its own layout (no save or load mapper)."""
        return self._save_mapper is None and self._load_mapper is None

    def from_record_value(self, value: T) -> T:
        """A tensor read from a record, back in this parameter's layout (``load_mapper``)."""
        return value if self._load_mapper is None else self._load_mapper(value)

    def is_require_grad(self) -> bool:
        """Whether the parameter is trained."""
        return self._require_grad

    def shape(self) -> tuple[int, ...]:
        """The tensor's shape."""
        return self._quantized.dims() if self._quantized is not None else self._tensor.dims()

    def device(self) -> Device[Any]:
        """The tensor's device."""
        return self._quantized.device() if self._quantized is not None else self._tensor.device()

    def num_params(self) -> int:
        """The number of scalars in the tensor."""
        return self._quantized.num_elements() if self._quantized is not None else self._tensor.num_elements()

    def __repr__(self) -> str:
        return f"Param(id={self._id}, shape={list(self.shape())}, require_grad={self._require_grad})"


class RunningState(Generic[T]):
    """A tensor a module updates as it runs, such as BatchNorm's running mean.

    It is saved in records and visited by ``visit``/``map`` like a parameter,
    but never tracked for gradients. Updates replace the value held by this
    object; ``Module.map``, ``valid`` and friends give the new module its own
    copy, so earlier modules keep theirs.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.module import RunningState
        >>> mean = RunningState(Tensor.zeros((3,), NdArray.device()))
        >>> mean.update(Tensor.ones((3,), NdArray.device()))
        >>> mean.value().sum().into_scalar()
        3.0
    """

    __slots__ = ("_id", "_value")

    def __init__(self, value: T, id: ParamId | None = None) -> None:
        _check_float(value, "RunningState")
        self._id = id if id is not None else ParamId.new()
        self._value: T = value.detach()  # type: ignore[assignment]

    @property
    def id(self) -> ParamId:
        """The state's id, as used in records."""
        return self._id

    def value(self) -> T:
        """The current value."""
        return self._value

    def update(self, value: T) -> None:
        """Replace the value (detached: running statistics carry no graph)."""
        _check_float(value, "RunningState")
        if value.dims() != self._value.dims():
            raise ValueError(
                f"RunningState.update: expected shape {list(self._value.dims())}, found {list(value.dims())}"
            )
        self._value = value.detach()  # type: ignore[assignment]

    def shape(self) -> tuple[int, ...]:
        """The value's shape."""
        return self._value.dims()

    def __repr__(self) -> str:
        return f"RunningState(id={self._id}, shape={list(self.shape())})"
