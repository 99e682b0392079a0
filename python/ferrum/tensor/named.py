"""Named tensors, as Burn's ``NamedTensor``: dimension names carried by the type.

A dimension name is a class deriving from ``Dim`` (Burn's ``NamedDim!(Batch)``
marker types). ``NamedTensor[B, tuple[Batch, SeqLength, DModel]]`` is a Float
tensor of rank 3 whose dims are named ``[Batch, SeqLength, DModel]``; the
names are given as values where a named tensor is made (``from_tensor``,
``random``, ``reshape``), so the type checker infers the names from them.

As in Burn, ``matmul`` only chains matching names (``[..., X, Y] @ [..., Y,
Z] -> [..., X, Z]``, ranks 2 to 4), ``swap_dims(i, j)`` swaps the names with
the dims (``i < j``, ranks 2 to 4) and ``mul`` takes a tensor of the same
names (sizes broadcast as ``Tensor.mul``). ``mypy --strict`` and pyright
reject a call over the wrong names; the names are also checked at run time,
where a mismatch raises a ``ShapeError`` naming both sides' dims.

Example:
    >>> from ferrum import Dim, Distribution, NamedTensor
    >>> from ferrum.backend import NdArray
    >>> class Batch(Dim): ...
    >>> class SeqLength(Dim): ...
    >>> class DModel(Dim): ...
    >>> device = NdArray.device()
    >>> x = NamedTensor.random((2, 5, 4), (Batch, SeqLength, DModel), Distribution.Default, device)
    >>> w = NamedTensor.random((1, 4, 4), (Batch, DModel, DModel), Distribution.Default, device)
    >>> print(x.matmul(w).mul(x).swap_dims(1, 2))
    NamedTensor[shape=[2, 4, 5], dims=[Batch, DModel, SeqLength]]
"""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar, overload

from ferrum._ferrum import ArgumentError, Device, Distribution, Float, ShapeError, Tensor
from ferrum.backend import Backend
from ferrum.tensor.rank import D1, D2, D3, D4
from ferrum.tensor.type_vars import B

__all__ = ["Dim", "NamedTensor"]


class Dim:
    """Base class of dimension names: ``class Batch(Dim): ...`` names a dim ``Batch``.

    Burn's ``NamedDim!(Batch)``: a marker type, never instantiated; its name is
    the class name. Two dims are the same name when they are the same class.

    Example:
        >>> from ferrum import Dim
        >>> class Batch(Dim): ...
        >>> Batch.to_string()
        'Batch'
    """

    @classmethod
    def to_string(cls) -> str:
        """The dimension's name, as Burn's ``Dim::to_string``: the class name."""
        return cls.__name__


N = TypeVar("N", bound=tuple[Dim, ...])
_B = TypeVar("_B", bound=Backend)
_W = TypeVar("_W", bound=Dim)
_V = TypeVar("_V", bound=Dim)
_X = TypeVar("_X", bound=Dim)
_Y = TypeVar("_Y", bound=Dim)
_Z = TypeVar("_Z", bound=Dim)

_Names = tuple[type[Dim], ...]


def _text(dims: _Names) -> str:
    return "[" + ", ".join(d.to_string() for d in dims) + "]"


def _checked_dims(op: str, dims: _Names, rank: int) -> _Names:
    """``dims`` as a tuple of ``Dim`` classes, one per dim of a rank-``rank`` tensor."""
    dims = tuple(dims)
    for d in dims:
        if not (isinstance(d, type) and issubclass(d, Dim)):
            raise ArgumentError(f"NamedTensor.{op}: a dim name is a Dim subclass, found {d!r}")
    if not 1 <= len(dims) <= 4:
        raise ArgumentError(f"NamedTensor.{op}: named tensors have 1 to 4 dims, {_text(dims)} is {len(dims)}")
    if len(dims) != rank:
        raise ShapeError(f"NamedTensor.{op}: {len(dims)} names {_text(dims)} for a tensor of rank {rank}")
    return dims


