"""Loss functions, as in Burn's ``burn::nn::loss``.

``CrossEntropyLoss`` (padding tokens, class weights, label smoothing, logits
or probabilities), ``cross_entropy_with_logits`` (soft targets),
``BinaryCrossEntropyLoss``, ``MseLoss``, ``HuberLoss``,
``PoissonNllLoss`` and ``CosineEmbeddingLoss``
with a ``Reduction``. Losses are modules without parameters; each returns a
rank-1 tensor of one element, differentiable on an autodiff backend.
"""

from __future__ import annotations

import math
from typing import Any

from ferrum._ferrum import Device, DType, Float, Int, KindError, OutOfBoundsError, ShapeError, Tensor
from ferrum.activation import log_sigmoid, log_softmax
from ferrum.config import config
from ferrum.module import Module
from ferrum.module.display import tensor_summary

# Burn's `burn::nn::loss` also holds these (in their own file here).
from ferrum.nn.loss_extra import (
    CosineEmbeddingLoss,
    CosineEmbeddingLossConfig,
    PoissonNllLoss,
    PoissonNllLossConfig,
)
from ferrum.nn.reduction import Reduction
from ferrum.nn.reduction import check_same_shape as _same_dims
from ferrum.nn.reduction import reduce_loss as _reduce
from ferrum.nn.stateless import Stateless
from ferrum.nn.type_vars import B, D
from ferrum.tensor.rank import D1, D2

__all__ = [
    "BinaryCrossEntropyLoss",
    "BinaryCrossEntropyLossConfig",
    "CosineEmbeddingLoss",
    "CosineEmbeddingLossConfig",
    "CrossEntropyLoss",
    "CrossEntropyLossConfig",
    "HuberLoss",
    "HuberLossConfig",
    "MseLoss",
    "PoissonNllLoss",
    "PoissonNllLossConfig",
    "Reduction",
    "cross_entropy_with_logits",
]


def _as_tuple(owner: str, name: str, value: object, kind: type) -> tuple[Any, ...] | None:
    if value is None:
        return None
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{owner}.{name} must be a list of {kind.__name__}, found {value!r}")
    for item in value:
        ok = isinstance(item, kind) or (kind is float and isinstance(item, int))
        if isinstance(item, bool) or not ok:
            raise ValueError(f"{owner}.{name} must hold {kind.__name__}s, found {item!r}")
    return tuple(float(v) for v in value) if kind is float else tuple(value)


def _check_smoothing(owner: str, smoothing: float | None) -> None:
    if smoothing is None:
        return
    if isinstance(smoothing, bool) or not isinstance(smoothing, (int, float)) or not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"{owner}.smoothing must be in [0, 1], found {smoothing!r}")


def _check_weights(owner: str, weights: tuple[float, ...] | None) -> None:
    if weights is not None and not all(w > 0.0 and math.isfinite(w) for w in weights):
        raise ValueError(f"{owner}.weights must all be positive, found {list(weights)}")


def _weights_tensor(weights: tuple[float, ...], like: Tensor[B, Any, Float]) -> Tensor[B, D1, Float]:
    return Tensor.from_floats(list(weights), like.device(), dtype=like.dtype)


def _tiny(dtype: DType) -> float:
    # Burn clamps probabilities at sqrt(smallest positive normal) so their log stays finite.
    return math.sqrt(1.1754943508222875e-38 if dtype == DType.F32 else 2.2250738585072014e-308)


def _weights_shown(weights: tuple[float, ...] | None) -> str | None:
    # Burn holds class weights as a rank-1 tensor and shows its shape.
    return None if weights is None else tensor_summary((len(weights),))


# --------------------------------------------------------------------------- cross entropy


