"""Every example in the public API's docstrings runs and prints what it shows.

The examples are run against the installed package (not the source tree,
which has no compiled extension), one test per module. The native classes
(``Tensor``, ``TensorData``, ``Device``, ...) belong to the ``ferrum``
module and the native functions (the activations, ``ferrum.functional``) to
``ferrum._ferrum``; their examples assume ``from ferrum import Tensor,
activation``, ``from ferrum.backend import NdArray`` and ``device =
NdArray.device()``, as the ``Tensor`` docstring says, so that these lines
are not repeated in each of them.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import ferrum
import pytest
from ferrum.backend import NdArray

NATIVE_GLOBALS: dict[str, object] = {
    "Tensor": ferrum.Tensor,
    "activation": ferrum.activation,
    "NdArray": NdArray,
    "device": NdArray.device(),
}
MODULES = ["ferrum", *sorted(info.name for info in pkgutil.walk_packages(ferrum.__path__, prefix="ferrum."))]


def test_modules_are_found() -> None:
    assert {"ferrum.nn.conv", "ferrum.nn.pool", "ferrum.module.base", "ferrum.optim.adam"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    extraglobs = NATIVE_GLOBALS if name in ("ferrum", "ferrum._ferrum") else None
    for test in finder.find(module, name, extraglobs=extraglobs):
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{results.failed} of {results.attempted} docstring examples failed in {name}"
