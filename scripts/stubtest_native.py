"""Run mypy's stubtest on the native module, whose stub is a package split by area.

Usage: ``python scripts/stubtest_native.py [stubtest arguments]``, e.g.
``python scripts/stubtest_native.py ferrum._ferrum --allowlist stubtest-allowlist.txt``.

The runtime ``ferrum._ferrum`` is one extension module, but its stub is
``ferrum/_ferrum/__init__.pyi`` re-exporting from private per-area stubs
(``_tensor.pyi``, ``_nn.pyi``, ...) that exist only for the type checker.
Plain stubtest gets this layout wrong twice: it tries to import each area
stub as a runtime submodule (and fails), and it skips every name the
package re-exports, expecting the defining module to be checked on its own;
so no name would be compared at all. This driver hooks stubtest's stub
build so that the area stubs are not checked as modules, and every name
``ferrum._ferrum`` re-exports from them is compared, under its runtime path
``ferrum._ferrum.Name``, with the runtime object. Allowlist, flags and
output are stubtest's own.
"""

from __future__ import annotations

import sys

import mypy.stubtest as stubtest
from mypy.nodes import MypyFile
from mypy.options import Options

NATIVE = "ferrum._ferrum"
AREA_PREFIX = NATIVE + "._"


def _is_area(module: str) -> bool:
    return module.startswith(AREA_PREFIX)


class _AreasCheckedThroughReexports(dict[str, MypyFile]):
    """stubtest's table of built stubs, but without the area stubs when it asks ``name in table``.

    stubtest skips a re-exported name when its defining module is in this
    table (to check it there instead); the area stubs have no runtime module
    to be checked against, so their names must be checked where the runtime
    holds them: in ``ferrum._ferrum``. Lookups (``get``) still find them.
    """

    def __contains__(self, module: object) -> bool:
        return not (isinstance(module, str) and _is_area(module)) and super().__contains__(module)


_build_stubs = stubtest.build_stubs


def _build_stubs_checking_areas_through_reexports(
    modules: list[str], options: Options, find_submodules: bool = False
) -> list[str]:
    found = _build_stubs(modules, options, find_submodules)
    stubtest._all_stubs = _AreasCheckedThroughReexports(stubtest._all_stubs)
    return [module for module in found if not _is_area(module)]


def main() -> int:
    """Run stubtest with the area stubs checked through ``ferrum._ferrum``'s re-exports."""
    # A stubtest without these internals would silently check nothing: fail instead.
    if not (hasattr(stubtest, "_all_stubs") and hasattr(stubtest, "build_stubs")):
        print("stubtest_native: stubtest has no _all_stubs/build_stubs; update the driver", file=sys.stderr)
        return 2
    stubtest.build_stubs = _build_stubs_checking_areas_through_reexports
    return stubtest.main()


if __name__ == "__main__":
    sys.exit(main())