def cross_entropy_with_logits(
    logits: Tensor[B, D, Float], target_probs: Tensor[B, D, Float]
) -> Tensor[B, D1, Float]:
    """The cross entropy of ``logits`` against target probabilities (Burn's ``cross_entropy_with_logits``).

    ``-mean(sum(target_probs * log_softmax(logits, -1), -1))``: the classes
    are the last dim, every other dim indexes samples (``[batch, classes]``,
    ``[batch, seq, classes]``, ...), and ``target_probs`` has the shape of
    ``logits`` (soft labels, such as mixup's or a teacher's). Returns one
    element ``[1]``, differentiable. ``CrossEntropyLoss`` takes class ids instead.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.loss import cross_entropy_with_logits
        >>> device = NdArray.device()
        >>> targets = Tensor.from_data([[0.5, 0.5, 0.0, 0.0]], device)
        >>> loss = cross_entropy_with_logits(Tensor.zeros((1, 4), device), targets)
        >>> round(loss.into_scalar(), 4)  # log(4)
        1.3863
    """
    _same_dims("cross_entropy_with_logits", logits, target_probs, ("logits", "target_probs"))
    rank = logits.rank()
    if rank == 0:
        raise ShapeError("cross_entropy_with_logits: logits need a class dim, found a scalar")
    if logits.kind is not Float or target_probs.kind is not Float:
        raise KindError(
            "cross_entropy_with_logits: logits and target_probs must be Float tensors,"
            f" found {logits.kind.__name__} and {target_probs.kind.__name__}"
        )
    last = rank - 1
    return log_softmax(logits, last).mul(target_probs).sum_dim(last).mean().neg()


@config
class CrossEntropyLossConfig:
    """Configuration of ``CrossEntropyLoss`` (Burn's fields and defaults).

    ``pad_tokens``: target values left out of the loss; ``weights``: one
    positive weight per class; ``smoothing``: label smoothing in [0, 1];
    ``logits``: inputs are logits (True) or probabilities (False).

    Example:
        >>> from ferrum.nn.loss import CrossEntropyLossConfig
        >>> CrossEntropyLossConfig().with_smoothing(0.1).with_pad_tokens((0,)).pad_tokens
        (0,)
    """

    pad_tokens: tuple[int, ...] | None = None
    weights: tuple[float, ...] | None = None
    smoothing: float | None = None
    logits: bool = True

    def __post_init__(self) -> None:
        owner = "CrossEntropyLossConfig"
        pad = _as_tuple(owner, "pad_tokens", self.pad_tokens, int)
        if pad is not None and any(token < 0 for token in pad):
            raise ValueError(f"{owner}.pad_tokens must be >= 0, found {list(pad)}")
        weights = _as_tuple(owner, "weights", self.weights, float)
        _check_weights(owner, weights)
        _check_smoothing(owner, self.smoothing)
        if not isinstance(self.logits, bool):
            raise ValueError(f"{owner}.logits must be a bool, found {self.logits!r}")
        object.__setattr__(self, "pad_tokens", pad)
        object.__setattr__(self, "weights", weights)

    def init(self, device: Device[Any]) -> CrossEntropyLoss:
        """The loss (``device`` is where its class weights would live; they follow the inputs)."""
        if not isinstance(device, Device):
            raise TypeError(f"CrossEntropyLossConfig.init needs a Device, found {type(device).__name__}")
        smoothing = None if self.smoothing is None else float(self.smoothing)
        return CrossEntropyLoss(self.pad_tokens, self.weights, smoothing, self.logits)


