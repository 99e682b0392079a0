"""``Optimizer``: the functional optimizer step shared by every algorithm.

``step(lr, module, grads)`` returns a new module in which every parameter
with a gradient went through one fused engine update; parameters without a
gradient, running states and constants are carried over, and the old module
is left as it was. The optimizer keeps per-parameter state (moments,
velocities, step counts) keyed by ``ParamId``; ``to_record``/``load_record``
save and restore it for checkpoints.

Example:
    >>> from ferrum import Tensor
    >>> from ferrum.backend import Autodiff, NdArray
    >>> from ferrum.nn import LinearConfig
    >>> from ferrum.optim import GradientsParams, SgdConfig
    >>> device = Autodiff[NdArray].device()
    >>> layer = LinearConfig(2, 1).init(device)
    >>> loss = layer.forward(Tensor.ones((1, 2), device)).sum()
    >>> stepped = SgdConfig().init().step(0.5, layer, GradientsParams.from_grads(loss.backward(), layer))
    >>> [round(v, 6) for v in (layer.bias.val() - stepped.bias.val()).to_data().to_list()]  # lr * grad
    [0.5]
"""

from __future__ import annotations

import abc
import copy
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from typing_extensions import Self

from ferrum._ferrum import Device, FerrumError, Float, Tensor
from ferrum.backend import Autodiff
from ferrum.module import Module, ParamId
from ferrum.optim.checks import check_learning_rate
from ferrum.optim.clipping import GradientClipping
from ferrum.optim.grads import GradientsParams
from ferrum.record import OptimizerRecord, rank_problem

__all__ = ["Optimizer"]

# Burn's Optimizer<M, B: AutodiffBackend>: the stepped module is on an autodiff backend.
M = TypeVar("M", bound="Module[Autodiff[Any]]")
S = TypeVar("S")

FloatTensor = Tensor[Any, Any, Float]


