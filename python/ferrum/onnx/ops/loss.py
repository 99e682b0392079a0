"""Losses: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss (since opset 12).

Both read the class scores as ``[N, C, d1, ..., dk]`` and the targets as
``[N, d1, ..., dk]`` class indices, pick each target's score with a gather
(so the loss is differentiable with respect to the scores), weigh it by the
optional per-class ``weight`` and drop the targets equal to ``ignore_index``.
"""

from __future__ import annotations

from ferrum import activation
from ferrum._ferrum import Int, KindError
from ferrum.onnx.ops._util import AnyTensor, same_kind
from ferrum.onnx.ops.registry import op

__all__ = ["negative_log_likelihood_loss", "softmax_cross_entropy_loss"]

_REDUCTIONS = ("none", "sum", "mean")


def _nll(
    name: str,
    log_prob: AnyTensor,
    target: AnyTensor,
    weight: AnyTensor | None,
    ignore_index: int | None,
    reduction: str,
) -> AnyTensor:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: reduction must be 'none', 'sum' or 'mean', found {reduction!r}")
    if target.kind is not Int:
        raise KindError(f"{name}: the target must be an Int tensor of class indices, found {target.kind}")
    dims, target_dims = tuple(log_prob.dims()), tuple(target.dims())
    if len(dims) < 2 or target_dims != dims[:1] + dims[2:]:
        raise ValueError(
            f"{name}: the target {list(target_dims)} must be the input {list(dims)} without its class dim (1)"
        )
    ignored = target.equal_elem(ignore_index) if ignore_index is not None else None
    index = target if ignored is None else target.mask_fill(ignored, 0)
    classes = dims[1]
    # A target outside [0, C) that is not ignored is an error, as in onnxruntime (the gather would
    # otherwise read another class or raise deep in the engine).
    if index.num_elements() and (
        index.lower_elem(0).any().into_scalar() or index.greater_equal_elem(classes).any().into_scalar()
    ):
        raise ValueError(f"{name}: a target is outside the {classes} classes [0, {classes}) and not ignored")
    loss = -log_prob.gather(1, index.unsqueeze_dims([1])).squeeze_dims([1])
    share: AnyTensor | None = None
    if weight is not None:
        share = weight.select(0, index.reshape((-1,))).reshape(target_dims)
        if ignored is not None:
            share = share.mask_fill(ignored, 0.0)
    elif ignored is not None:
        share = same_kind(ignored.bool_not(), log_prob)
    if share is not None:
        loss = loss * share
    if reduction == "none":
        return loss
    total = loss.sum().reshape(())
    if reduction == "sum":
        return total
    if share is None:
        return loss.mean().reshape(())
    return total / share.sum().reshape(())


@op("NegativeLogLikelihoodLoss")
def negative_log_likelihood_loss(
    x: AnyTensor,
    target: AnyTensor,
    weight: AnyTensor | None = None,
    ignore_index: int | None = None,
    reduction: str = "mean",
) -> AnyTensor:
    """NegativeLogLikelihoodLoss: ``-x[n, target[n, d...], d...] * weight[target[n, d...]]``, reduced.

    ``x`` is ``[N, C]`` or ``[N, C, d1, ..., dk]`` log-probabilities (Float),
    ``target`` the ``[N]`` or ``[N, d1, ..., dk]`` class indices (Int) and the
    optional ``weight`` ``[C]`` each class's weight (1 when absent). Targets
    equal to ``ignore_index`` count with weight 0. ``reduction`` is ``none``
    (the per-element losses, shaped like ``target``), ``sum``, or ``mean`` (the
    default: the weighted sum divided by the sum of the weights taken, so with
    every target ignored it is 0/0 = NaN, as ONNX's reference gives). The sum
    and mean are rank 0. A target outside ``[0, C)`` that is not ignored, a
    ``target`` whose shape is not ``x``'s without dim 1, or another reduction
    raise ``ValueError``.

    Example:
        >>> import numpy as np
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> device = NdArray.device()
        >>> x = Tensor.from_numpy(np.log(np.array([[0.5, 0.5], [0.25, 0.75]], np.float32)), device)
        >>> t = Tensor.from_numpy(np.array([0, 1]), device)
        >>> negative_log_likelihood_loss(x, t, reduction="none").to_numpy().astype(float).round(4).tolist()
        [0.6931, 0.2877]
    """
    return _nll("NegativeLogLikelihoodLoss", x, target, weight, ignore_index, reduction)


@op("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy_loss(
    scores: AnyTensor,
    labels: AnyTensor,
    weights: AnyTensor | None = None,
    ignore_index: int | None = None,
    reduction: str = "mean",
) -> tuple[AnyTensor, AnyTensor]:
    """SoftmaxCrossEntropyLoss: NegativeLogLikelihoodLoss of ``log_softmax(scores)`` over the class dim 1.

    ``scores`` is ``[N, C]`` or ``[N, C, d1, ..., dk]`` (Float), ``labels`` the
    class indices, ``weights``, ``ignore_index`` and ``reduction`` as in
    NegativeLogLikelihoodLoss (see ``negative_log_likelihood_loss``). Returns
    the loss and the log-probabilities (the optional second output,
    ``scores``' shape); a node with one output uses only the first.
    """
    log_prob = activation.log_softmax(scores, 1)
    loss = _nll("SoftmaxCrossEntropyLoss", log_prob, labels, weights, ignore_index, reduction)
    return loss, log_prob