class NamedTensor(Generic[B, N]):
    """A Float tensor on backend ``B`` whose dims are named by ``N``, a tuple of ``Dim`` classes.

    ``NamedTensor[B, tuple[Batch, SeqLength, DModel]]`` has shape
    ``[batch, seq_length, d_model]``. It is an immutable value: operations
    return new named tensors. Make one with ``from_tensor``, ``random`` or
    ``reshape``; ``into_tensor()`` gives the plain ``Tensor`` back.

    Example:
        >>> from ferrum import Dim, NamedTensor, Tensor
        >>> from ferrum.backend import NdArray
        >>> class Rows(Dim): ...
        >>> class Cols(Dim): ...
        >>> t = NamedTensor.from_tensor(Tensor.ones((2, 3), NdArray.device()), (Rows, Cols))
        >>> print(t)
        NamedTensor[shape=[2, 3], dims=[Rows, Cols]]
    """

    __slots__ = ("_dims", "_tensor")

    def __init__(self, tensor: Tensor[B, Any, Float], dims: _Names) -> None:
        """Prefer ``from_tensor``, whose overloads type the names; this checks them at run time only."""
        if not isinstance(tensor, Tensor):
            raise ArgumentError(f"NamedTensor: expected a Tensor, found {type(tensor).__name__}")
        if tensor.kind is not Float:
            raise ArgumentError(f"NamedTensor: a named tensor is Float, found a {tensor.kind.__name__} one")
        self._dims = _checked_dims("from_tensor", dims, tensor.rank())
        self._tensor = tensor

    # ------------------------------------------------------------------ creation

    @overload
    @staticmethod
    def from_tensor(tensor: Tensor[_B, D1, Float], dims: tuple[type[_X]]) -> NamedTensor[_B, tuple[_X]]: ...
    @overload
    @staticmethod
    def from_tensor(
        tensor: Tensor[_B, D2, Float], dims: tuple[type[_X], type[_Y]]
    ) -> NamedTensor[_B, tuple[_X, _Y]]: ...
    @overload
    @staticmethod
    def from_tensor(
        tensor: Tensor[_B, D3, Float], dims: tuple[type[_X], type[_Y], type[_Z]]
    ) -> NamedTensor[_B, tuple[_X, _Y, _Z]]: ...
    @overload
    @staticmethod
    def from_tensor(
        tensor: Tensor[_B, D4, Float], dims: tuple[type[_W], type[_X], type[_Y], type[_Z]]
    ) -> NamedTensor[_B, tuple[_W, _X, _Y, _Z]]: ...
    @staticmethod
    def from_tensor(tensor: Tensor[_B, Any, Float], dims: _Names) -> NamedTensor[_B, Any]:
        """Name the dims of ``tensor`` (rank 1 to 4, a name per dim), as Burn's ``NamedTensor::from_tensor``.

        Raises ``ShapeError`` when the number of names is not the tensor's rank.

        Example:
            >>> from ferrum import Dim, NamedTensor, Tensor
            >>> from ferrum.backend import NdArray
            >>> class Batch(Dim): ...
            >>> class Features(Dim): ...
            >>> x = NamedTensor.from_tensor(Tensor.zeros((4, 8), NdArray.device()), (Batch, Features))
            >>> x.shape(), x.dim_names() == (Batch, Features)
            ((4, 8), True)
        """
        return NamedTensor(tensor, dims)

    @overload
    @staticmethod
    def random(
        shape: tuple[int], dims: tuple[type[_X]], distribution: Distribution, device: Device[_B]
    ) -> NamedTensor[_B, tuple[_X]]: ...
    @overload
    @staticmethod
    def random(
        shape: tuple[int, int],
        dims: tuple[type[_X], type[_Y]],
        distribution: Distribution,
        device: Device[_B],
    ) -> NamedTensor[_B, tuple[_X, _Y]]: ...
    @overload
    @staticmethod
    def random(
        shape: tuple[int, int, int],
        dims: tuple[type[_X], type[_Y], type[_Z]],
        distribution: Distribution,
        device: Device[_B],
    ) -> NamedTensor[_B, tuple[_X, _Y, _Z]]: ...
    @overload
    @staticmethod
    def random(
        shape: tuple[int, int, int, int],
        dims: tuple[type[_W], type[_X], type[_Y], type[_Z]],
        distribution: Distribution,
        device: Device[_B],
    ) -> NamedTensor[_B, tuple[_W, _X, _Y, _Z]]: ...
    @staticmethod
    def random(
        shape: tuple[int, ...], dims: _Names, distribution: Distribution, device: Device[_B]
    ) -> NamedTensor[_B, Any]:
        """A tensor of ``shape`` named ``dims``, its values drawn from ``distribution``, as Burn's ``random``.

        Burn spells the names in the type, ``NamedTensor::<B, (Batch, DModel)>::random(shape, ...)``;
        here they are the second argument.

        Example:
            >>> from ferrum import Dim, Distribution, NamedTensor
            >>> from ferrum.backend import NdArray
            >>> class Batch(Dim): ...
            >>> class DModel(Dim): ...
            >>> uniform = Distribution.Uniform(0.0, 1.0)
            >>> w = NamedTensor.random((3, 2), (Batch, DModel), uniform, NdArray.device())
            >>> print(w)
            NamedTensor[shape=[3, 2], dims=[Batch, DModel]]
        """
        dims = _checked_dims("random", dims, len(shape))
        return NamedTensor(Tensor.random(tuple(shape), distribution, device), dims)

    # ------------------------------------------------------------------ reading

    def shape(self) -> tuple[int, ...]:
        """The sizes of the dims in order: ``(batch, seq, d_model)`` for ``[Batch, SeqLength, DModel]``."""
        return self._tensor.shape()

    def dim_names(self) -> tuple[type[Dim], ...]:
        """The ``Dim`` classes naming the dims, in order (what the type's ``N`` says, at run time)."""
        return self._dims

    @overload
    def into_tensor(self: NamedTensor[B, tuple[_X]]) -> Tensor[B, D1, Float]: ...
    @overload
    def into_tensor(self: NamedTensor[B, tuple[_X, _Y]]) -> Tensor[B, D2, Float]: ...
    @overload
    def into_tensor(self: NamedTensor[B, tuple[_X, _Y, _Z]]) -> Tensor[B, D3, Float]: ...
    @overload
    def into_tensor(self: NamedTensor[B, tuple[_W, _X, _Y, _Z]]) -> Tensor[B, D4, Float]: ...
    def into_tensor(self) -> Tensor[B, Any, Float]:
        """The plain tensor, names dropped, of the same rank (Burn's ``Tensor::from(named)``).

        Example:
            >>> from ferrum import Dim, NamedTensor, Tensor
            >>> from ferrum.backend import NdArray
            >>> class Rows(Dim): ...
            >>> t = NamedTensor.from_tensor(Tensor.from_data([1.0, 2.0], NdArray.device()), (Rows,))
            >>> t.into_tensor().to_data().to_list()
            [1.0, 2.0]
        """
        return self._tensor

    def __str__(self) -> str:
        sizes = "[" + ", ".join(str(s) for s in self.shape()) + "]"
        return f"NamedTensor[shape={sizes}, dims={_text(self._dims)}]"

    __repr__ = __str__

    # ------------------------------------------------------------------ operations

    def mul(self, rhs: NamedTensor[B, N]) -> NamedTensor[B, N]:
        """Element-wise product with a tensor of the same names (sizes broadcast, as ``Tensor.mul``).

        Shapes: ``[Batch, SeqLength, DModel] * [Batch, SeqLength, DModel] -> [Batch, SeqLength, DModel]``.
        Raises ``ShapeError`` naming both sides' dims when the names differ.

        Example:
            >>> from ferrum import Dim, NamedTensor, Tensor
            >>> from ferrum.backend import NdArray
            >>> class Rows(Dim): ...
            >>> class Cols(Dim): ...
            >>> device = NdArray.device()
            >>> a = NamedTensor.from_tensor(Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], device), (Rows, Cols))
            >>> b = NamedTensor.from_tensor(Tensor.from_data([[10.0, 100.0]], device), (Rows, Cols))
            >>> a.mul(b).into_tensor().to_data().to_list()
            [[10.0, 200.0], [30.0, 400.0]]
        """
        if self._dims != rhs._dims:
            raise ShapeError(
                f"NamedTensor.mul: the names differ: lhs {_text(self._dims)} * rhs {_text(rhs._dims)}"
            )
        return NamedTensor(self._tensor.mul(rhs._tensor), self._dims)

    def __mul__(self, rhs: NamedTensor[B, N]) -> NamedTensor[B, N]:
        """``a * b`` is ``a.mul(b)``."""
        return self.mul(rhs)

    @overload
    def matmul(
        self: NamedTensor[B, tuple[_X, _Y]], rhs: NamedTensor[B, tuple[_Y, _Z]]
    ) -> NamedTensor[B, tuple[_X, _Z]]: ...
    @overload
    def matmul(
        self: NamedTensor[B, tuple[_W, _X, _Y]], rhs: NamedTensor[B, tuple[_W, _Y, _Z]]
    ) -> NamedTensor[B, tuple[_W, _X, _Z]]: ...
    @overload
    def matmul(
        self: NamedTensor[B, tuple[_V, _W, _X, _Y]], rhs: NamedTensor[B, tuple[_V, _W, _Y, _Z]]
    ) -> NamedTensor[B, tuple[_V, _W, _X, _Z]]: ...
    def matmul(self, rhs: NamedTensor[B, Any]) -> NamedTensor[B, Any]:
        """Matrix product over matching names: ``[..., X, Y] @ [..., Y, Z] -> [..., X, Z]``, ranks 2 to 4.

        The batch names (the leading dims) must be the same on both sides; a
        batch size of 1 broadcasts, as in ``Tensor.matmul``. Raises
        ``ShapeError`` naming both sides' dims when the names do not chain.

        Example:
            >>> from ferrum import Dim, Distribution, NamedTensor
            >>> from ferrum.backend import NdArray
            >>> class Batch(Dim): ...
            >>> class SeqLength(Dim): ...
            >>> class DModel(Dim): ...
            >>> device = NdArray.device()
            >>> x = NamedTensor.random((8, 5, 4), (Batch, SeqLength, DModel), Distribution.Default, device)
            >>> w = NamedTensor.random((1, 4, 4), (Batch, DModel, DModel), Distribution.Default, device)
            >>> print(x.matmul(w))
            NamedTensor[shape=[8, 5, 4], dims=[Batch, SeqLength, DModel]]
        """
        return _matmul(self, rhs)

    @overload
    def __matmul__(
        self: NamedTensor[B, tuple[_X, _Y]], rhs: NamedTensor[B, tuple[_Y, _Z]]
    ) -> NamedTensor[B, tuple[_X, _Z]]: ...
    @overload
    def __matmul__(
        self: NamedTensor[B, tuple[_W, _X, _Y]], rhs: NamedTensor[B, tuple[_W, _Y, _Z]]
    ) -> NamedTensor[B, tuple[_W, _X, _Z]]: ...
    @overload
    def __matmul__(
        self: NamedTensor[B, tuple[_V, _W, _X, _Y]], rhs: NamedTensor[B, tuple[_V, _W, _Y, _Z]]
    ) -> NamedTensor[B, tuple[_V, _W, _X, _Z]]: ...
    def __matmul__(self, rhs: NamedTensor[B, Any]) -> NamedTensor[B, Any]:
        """``a @ b`` is ``a.matmul(b)``."""
        return _matmul(self, rhs)

    @overload
    def swap_dims(
        self: NamedTensor[B, tuple[_X, _Y]], dim1: Literal[0], dim2: Literal[1]
    ) -> NamedTensor[B, tuple[_Y, _X]]: ...
    @overload
    def swap_dims(
        self: NamedTensor[B, tuple[_X, _Y, _Z]], dim1: Literal[0], dim2: Literal[1]
    ) -> NamedTensor[B, tuple[_Y, _X, _Z]]: ...
    @overload
    def swap_dims(
        self: NamedTensor[B, tuple[_X, _Y, _Z]], dim1: Literal[0], dim2: Literal[2]
    ) -> NamedTensor[B, tuple[_Z, _Y, _X]]: ...
    @overload
    def swap_dims(
        self: NamedTensor[B, tuple[_X, _Y, _Z]], dim1: Literal[1], dim2: Literal[2]
    ) -> NamedTensor[B, tuple[_X, _Z, _Y]]: ...
    @overload
    def swap_dims(
        self: NamedTensor[B, tuple[_W, _X, _Y, _Z]], dim1: Literal[0], dim2: Literal[1]
    ) -> NamedTensor[B, tuple[_X, _W, _Y, _Z]]: ...
    @overload
    def swap_dims(
        self: NamedTensor[B, tuple[_W, _X, _Y, _Z]], dim1: Literal[0], dim2: Literal[2]
    ) -> NamedTensor[B, tuple[_Y, _X, _W, _Z]]: ...
    @overload
    def swap_dims(
        self: NamedTensor[B, tuple[_W, _X, _Y, _Z]], dim1: Literal[0], dim2: Literal[3]
    ) -> NamedTensor[B, tuple[_Z, _X, _Y, _W]]: ...
    @overload
    def swap_dims(
        self: NamedTensor[B, tuple[_W, _X, _Y, _Z]], dim1: Literal[1], dim2: Literal[2]
    ) -> NamedTensor[B, tuple[_W, _Y, _X, _Z]]: ...
    @overload
    def swap_dims(
        self: NamedTensor[B, tuple[_W, _X, _Y, _Z]], dim1: Literal[1], dim2: Literal[3]
    ) -> NamedTensor[B, tuple[_W, _Z, _Y, _X]]: ...
    @overload
    def swap_dims(
        self: NamedTensor[B, tuple[_W, _X, _Y, _Z]], dim1: Literal[2], dim2: Literal[3]
    ) -> NamedTensor[B, tuple[_W, _X, _Z, _Y]]: ...
    def swap_dims(self, dim1: int, dim2: int) -> NamedTensor[B, Any]:
        """Swap dims ``dim1 < dim2`` with their names, as Burn's ``swap_dims::<_, D1, D2>()`` (ranks 2 to 4).

        Shapes: ``[Batch, SeqLength, DModel].swap_dims(1, 2) -> [Batch, DModel, SeqLength]``.
        The overloads type each pair Burn implements; at run time a pair that
        is not ``0 <= dim1 < dim2 < rank`` raises ``ShapeError`` naming the dims.

        Example:
            >>> from ferrum import Dim, NamedTensor, Tensor
            >>> from ferrum.backend import NdArray
            >>> class Rows(Dim): ...
            >>> class Cols(Dim): ...
            >>> row = Tensor.from_data([[1.0, 2.0, 3.0]], NdArray.device())
            >>> t = NamedTensor.from_tensor(row, (Rows, Cols))
            >>> s = t.swap_dims(0, 1)
            >>> print(s), s.into_tensor().to_data().to_list()
            NamedTensor[shape=[3, 1], dims=[Cols, Rows]]
            (None, [[1.0], [2.0], [3.0]])
        """
        dims = self._dims
        rank = len(dims)
        if rank < 2 or isinstance(dim1, bool) or isinstance(dim2, bool) or not 0 <= dim1 < dim2 < rank:
            raise ShapeError(
                f"NamedTensor.swap_dims: no swap of dims ({dim1}, {dim2}) for {_text(dims)} "
                f"(0 <= dim1 < dim2 < {rank}, rank 2 to 4)"
            )
        names = list(dims)
        names[dim1], names[dim2] = names[dim2], names[dim1]
        return NamedTensor(self._tensor.swap_dims(dim1, dim2), tuple(names))

    @overload
    def reshape(self, shape: tuple[int], dims: tuple[type[_X]]) -> NamedTensor[B, tuple[_X]]: ...
    @overload
    def reshape(
        self, shape: tuple[int, int], dims: tuple[type[_X], type[_Y]]
    ) -> NamedTensor[B, tuple[_X, _Y]]: ...
    @overload
    def reshape(
        self, shape: tuple[int, int, int], dims: tuple[type[_X], type[_Y], type[_Z]]
    ) -> NamedTensor[B, tuple[_X, _Y, _Z]]: ...
    @overload
    def reshape(
        self, shape: tuple[int, int, int, int], dims: tuple[type[_W], type[_X], type[_Y], type[_Z]]
    ) -> NamedTensor[B, tuple[_W, _X, _Y, _Z]]: ...
    def reshape(self, shape: tuple[int, ...], dims: _Names) -> NamedTensor[B, Any]:
        """The values in ``shape`` with new names ``dims``, as Burn's ``reshape(shape, dims)``.

        One name per dim of ``shape`` (rank 1 to 4); ``-1`` and ``0`` in
        ``shape`` work as in ``Tensor.reshape``.

        Example:
            >>> from ferrum import Dim, NamedTensor, Tensor
            >>> from ferrum.backend import NdArray
            >>> class Batch(Dim): ...
            >>> class Heads(Dim): ...
            >>> class DHead(Dim): ...
            >>> class DModel(Dim): ...
            >>> x = NamedTensor.from_tensor(Tensor.zeros((2, 8), NdArray.device()), (Batch, DModel))
            >>> print(x.reshape((2, 4, -1), (Batch, Heads, DHead)))
            NamedTensor[shape=[2, 4, 2], dims=[Batch, Heads, DHead]]
        """
        dims = _checked_dims("reshape", dims, len(shape))
        return NamedTensor(self._tensor.reshape(tuple(shape)), dims)


def _matmul(lhs: NamedTensor[_B, Any], rhs: NamedTensor[_B, Any]) -> NamedTensor[_B, Any]:
    """``lhs @ rhs`` with the names checked: ``[..., X, Y] @ [..., Y, Z] -> [..., X, Z]``."""
    left, right = lhs.dim_names(), rhs.dim_names()
    rank = len(left)
    if rank != len(right) or not 2 <= rank <= 4:
        raise ShapeError(
            f"NamedTensor.matmul: needs two tensors of the same rank, 2 to 4: "
            f"lhs {_text(left)} @ rhs {_text(right)}"
        )
    if left[:-2] != right[:-2] or left[-1] is not right[-2]:
        raise ShapeError(
            f"NamedTensor.matmul: the names do not chain ([..., X, Y] @ [..., Y, Z]): "
            f"lhs {_text(left)} @ rhs {_text(right)}"
        )
    return NamedTensor(lhs._tensor.matmul(rhs._tensor), (*left[:-1], right[-1]))
