"""The outcome of loading a store into a module: Burn's ``ApplyResult`` and ``ApplyError``."""

from __future__ import annotations

import dataclasses

from ferrum._ferrum import FerrumError

__all__ = ["ApplyError", "ApplyResult", "StoreError"]


class StoreError(FerrumError, ValueError):
    """A store that cannot be read, written or applied: a damaged file, a missing or misshapen tensor.

    ``result`` holds the ``ApplyResult`` when the failure came from applying tensors to a module.

    Example:
        >>> from ferrum.backend import NdArray
        >>> from ferrum.nn import LinearConfig
        >>> from ferrum.store import PytorchStore
        >>> try:
        ...     LinearConfig(2, 2).init(NdArray.device()).load_from(PytorchStore.from_file("missing.pt"))
        ... except StoreError as e:
        ...     print(e)
        PyTorch file missing.pt does not exist
    """

    def __init__(self, message: str, result: ApplyResult | None = None) -> None:
        super().__init__(message)
        self.result = result


@dataclasses.dataclass(frozen=True)
class ApplyError:
    """A tensor that could not be applied; ``kind`` is ``"shape"`` (mismatch) or ``"load"`` (unreadable)."""

    kind: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclasses.dataclass(frozen=True)
class ApplyResult:
    """What loading did, tensor by tensor (module paths).

    - ``applied``: loaded into the module.
    - ``skipped``: in the module and the file, but left out by the store's filter.
    - ``missing``: in the module, not in the file (with the module class holding it).
    - ``unused``: in the file, not in the module.
    - ``errors``: found but not applicable (shape mismatch, unreadable values).

    Example:
        >>> from ferrum.store import ApplyResult
        >>> result = ApplyResult(applied=["fc.weight"], unused=["fc.num_batches_tracked"])
        >>> result.is_success(), result
        (True, ApplyResult(applied=1, skipped=0, missing=0, unused=1, errors=0))
    """

    applied: list[str] = dataclasses.field(default_factory=list)
    skipped: list[str] = dataclasses.field(default_factory=list)
    missing: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    unused: list[str] = dataclasses.field(default_factory=list)
    errors: list[ApplyError] = dataclasses.field(default_factory=list)

    def is_success(self) -> bool:
        """No errors (missing tensors are judged by the store's ``allow_partial``)."""
        return not self.errors

    def __repr__(self) -> str:
        counts = ", ".join(
            f"{name}={len(getattr(self, name))}"
            for name in ("applied", "skipped", "missing", "unused", "errors")
        )
        return f"ApplyResult({counts})"

    def report(self) -> str:
        """A readable multi-line account: errors and missing tensors first, then unused ones."""
        lines = [repr(self)]
        lines += [f"  error: {err}" for err in self.errors]
        lines += [f"  missing: {path} (in {container})" for path, container in self.missing]
        lines += [f"  unused: {path}" for path in self.unused]
        return "\n".join(lines)
