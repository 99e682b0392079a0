"""The native module's stub is a package split by area; the runtime stays one extension.

``ferrum/_ferrum/__init__.pyi`` re-exports the per-area stubs (``_tensor.pyi``,
``_nn.pyi``, ...). These tests pin what that layout relies on: the import
system still loads ``ferrum/_ferrum.abi3.so`` (a folder without
``__init__.py`` does not shadow it), and every public name an area stub
defines is exported by the package's ``__all__``, which stubtest compares
with the runtime's (scripts/stubtest_native.py), so no stub escapes the check.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from ferrum import _ferrum

# Beside the installed extension, so a wheel that left the stubs out fails here.
assert _ferrum.__file__ is not None
STUBS = Path(_ferrum.__file__).with_name("_ferrum")


def _defined_names(stub: Path) -> set[str]:
    tree = ast.parse(stub.read_text(encoding="utf-8"))
    return {
        node.name
        for node in tree.body
        # single-underscore functions are exported too (the trace recorder's, for ferrum.jit)
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and not node.name.startswith("__")
    }


def _stub_all() -> list[str]:
    tree = ast.parse((STUBS / "__init__.pyi").read_text(encoding="utf-8"))
    for node in tree.body:
        targets = [target.id for target in getattr(node, "targets", []) if isinstance(target, ast.Name)]
        if isinstance(node, ast.Assign) and targets == ["__all__"]:
            value = ast.literal_eval(node.value)
            assert isinstance(value, list)
            return [str(name) for name in value]
    raise AssertionError("ferrum/_ferrum/__init__.pyi declares no __all__")


def test_a_fresh_interpreter_imports_the_extension_not_the_stub_folder() -> None:
    code = "import ferrum, ferrum._ferrum as m; print(m.__file__); print(m.Tensor.__name__)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert Path(out[0]).name.startswith("_ferrum.") and Path(out[0]).suffix in {".so", ".pyd"}, out
    assert out[1] == "Tensor"


def test_the_stub_exports_what_the_runtime_exports() -> None:
    runtime = set(_ferrum.__all__)
    stub = _stub_all()
    assert len(stub) == len(set(stub)), "a name listed twice in the stub's __all__"
    assert set(stub) == runtime, (
        f"missing from the stub: {sorted(runtime - set(stub))}; not at runtime: {sorted(set(stub) - runtime)}"
    )


def test_every_public_name_of_an_area_stub_is_exported() -> None:
    exported = set(_stub_all())
    areas = sorted(path for path in STUBS.glob("_*.pyi") if path.name != "__init__.pyi")
    assert len(areas) >= 10, [path.name for path in areas]
    hidden = {f"{path.name}: {name}" for path in areas for name in _defined_names(path) - exported}
    assert not hidden, f"public stub names stubtest would never compare: {sorted(hidden)}"
    defined = set().union(*(_defined_names(path) for path in areas))
    assert exported <= defined, f"exported but defined by no area stub: {sorted(exported - defined)}"