class CrossEntropyLoss(Module[Any]):
    """Cross entropy between ``[batch, classes]`` scores and ``[batch]`` class indices.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.loss import CrossEntropyLossConfig
        >>> device = NdArray.device()
        >>> loss = CrossEntropyLossConfig().with_logits(False).init(device)
        >>> probs = Tensor.from_data([[0.5, 0.5], [0.25, 0.75]], device)
        >>> round(loss.forward(probs, Tensor.from_data([0, 1], device)).into_scalar(), 4)
        0.4904
    """

    pad_tokens: tuple[int, ...] | None
    weights: tuple[float, ...] | None
    smoothing: float | None
    logits: bool

    def forward(self, logits: Tensor[B, D2, Float], targets: Tensor[B, D1, Int]) -> Tensor[B, D1, Float]:
        """The loss, shape ``[1]``, normalised as Burn does.

        Without class weights: the sum over the batch divided by the batch size.
        With class weights: the weighted sum divided by the sum of the weights
        of every target. Targets equal to a pad token add 0 to the sum but are
        still counted in the denominator (as in Burn), so a batch half made of
        padding gives half the loss of the same batch without it.
        """
        dims, target_dims = logits.dims(), targets.dims()
        if len(dims) != 2 or len(target_dims) != 1 or target_dims[0] != dims[0]:
            raise ShapeError(
                f"CrossEntropyLoss.forward: expected logits [batch, classes] and targets [batch],"
                f" found {list(dims)} and {list(target_dims)}"
            )
        batch, classes = dims
        if self.weights is not None and len(self.weights) != classes:
            raise ShapeError(
                f"CrossEntropyLoss.forward: {len(self.weights)} class weights for {classes} classes of logits"
            )
        # PyTorch users pass float targets or probabilities: name the loss, not the gather inside it.
        if logits.kind is not Float:
            raise KindError(f"CrossEntropyLoss: logits must be a Float tensor, found {logits.kind.__name__}")
        if targets.kind is not Int:
            kind = targets.kind.__name__
            raise KindError(f"CrossEntropyLoss: targets must be an Int tensor of class indices, found {kind}")
        try:
            return self._loss(logits, targets, batch, classes)
        except OutOfBoundsError as err:
            # Checked by the gather itself, so a valid batch costs no extra pass over the targets.
            raise OutOfBoundsError(
                f"CrossEntropyLoss: every target must be a class index in [0, {classes}) ({err})"
            ) from None

    def _loss(
        self, logits: Tensor[B, D2, Float], targets: Tensor[B, D1, Int], batch: int, classes: int
    ) -> Tensor[B, D1, Float]:
        log_probs = log_softmax(logits, 1) if self.logits else None
        weights = None if self.weights is None else _weights_tensor(self.weights, logits)
        picked_weights = None if weights is None else weights.gather(0, targets)
        if self.smoothing is None:
            index = targets.reshape((batch, 1))
            if log_probs is not None:
                picked = log_probs.gather(1, index)
            else:
                picked = logits.clamp_min(_tiny(logits.dtype)).gather(1, index).log()
            per_sample = picked.reshape((batch,))
            if picked_weights is not None:
                per_sample = per_sample * picked_weights
        else:
            alpha = self.smoothing
            full = log_probs if log_probs is not None else logits.clamp_min(_tiny(logits.dtype)).log()
            hot = targets.one_hot(classes).float().cast(logits.dtype)
            weighted = full * (hot * (1.0 - alpha) + alpha / classes)
            if weights is not None:
                weighted = weighted * weights.reshape((1, classes))
            per_sample = weighted.sum_dim(1).reshape((batch,))
        return self._reduce_mean(per_sample, picked_weights, targets)

    def _reduce_mean(
        self,
        per_sample: Tensor[B, D1, Float],
        weights: Tensor[B, D1, Float] | None,
        targets: Tensor[B, D1, Int],
    ) -> Tensor[B, D1, Float]:
        # Burn's normalisation: pad positions add 0 to the sum but still count in the
        # denominator (the batch size, or the summed weights of every target).
        mask = None
        for token in self.pad_tokens or ():
            hit = targets.equal_elem(token)
            mask = hit if mask is None else mask.bool_or(hit)
        if mask is not None:
            per_sample = per_sample.mask_fill(mask, 0.0)
        if weights is None:
            return -per_sample.mean()
        return -per_sample.sum() / weights.sum()

    def _display_settings(self) -> list[tuple[str, object]]:
        pad = "None" if self.pad_tokens is None else f"Vec<0..{len(self.pad_tokens)}>"
        return [
            ("pad_tokens", pad),
            ("weights", _weights_shown(self.weights)),
            ("smoothing", self.smoothing),
            ("logits", self.logits),
        ]