class Optimizer(abc.ABC, Generic[S]):
    """Base class of the optimizers; subclasses define the update of one parameter.

    Example:
        >>> from ferrum.optim import AdamConfig
        >>> optim = AdamConfig().init()
        >>> optim.to_record()
        {}
    """

    def __init__(self, grad_clipping: GradientClipping | None = None) -> None:
        if grad_clipping is not None and not isinstance(grad_clipping, GradientClipping):
            raise TypeError(f"grad_clipping must be a GradientClipping, found {type(grad_clipping).__name__}")
        self._grad_clipping = grad_clipping
        self._states: dict[ParamId, S] = {}
        self._ranks: dict[ParamId, int] = {}

    def step(self, lr: float, module: M, grads: GradientsParams) -> M:
        """The module with every parameter that has a gradient in ``grads`` updated.

        The returned module keeps the parameter ids; the old module is unchanged.
        ``module`` is typed on an autodiff backend, as in Burn: stepping the
        inner-backend copy (``model.valid()``) is a type error.
        """
        rate = check_learning_rate(lr)
        if not isinstance(module, Module):
            raise TypeError(f"step needs a Module, found {type(module).__name__}")
        if not isinstance(grads, GradientsParams):
            raise TypeError(
                f"step needs GradientsParams (GradientsParams.from_grads(loss.backward(), model)),"
                f" found {type(grads).__name__}"
            )
        return module.map(_StepMapper(self, rate, grads))

    def has_gradient_clipping(self) -> bool:
        """Whether gradients are clipped before each update."""
        return self._grad_clipping is not None

    def to_record(self) -> OptimizerRecord:
        """The optimizer state in Burn's shape: ``{str(param_id): {"V1": {"Rank<N>": state}}}``.

        ``N`` is the parameter's rank, as in Burn's ``AdaptorRecord``, so a
        recorder writes the file Burn's optimizers load.
        """
        return OptimizerRecord(
            (str(id), {"V1": {f"Rank{self._rank_of(id, record)}": record}})
            for id, record in ((id, self._state_to_record(state)) for id, state in self._states.items())
        )

    def load_record(self, record: Mapping[str, Any]) -> Self:
        """A copy of this optimizer holding the state of ``record`` (from ``to_record`` or Burn)."""
        if not isinstance(record, Mapping):
            found = type(record).__name__
            raise ValueError(f"an optimizer record is a dict keyed by parameter id, found {found}")
        states: dict[ParamId, S] = {}
        ranks: dict[ParamId, int] = {}
        for key, value in record.items():
            if not isinstance(key, str):
                raise ValueError(f"optimizer record keys are parameter ids as str, found {key!r}")
            if not isinstance(value, Mapping):
                raise ValueError(f"optimizer record '{key}': expected a dict, found {type(value).__name__}")
            id = ParamId.from_str(key)
            rank, value = _unwrap_versioned(key, value)
            states[id] = self._state_from_record(key, value)
            if rank is not None:
                ranks[id] = rank
        new = copy.copy(self)
        new._states = states
        new._ranks = ranks
        return new

    def record_schema(self, device: Device[Any]) -> dict[str, Any]:
        """What a bincode file of this optimizer's record holds, for ``recorder.load(..., schema)``.

        bincode stores no names or types, so reading follows the state this
        optimizer keeps for a parameter of any rank (Burn's ``Rank0``..``Rank8``).

        Example:
            >>> from ferrum.backend import NdArray
            >>> from ferrum.optim import AdamConfig
            >>> schema = AdamConfig().init().record_schema(NdArray.device())
            >>> sorted(schema[""]["V1"])[:2], sorted(schema[""]["V1"]["Rank1"]["momentum"])
            (['Rank0', 'Rank1'], ['moment_1', 'moment_2', 'time'])
        """
        zero = Tensor.zeros((1,), device)
        _, state = self._update(0.0, zero, zero, None)
        template = self._state_to_record(state)
        return {"": {"V1": {f"Rank{rank}": template for rank in range(9)}}}

    def _rank_of(self, id: ParamId, record: Mapping[str, Any]) -> int:
        rank = self._ranks.get(id)
        return rank if rank is not None else _first_rank(record)

    def _update_param(self, lr: float, id: ParamId, tensor: FloatTensor, grad: FloatTensor) -> FloatTensor:
        if self._grad_clipping is not None:
            grad = self._grad_clipping.clip_gradient(grad)
        try:
            new, state = self._update(lr, tensor, grad, self._states.get(id))
        except FerrumError as err:
            raise type(err)(f"parameter {id}: {err}") from err
        self._states[id] = state
        self._ranks[id] = len(tensor.dims())
        return new

    @abc.abstractmethod
    def _update(
        self, lr: float, tensor: FloatTensor, grad: FloatTensor, state: S | None
    ) -> tuple[FloatTensor, S]:
        """One fused update of a parameter: the new tensor and the new state."""

    @abc.abstractmethod
    def _state_to_record(self, state: S) -> dict[str, Any]:
        """A parameter's state as a record."""

    @abc.abstractmethod
    def _state_from_record(self, path: str, record: Mapping[str, Any]) -> S:
        """A parameter's state read back from a record; ValueError names ``path`` when it does not fit."""


def _unwrap_versioned(key: str, value: Mapping[str, Any]) -> tuple[int | None, Mapping[str, Any]]:
    """The rank and state of Burn's ``{"V1": {"Rank<N>": state}}``; a bare state passes through."""
    if list(value) != ["V1"]:
        return None, value
    problem = rank_problem(f"{key}.V1", value["V1"])
    if problem is not None:
        raise ValueError(f"optimizer record {problem}")
    variant, state = next(iter(value["V1"].items()))
    if not isinstance(state, Mapping):
        found = type(state).__name__
        raise ValueError(f"optimizer record '{key}.V1.{variant}': expected a dict, found {found}")
    return int(variant[4:]), state


def _first_rank(node: object) -> int:
    """The rank of the first tensor in a state record (the parameter's rank), 0 when it holds none."""
    if isinstance(node, Tensor):
        return len(node.dims())
    if isinstance(node, Mapping):
        for value in node.values():
            rank = _first_rank(value)
            if rank:
                return rank
    return 0


class _StepMapper:
    def __init__(self, optimizer: Optimizer[Any], lr: float, grads: GradientsParams) -> None:
        self._optimizer = optimizer
        self._lr = lr
        self._grads = grads

    def map_float(self, id: ParamId, tensor: FloatTensor) -> FloatTensor:
        grad = self._grads.get(id)
        if grad is None:
            return tensor
        return self._optimizer._update_param(self._lr, id, tensor, grad)
