"""Optional dependencies: one clear error naming the extra that brings a missing package.

Parts of ferrum need a package that ``pip install ferrum-dl`` does not bring:
``ferrum.onnx`` needs onnx (extra ``onnx``), ``ferrum.distributed`` mpi4py
(``mpi``), the metric plots matplotlib (``plot``), ``SafetensorsStore``
safetensors (``safetensors``), the vision datasets Pillow (``vision``), the
system metrics psutil (``sys-metrics``). ``require`` imports such a package,
or raises ``MissingExtraError`` (a ``ModuleNotFoundError``) whose message
says what to install. Under ``python -m`` (``python -m ferrum.onnx``), the
error is printed as one line on stderr, without a traceback, and the exit
status is 1.

Example:
    >>> require("json", "this example", "none").__name__
    'json'
    >>> require("not_installed_pkg", "frobbing", "frob")
    Traceback (most recent call last):
    ...
    ferrum.extras.MissingExtraError: frobbing needs not_installed_pkg: pip install 'ferrum-dl[frob]'
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from types import ModuleType, TracebackType
from typing import NoReturn

__all__ = ["MissingExtraError", "require", "run_main"]


class MissingExtraError(ModuleNotFoundError):
    """A package of one of ferrum's extras is not installed; the message names the extra.

    ``name`` is the missing package (as ``ModuleNotFoundError.name``) and
    ``extra`` the extra that brings it (``pip install 'ferrum-dl[<extra>]'``).

    Example:
        >>> str(MissingExtraError("onnx", "ferrum.onnx", "onnx"))
        "ferrum.onnx needs onnx: pip install 'ferrum-dl[onnx]'"
    """

    def __init__(self, package: str, feature: str, extra: str, note: str = "") -> None:
        message = f"{feature} needs {package}: pip install 'ferrum-dl[{extra}]'{note}"
        super().__init__(message, name=package)
        self.extra = extra


def require(module: str, feature: str, extra: str, note: str = "") -> ModuleType:
    """The module ``module`` (e.g. ``"safetensors.numpy"``), or ``MissingExtraError`` naming ``extra``.

    Args:
        module: the module to import.
        feature: what needs it, as the message starts (``"SafetensorsStore"``).
        extra: the extra of ferrum-dl that brings it.
        note: text added to the message (e.g. another way to install it).

    An ``ImportError`` raised for another module (a broken dependency of
    the package) is left as it is: installing the extra would not fix it.

    Example:
        >>> require("json", "a test", "none").dumps([1])
        '[1]'
    """
    package = module.partition(".")[0]
    try:
        # The package first: a submodule imported earlier stays in sys.modules after its package is gone.
        importlib.import_module(package)
        return importlib.import_module(module)
    except ImportError as err:
        if err.name is not None and err.name.partition(".")[0] != package:
            raise
        # A native library the package loads may fail with name None: say what failed, too.
        detail = note if err.name is not None else f"{note} (importing {module} failed: {err})"
        error = MissingExtraError(package, feature, extra, detail)
        if sys.argv[:1] == ["-m"]:
            # Python is importing the package of `python -m <module>`: its error ends the run.
            _print_in_one_line()
        raise error from None


def run_main(main: Callable[[], int]) -> NoReturn:
    """Exit with ``main()``'s status; a ``MissingExtraError`` is one line on stderr and status 1.

    For the ``__main__`` modules of ferrum's command-line tools.
    """
    try:
        status = main()
    except MissingExtraError as err:
        print(f"error: {err}", file=sys.stderr)
        status = 1
    sys.exit(status)


def _print_in_one_line() -> None:
    """Print an uncaught ``MissingExtraError`` as one line; any other error as before."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        if isinstance(value, MissingExtraError):
            print(f"error: {value}", file=sys.stderr)
        else:
            previous(kind, value, tb)

    sys.excepthook = hook