# --------------------------------------------------------------------------- binary cross entropy


@config
class BinaryCrossEntropyLossConfig:
    """Configuration of ``BinaryCrossEntropyLoss`` (Burn's fields and defaults; ``logits`` is off).

    Example:
        >>> from ferrum.nn.loss import BinaryCrossEntropyLossConfig
        >>> BinaryCrossEntropyLossConfig().logits
        False
    """

    weights: tuple[float, ...] | None = None
    smoothing: float | None = None
    logits: bool = False

    def __post_init__(self) -> None:
        owner = "BinaryCrossEntropyLossConfig"
        weights = _as_tuple(owner, "weights", self.weights, float)
        _check_weights(owner, weights)
        _check_smoothing(owner, self.smoothing)
        if not isinstance(self.logits, bool):
            raise ValueError(f"{owner}.logits must be a bool, found {self.logits!r}")
        object.__setattr__(self, "weights", weights)

    def init(self, device: Device[Any]) -> BinaryCrossEntropyLoss:
        """The loss."""
        if not isinstance(device, Device):
            raise TypeError(
                f"BinaryCrossEntropyLossConfig.init needs a Device, found {type(device).__name__}"
            )
        smoothing = None if self.smoothing is None else float(self.smoothing)
        return BinaryCrossEntropyLoss(self.weights, smoothing, self.logits)


class BinaryCrossEntropyLoss(Module[Any]):
    """Binary cross entropy of ``[batch]`` (binary) or ``[batch, classes]`` (multi-label) inputs, 0/1 targets.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.loss import BinaryCrossEntropyLossConfig
        >>> device = NdArray.device()
        >>> loss = BinaryCrossEntropyLossConfig().with_logits(True).init(device)
        >>> value = loss.forward(Tensor.zeros((4,), device), Tensor.from_data([0, 1, 0, 1], device))
        >>> round(value.into_scalar(), 4)
        0.6931
    """

    weights: tuple[float, ...] | None
    smoothing: float | None
    logits: bool

    def forward(self, logits: Tensor[B, D, Float], targets: Tensor[B, D, Int]) -> Tensor[B, D1, Float]:
        """The mean loss over all elements, shape ``[1]``."""
        _same_dims("BinaryCrossEntropyLoss.forward", logits, targets, ("logits", "targets"))
        dims = logits.dims()
        if self.weights is not None and len(dims) > 1 and len(self.weights) != dims[-1]:
            raise ShapeError(
                f"BinaryCrossEntropyLoss.forward: the number of classes ({dims[-1]}) does not match"
                f" the {len(self.weights)} weights"
            )
        y: Tensor[B, D, Float] = targets.float().cast(logits.dtype)
        if self.smoothing is not None:
            classes = dims[-1] if len(dims) > 1 else 2
            y = y * (1.0 - self.smoothing) + self.smoothing / classes
        if self.logits:
            # (1 - y) * x - log(sigmoid(x)) stays finite for large |x|.
            loss = (1.0 - y) * logits - log_sigmoid(logits)
        else:
            # Burn clamps each log at -100 so a 0 or 1 probability gives a finite loss.
            loss = (y - 1.0) * (-logits).log1p().clamp_min(-100.0) - y * logits.log().clamp_min(-100.0)
        if self.weights is not None:
            weights = _weights_tensor(self.weights, logits)
            if len(dims) > 1:
                loss = loss * weights.reshape((1,) * (len(dims) - 1) + (dims[-1],))
            else:
                picked: Any = weights.gather(0, targets.reshape((dims[0],)))
                loss = loss * picked
        return loss.mean()

    def _display_settings(self) -> list[tuple[str, object]]:
        weights = _weights_shown(self.weights)
        return [("weights", weights), ("smoothing", self.smoothing), ("logits", self.logits)]


