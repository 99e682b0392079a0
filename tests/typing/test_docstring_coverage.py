"""Every public class, method and function of ferrum has a docstring of its own.

Public means reachable without a leading underscore: a module not named
``_x`` under ``ferrum``, the classes and functions named in its ``__all__``
(or, without one, defined in it), and the methods and properties such a
class defines itself. The native classes (``Tensor``, ``Device``, ...)
count through the names ``ferrum`` exports. A dataclass's generated
``__doc__`` (its signature) does not count as a docstring. A method that
overrides a documented method of a ferrum base class (``Dataset.get``,
``LrScheduler.step``, ...) shares its contract and may rely on that
docstring, as ``help()`` does; type aliases and slotted dataclass fields
are documented by their module and class.

The test fails listing every offender, so the list is the to-do.
"""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ferrum
from ferrum import _ferrum

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(ferrum.__path__, prefix="ferrum.")
    if not any(part.startswith("_") for part in info.name.split("."))
)


def public_names(module: Any) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is not None:
        return [n for n in names if not n.startswith("_")]
    return [
        n
        for n, obj in vars(module).items()
        if not n.startswith("_")
        and (inspect.isclass(obj) or inspect.isfunction(obj))
        and getattr(obj, "__module__", None) == module.__name__
    ]


def own_doc(obj: Any) -> str | None:
    doc = obj.__doc__ if not isinstance(obj, (staticmethod, classmethod)) else obj.__func__.__doc__
    if not isinstance(doc, str) or not doc.strip():
        return None
    return doc


def class_doc(cls: type) -> str | None:
    doc = cls.__dict__.get("__doc__")
    if not isinstance(doc, str) or not doc.strip():
        return None
    # dataclasses fill a missing docstring with the class's signature
    if doc.startswith(f"{cls.__name__}(") and doc.rstrip().endswith(")"):
        return None
    # PyO3 puts the constructor's text signature first: only what follows is documentation
    if "\n--\n" in doc:
        doc = doc.split("\n--\n", 1)[1]
        return doc if doc.strip() else None
    return doc


def is_member(value: Any) -> bool:
    return (
        inspect.isfunction(value)
        or inspect.ismethoddescriptor(value)
        or inspect.isdatadescriptor(value)
        or isinstance(value, (staticmethod, classmethod, property))
    )


def member_doc(value: Any) -> str | None:
    doc = own_doc(value)
    if doc is not None and "\n--\n" in doc:  # a PyO3 text signature with nothing after it
        doc = doc.split("\n--\n", 1)[1]
    return doc if doc and doc.strip() else None


def documented_in_a_base(cls: type, name: str) -> bool:
    for base in cls.__mro__[1:]:
        if base.__module__.startswith("ferrum") and name in vars(base):
            if member_doc(vars(base)[name]) is not None:
                return True
    return False


def offenders_of_class(qualname: str, cls: type) -> Iterator[str]:
    if class_doc(cls) is None:
        yield qualname
    if issubclass(cls, BaseException) and cls.__module__ == "ferrum":
        return
    for name, value in vars(cls).items():
        if name.startswith("_") or not is_member(value) or inspect.ismemberdescriptor(value):
            continue
        if isinstance(cls, enum.EnumMeta) and name in cls.__members__:
            continue
        if member_doc(value) is None and not documented_in_a_base(cls, name):
            yield f"{qualname}.{name}"


def offenders() -> list[str]:
    found: set[str] = set()
    seen: set[int] = set()
    for module_name in ["ferrum", *MODULES]:
        module = importlib.import_module(module_name)
        if not (module.__doc__ or "").strip():
            found.add(module_name)
        for name in public_names(module):
            obj = getattr(module, name)
            if id(obj) in seen or inspect.ismodule(obj):
                continue
            seen.add(id(obj))
            home = getattr(obj, "__module__", module_name)
            qualname = f"{module_name}.{name}" if home.startswith("ferrum._") or home == "ferrum" else (
                f"{home}.{name}"
            )
            if inspect.isclass(obj):
                found.update(offenders_of_class(qualname, obj))
            elif (inspect.isfunction(obj) or inspect.isbuiltin(obj)) and own_doc(obj) is None:
                found.add(qualname)
    return sorted(found)


def test_the_walk_reaches_the_api() -> None:
    assert {"ferrum.nn", "ferrum.optim", "ferrum.train.metric", "ferrum.store"} <= set(MODULES)


def test_every_public_object_has_a_docstring() -> None:
    missing = offenders()
    assert not missing, f"{len(missing)} public objects have no docstring:\n" + "\n".join(missing)


def test_the_stub_leaves_documentation_to_the_runtime() -> None:
    """The native API is documented once, by the binding's doc comments (its ``__doc__``).

    A docstring in the stub (``_ferrum/*.pyi``) would be a second copy that
    drifts: the stub holds the types only.
    """
    assert _ferrum.__file__ is not None
    stubs = sorted(Path(_ferrum.__file__).with_name("_ferrum").glob("*.pyi"))
    assert stubs, "the native module's stub package ferrum/_ferrum/ is missing"
    documented = [
        f"{stub.name}:{node.lineno} {node.name}"
        for stub in stubs
        for node in ast.walk(ast.parse(stub.read_text(encoding="utf-8")))
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and ast.get_docstring(node) is not None
    ]
    assert not documented, "docstrings belong in the Rust doc comments:\n" + "\n".join(documented)
