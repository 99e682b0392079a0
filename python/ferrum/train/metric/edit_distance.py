"""Edit distances between token sequences, and the error-rate metrics built on them (CER, WER).

Both metrics read two Int tensors of token indices, [batch, length]: the
predicted sequences and the reference ones. With a pad token, a sequence
ends at its first pad token (right padding); outputs and targets may be
padded to different lengths. The edit distance is Levenshtein's: the
fewest insertions, deletions and substitutions turning one sequence into
the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt
from typing_extensions import Self

from ferrum import D2, Int, Tensor
from ferrum.backend import Backend
from ferrum.train.metric.adaptor import MetricInput, check_same_batch, check_tensor, read_field
from ferrum.train.metric.base import MetricEntry
from ferrum.train.metric.state_metric import PadTokenMetric

__all__ = [
    "ErrorRateMetric",
    "TokenSequencesFields",
    "TokenSequencesInput",
    "edit_distances",
    "sequence_lengths",
]

B = TypeVar("B", bound=Backend)
IntArray = npt.NDArray[np.int64]


def edit_distances(
    references: IntArray, reference_lengths: IntArray, predictions: IntArray, prediction_lengths: IntArray
) -> IntArray:
    """The Levenshtein distance of each row's reference prefix to its prediction prefix.

    ``references`` [batch, R] and ``predictions`` [batch, P] hold tokens;
    row ``b`` compares ``references[b, :reference_lengths[b]]`` with
    ``predictions[b, :prediction_lengths[b]]``. The dynamic programme runs
    one reference position at a time, vectorised over the batch and over
    prediction positions.

    Example:
        >>> import numpy as np
        >>> refs, preds = np.array([[1, 2, 3], [4, 5, 0]]), np.array([[1, 3, 3, 7], [5, 0, 0, 0]])
        >>> edit_distances(refs, np.array([3, 2]), preds, np.array([4, 1])).tolist()
        [2, 1]
    """
    batch, pred_len = predictions.shape
    columns = np.arange(pred_len + 1)
    rows = np.arange(batch)
    result = prediction_lengths.astype(np.int64).copy()  # an empty reference: insert every prediction
    previous = np.broadcast_to(columns, (batch, pred_len + 1)).astype(np.int64)
    current = np.empty_like(previous)
    for i in range(1, references.shape[1] + 1):
        cost = (predictions != references[:, i - 1 : i]).astype(np.int64)
        current[:, 0] = i
        np.minimum(previous[:, :-1] + cost, previous[:, 1:] + 1, out=current[:, 1:])
        # An insertion extends the row: current[j] = min over k <= j of current[k] + (j - k).
        current[:] = np.minimum.accumulate(current - columns, axis=1) + columns
        done = reference_lengths == i
        result[done] = current[rows[done], prediction_lengths[done]]
        previous, current = current, previous
    return result


def sequence_lengths(tokens: IntArray, pad_token: int | None) -> IntArray:
    """Each row's length: the index of its first ``pad_token``, or the full width.

    Example:
        >>> import numpy as np
        >>> sequence_lengths(np.array([[1, 2, 9], [9, 9, 9], [1, 2, 3]]), 9).tolist()
        [2, 0, 3]
    """
    batch, width = tokens.shape
    if pad_token is None or width == 0:
        return np.full(batch, width, dtype=np.int64)
    pad = tokens == pad_token
    lengths: IntArray = np.where(pad.any(axis=1), pad.argmax(axis=1), width).astype(np.int64)
    return lengths


@dataclass(frozen=True)
class TokenSequencesInput(MetricInput, Generic[B]):
    """Base of the CER and WER inputs: ``outputs`` and ``targets`` Int [batch, length] of token indices.

    Built from any output whose ``output`` and ``targets`` fields are such tensors.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> d = NdArray.device()
        >>> predicted, reference = Tensor.from_ints([[1, 2, 0]], d), Tensor.from_ints([[1, 2]], d)
        >>> TokenSequencesInput(predicted, reference).outputs.dims()
        (1, 3)
    """

    outputs: Tensor[B, D2, Int]
    targets: Tensor[B, D2, Int]

    fields_description = "the fields `output` (Int [batch, length]) and `targets` (Int [batch, length])"

    def __post_init__(self) -> None:
        owner = type(self).__name__
        check_tensor(owner, "outputs", self.outputs, 2, (Int,))
        check_tensor(owner, "targets", self.targets, 2, (Int,))
        check_same_batch(owner, self.outputs, self.targets)

    @classmethod
    def from_fields(cls, item: object) -> Self:
        """The input of ``item.output`` and ``item.targets``."""
        return cls(read_field(item, "output", 2, Int), read_field(item, "targets", 2, Int))


@runtime_checkable
class TokenSequencesFields(Protocol):
    """An output whose fields are token sequences: ``output`` and ``targets`` Int [batch, length].

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> class Decoded:
        ...     output = targets = Tensor.from_ints([[3, 1, 4]], NdArray.device())
        >>> isinstance(Decoded(), TokenSequencesFields)
        True
    """

    @property
    def output(self) -> Tensor[Any, D2, Int]:
        """Predicted token ids, Int [batch, seq]."""
        ...

    @property
    def targets(self) -> Tensor[Any, D2, Int]:
        """Reference token ids, Int [batch, seq]."""
        ...


class ErrorRateMetric(PadTokenMetric):
    """Base of CER and WER: total edit distance over total reference length, in percent.

    The batch's weight in the epoch is its number of reference tokens, so
    the epoch value is the error rate over every token of the epoch.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> d = NdArray.device()
        >>> from ferrum.train.metric import MetricMetadata
        >>> class TokenErrorRate(ErrorRateMetric):
        ...     def update(self, item: TokenSequencesInput[Any], metadata: MetricMetadata) -> MetricEntry:
        ...         return self._record_error_rate(item)
        >>> pair = TokenSequencesInput(Tensor.from_ints([[5, 6, 7]], d), Tensor.from_ints([[5, 7, 0]], d))
        >>> TokenErrorRate("TER", pad_token=0).update(pair, MetricMetadata.fake()).serialized  # 1 edit / 2
        '50.0,2'
    """

    higher_is_better = False

    def _record_error_rate(self, sequences: TokenSequencesInput[Any]) -> MetricEntry:
        predictions = sequences.outputs.to_numpy().astype(np.int64, copy=False)
        references = sequences.targets.to_numpy().astype(np.int64, copy=False)
        prediction_lengths = sequence_lengths(predictions, self.pad_token)
        reference_lengths = sequence_lengths(references, self.pad_token)
        distance = int(edit_distances(references, reference_lengths, predictions, prediction_lengths).sum())
        return self._record_share(distance, int(reference_lengths.sum()))