# --------------------------------------------------------------------------- regression losses


class MseLoss(Stateless):
    """Mean squared error: ``(logits - targets)^2``, reduced.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.loss import MseLoss, Reduction
        >>> device = NdArray.device()
        >>> a, b = Tensor.from_data([1.0, 2.0], device), Tensor.from_data([0.0, 0.0], device)
        >>> MseLoss().forward(a, b, Reduction.Sum).into_scalar()
        5.0
    """

    def forward(
        self, logits: Tensor[B, D, Float], targets: Tensor[B, D, Float], reduction: Reduction = Reduction.Auto
    ) -> Tensor[B, D1, Float]:
        """The reduced loss, shape ``[1]`` (``Auto`` is ``Mean``)."""
        return _reduce(self.forward_no_reduction(logits, targets), reduction)

    def forward_no_reduction(
        self, logits: Tensor[B, D, Float], targets: Tensor[B, D, Float]
    ) -> Tensor[B, D, Float]:
        """The squared error of every element."""
        _same_dims("MseLoss.forward", logits, targets, ("logits", "targets"))
        diff = logits - targets
        return diff * diff


@config
class HuberLossConfig:
    """Configuration of ``HuberLoss``: ``delta`` is where the loss turns from quadratic to linear.

    Example:
        >>> from ferrum.nn.loss import HuberLossConfig
        >>> HuberLossConfig(0.5).init()
        HuberLoss {delta: 0.5, lin_bias: 0.125}
    """

    delta: float

    def __post_init__(self) -> None:
        d = self.delta
        if isinstance(d, bool) or not isinstance(d, (int, float)) or not math.isfinite(d) or d < 0:
            raise ValueError(f"HuberLossConfig.delta must be a non-negative number, found {d!r}")

    def init(self) -> HuberLoss:
        """The loss."""
        delta = float(self.delta)
        return HuberLoss(delta, 0.5 * delta * delta)


class HuberLoss(Stateless):
    """Huber loss of the residuals ``r = targets - predictions``.

    ``0.5 * r^2`` where ``|r| <= delta``, ``delta * |r| - 0.5 * delta^2`` elsewhere.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn.loss import HuberLossConfig
        >>> device = NdArray.device()
        >>> huber = HuberLossConfig(0.5).init()
        >>> r = Tensor.from_data([-2.0, -0.5, 0.0, 0.3, 1.0], device)
        >>> [round(v, 4) for v in huber.forward_residuals(r).to_data().to_list()]
        [0.875, 0.125, 0.0, 0.045, 0.375]
    """

    delta: float
    lin_bias: float

    def forward(
        self,
        predictions: Tensor[B, D, Float],
        targets: Tensor[B, D, Float],
        reduction: Reduction = Reduction.Auto,
    ) -> Tensor[B, D1, Float]:
        """The reduced loss, shape ``[1]`` (``Auto`` is ``Mean``)."""
        return _reduce(self.forward_no_reduction(predictions, targets), reduction)

    def forward_no_reduction(
        self, predictions: Tensor[B, D, Float], targets: Tensor[B, D, Float]
    ) -> Tensor[B, D, Float]:
        """The loss of every element."""
        _same_dims("HuberLoss.forward", predictions, targets, ("predictions", "targets"))
        return self.forward_residuals(targets - predictions)

    def forward_residuals(self, residuals: Tensor[B, D, Float]) -> Tensor[B, D, Float]:
        """The loss of every residual."""
        is_large = residuals.abs().greater_elem(self.delta)
        # clamp(r, -delta, delta) * r is delta * |r| where |r| > delta, without sign()'s jump at 0.
        outside = residuals.clamp(-self.delta, self.delta) * residuals - self.lin_bias
        inside = residuals * residuals * 0.5
        return inside.mask_where(is_large, outside)
