"""How a metric gets its input from a step's output: Burn's ``Adaptor``, the Python way.

Every metric reads one input type (``AccuracyInput``, ``LossInput``,
``ConfusionStatsInput``, ...). The item the Learner hands to
``update(item, metadata)`` gives that input in one of three ways, tried in
this order:

1. the item **is** the input (``metric.update(AccuracyInput(...), ...)``);
2. **explicitly**: the item has the input's adaptor method, named after the
   input in snake case (``accuracy_input()``, ``loss_input()``,
   ``confusion_stats_input()``, ...), which returns the input. Each input has
   a protocol for it (``AccuracyAdaptor``, ``LossAdaptor``, ...) that mypy
   checks a user's output class against;
3. **structurally**: the item has the fields of Burn's output types
   (``loss``, ``output``, ``targets``), from which the metric builds its
   input as Burn's ``Adaptor`` impls for ``ClassificationOutput``,
   ``MultiLabelClassificationOutput`` and ``RegressionOutput`` do.

An item that gives none of these is a ``TypeError`` naming the metric, the
item's class and what the metric needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

from typing_extensions import Self

from ferrum import D1, D2, Float, Int, Kind, Tensor
from ferrum.backend import Backend

__all__ = [
    "ClassificationFields",
    "ClassificationInput",
    "LossFields",
    "MetricInput",
    "MultiLabelFields",
    "adapt",
    "article",
    "check_classification_pair",
    "check_same_batch",
    "check_same_shape",
    "check_tensor",
    "read_field",
]


class MissingField(Exception):
    """Raised by ``MetricInput.from_fields`` when the item lacks a field it needs, with what was found.

    ``adapt`` turns it into the ``TypeError`` a user sees (see ``MetricInput``'s example).
    """


class MetricInput:
    """Base of every metric input type.

    A subclass names its adaptor method (``adaptor_method``), says which
    fields of an output it reads (``fields_description``) and builds itself
    from them in ``from_fields`` (raising ``MissingField`` otherwise). A
    metric of your own can read its input the same way through ``adapt``.

    Example:
        >>> from dataclasses import dataclass
        >>> from typing import Any
        >>> from ferrum import D1, Float, Tensor
        >>> from ferrum.backend import NdArray
        >>> @dataclass(frozen=True)
        ... class ScoreInput(MetricInput):
        ...     scores: Tensor[Any, D1, Float]  # [batch]
        ...     adaptor_method = "score_input"
        ...     fields_description = "a `scores` field (Float [batch])"
        ...     @classmethod
        ...     def from_fields(cls, item: object) -> "ScoreInput":
        ...         return cls(read_field(item, "scores", 1, Float))
        >>> class StepOutput:
        ...     scores = Tensor.from_floats([0.5, 1.5], NdArray.device())
        >>> adapt(StepOutput(), ScoreInput, "Mean Score").scores.dims()
        (2,)
        >>> adapt(3.5, ScoreInput, "Mean Score")
        Traceback (most recent call last):
        ...
        TypeError: metric 'Mean Score' cannot read its input from a float: it needs a ScoreInput, ...
    """

    adaptor_method: ClassVar[str]
    fields_description: ClassVar[str]

    @classmethod
    def from_fields(cls, item: object) -> Self:
        """The input built from an output's fields, as Burn's ``Adaptor`` impls build it."""
        raise MissingField(f"{cls.__name__} cannot be read from fields")


InputT = TypeVar("InputT", bound=MetricInput)
B = TypeVar("B", bound=Backend)


@dataclass(frozen=True)
class ClassificationInput(MetricInput, Generic[B]):
    """Base of inputs read from a classification: ``outputs`` Float [batch, classes], ``targets`` Int [batch].

    Built from any output with Burn's ``ClassificationOutput`` fields (``output``, ``targets``).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.train import ClassificationOutput
        >>> d = NdArray.device()
        >>> logits, targets = Tensor.zeros((2, 3), d), Tensor.from_ints([0, 2], d)
        >>> out = ClassificationOutput(Tensor.from_floats([0.1], d), logits, targets)
        >>> ClassificationInput.from_fields(out).outputs.dims()
        (2, 3)
    """

    outputs: Tensor[B, D2, Float]
    targets: Tensor[B, D1, Int]

    fields_description = "the fields `output` (Float [batch, classes]) and `targets` (Int [batch])"

    def __post_init__(self) -> None:
        check_classification_pair(type(self).__name__, self.outputs, self.targets)

    @classmethod
    def from_fields(cls, item: object) -> Self:
        """The input of ``item.output`` and ``item.targets``."""
        return cls(read_field(item, "output", 2, Float), read_field(item, "targets", 1, Int))


def adapt(item: object, input_type: type[InputT], metric: str) -> InputT:
    """``input_type`` from ``item``: the item itself, its adaptor method's result, or its fields.

    ``metric`` is the metric's name, for the error an unfit item raises.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.train.metric import LossInput
        >>> class Output:
        ...     def __init__(self) -> None:
        ...         self.loss = Tensor.from_floats([0.25], NdArray.device())
        >>> adapt(Output(), LossInput, "Loss").tensor.into_scalar()
        0.25
        >>> adapt(object(), LossInput, "Loss")
        Traceback (most recent call last):
        ...
        TypeError: metric 'Loss' cannot read its input from an object: ...
    """
    if isinstance(item, input_type):
        return item
    method = getattr(item, input_type.adaptor_method, None)
    if callable(method):
        result = method()
        if not isinstance(result, input_type):
            raise TypeError(
                f"metric {metric!r}: {type(item).__name__}.{input_type.adaptor_method}() returned "
                f"{article(type(result).__name__)}, expected {article(input_type.__name__)}"
            )
        return result
    try:
        return input_type.from_fields(item)
    except MissingField as missing:
        raise TypeError(
            f"metric {metric!r} cannot read its input from {article(type(item).__name__)}: it needs "
            f"{article(input_type.__name__)}, an item with a {input_type.adaptor_method}() method returning "
            f"one, or an item with {input_type.fields_description} ({missing})"
        ) from None


def article(name: str) -> str:
    """``name`` after "a" or "an", as its first letter asks.

    Example:
        >>> article("Int"), article("Float")
        ('an Int', 'a Float')
    """
    return f"an {name}" if name[:1].upper() in "AEIOU" else f"a {name}"


def read_field(item: object, name: str, rank: int | None, kind: type[Kind] | None) -> Tensor[Any, Any, Any]:
    """The tensor field ``name`` of ``item``, of the given rank (``None``: 3 or more) and kind.

    Raises ``MissingField`` saying what was found instead.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> class StepOutput:
        ...     targets = Tensor.from_floats([1.0], NdArray.device())
        >>> read_field(StepOutput(), "targets", 1, Int)
        Traceback (most recent call last):
        ...
        ferrum.train.metric.adaptor.MissingField: its `targets` is a Float tensor (1,), not Int
    """
    if not hasattr(item, name):
        raise MissingField(f"{type(item).__name__} has no field `{name}`")
    value = getattr(item, name)
    problem = _tensor_problem(value, rank, kind)
    if problem:
        raise MissingField(f"its `{name}` is {problem}")
    return value  # type: ignore[no-any-return]


def check_tensor(
    owner: str, name: str, value: object, rank: int | None, kinds: tuple[type[Kind], ...]
) -> None:
    """Check an input's field: a tensor of the given rank (``None``: 3 or more) and one of ``kinds``.

    A wrong kind or non-tensor is a ``TypeError``, a wrong rank a ``ValueError``, each naming the field.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> check_tensor("MyInput", "scores", Tensor.zeros((2, 2), NdArray.device()), 1, (Float,))
        Traceback (most recent call last):
        ...
        ValueError: MyInput.scores must have rank 1, found shape (2, 2)
    """
    if not isinstance(value, Tensor):
        raise TypeError(f"{owner}.{name} must be a Tensor, found {article(type(value).__name__)}")
    if value.kind not in kinds:
        expected = " or ".join(k.__name__ for k in kinds)
        found = f"{value.kind.__name__} {value.dims()}"
        raise TypeError(f"{owner}.{name} must be {article(expected)} tensor, found {found}")
    if (value.rank() != rank) if rank is not None else (value.rank() < 3):
        expected_rank = f"rank {rank}" if rank is not None else "rank 3 or more"
        raise ValueError(f"{owner}.{name} must have {expected_rank}, found shape {value.dims()}")


def check_same_batch(owner: str, first: Tensor[Any, Any, Any], second: Tensor[Any, Any, Any]) -> None:
    """``ValueError`` unless both tensors have the same first (batch) dimension.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> d = NdArray.device()
        >>> check_same_batch("MyInput", Tensor.zeros((2, 3), d), Tensor.zeros((3,), d))
        Traceback (most recent call last):
        ...
        ValueError: MyInput: outputs and targets must have the same batch size, found (2, 3) and (3,)
    """
    if first.dims()[0] != second.dims()[0]:
        raise ValueError(
            f"{owner}: outputs and targets must have the same batch size, "
            f"found {first.dims()} and {second.dims()}"
        )


def check_same_shape(
    owner: str,
    first: Tensor[Any, Any, Any],
    second: Tensor[Any, Any, Any],
    names: str = "outputs and targets",
) -> None:
    """``ValueError`` unless both tensors have the same shape (element by element inputs).

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> d = NdArray.device()
        >>> check_same_shape("MyInput", Tensor.zeros((1, 2), d), Tensor.zeros((1, 3), d))
        Traceback (most recent call last):
        ...
        ValueError: MyInput: outputs and targets must have the same shape, found (1, 2) and (1, 3)
    """
    if first.dims() != second.dims():
        found = f"found {first.dims()} and {second.dims()}"
        raise ValueError(f"{owner}: {names} must have the same shape, {found}")


def check_classification_pair(owner: str, outputs: object, targets: object) -> None:
    """Check an input's ``outputs`` Float [batch, classes] and ``targets`` Int [batch] of the same batch.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> d = NdArray.device()
        >>> check_classification_pair("MyInput", Tensor.zeros((2, 3), d), Tensor.zeros((2,), d))
        Traceback (most recent call last):
        ...
        TypeError: MyInput.targets must be an Int tensor, found Float (2,)
    """
    check_tensor(owner, "outputs", outputs, 2, (Float,))
    check_tensor(owner, "targets", targets, 1, (Int,))
    assert isinstance(outputs, Tensor) and isinstance(targets, Tensor)
    check_same_batch(owner, outputs, targets)


def _tensor_problem(value: object, rank: int | None, kind: type[Kind] | None) -> str | None:
    if not isinstance(value, Tensor):
        return f"{article(type(value).__name__)}, not a Tensor"
    if kind is not None and value.kind is not kind:
        return f"{article(value.kind.__name__)} tensor {value.dims()}, not {kind.__name__}"
    if rank is not None and value.rank() != rank:
        return f"of shape {value.dims()}, not of rank {rank}"
    if rank is None and value.rank() < 3:
        return f"of shape {value.dims()}, not of rank 3 or more"
    return None


@runtime_checkable
class LossFields(Protocol):
    """An output with Burn's ``loss`` field (every Burn output type has one), Float [1] or [batch].

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> class StepOutput:
        ...     loss = Tensor.from_floats([0.1], NdArray.device())
        >>> isinstance(StepOutput(), LossFields)
        True
    """

    @property
    def loss(self) -> Tensor[Any, D1, Float]:
        """The loss, Float [1] (a mean) or [batch]."""
        ...


@runtime_checkable
class ClassificationFields(Protocol):
    """The fields of Burn's ``ClassificationOutput``.

    ``output`` Float [batch, classes] (logits or scores), ``targets`` Int [batch] (class indices).
    A class with these fields is read by the accuracy, top-k accuracy,
    precision, recall, F-beta, perplexity and AUROC metrics.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.train import ClassificationOutput
        >>> d = NdArray.device()
        >>> logits, targets = Tensor.zeros((2, 3), d), Tensor.from_ints([0, 2], d)
        >>> out = ClassificationOutput(Tensor.from_floats([0.1], d), logits, targets)
        >>> isinstance(out, ClassificationFields)
        True
    """

    @property
    def output(self) -> Tensor[Any, D2, Float]:
        """Logits or scores, Float [batch, classes]."""
        ...

    @property
    def targets(self) -> Tensor[Any, D1, Int]:
        """Class indices, Int [batch]."""
        ...


@runtime_checkable
class MultiLabelFields(Protocol):
    """The fields of Burn's ``MultiLabelClassificationOutput``.

    ``output`` Float [batch, labels] (scores), ``targets`` Int [batch, labels] (0 or 1).
    A class with these fields is read by the Hamming score, precision,
    recall and F-beta metrics.

    Example:
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> from ferrum.train import MultiLabelClassificationOutput
        >>> d = NdArray.device()
        >>> scores, targets = Tensor.zeros((1, 2), d), Tensor.from_ints([[0, 1]], d)
        >>> out = MultiLabelClassificationOutput(Tensor.from_floats([0.1], d), scores, targets)
        >>> isinstance(out, MultiLabelFields)
        True
    """

    @property
    def output(self) -> Tensor[Any, D2, Float]:
        """Scores, Float [batch, labels]."""
        ...

    @property
    def targets(self) -> Tensor[Any, D2, Int]:
        """0/1 labels, Int [batch, labels]."""
        ...
