"""String ops: StringConcat, StringSplit, StringNormalizer and RegexFullMatch.

ferrum's tensors hold numbers only: a string tensor is a NumPy array of
dtype ``object`` holding Python ``str`` (``ferrum.onnx.values.StringTensor``).
These ops read and return such arrays (a new one each time, the input left as
it was) and run in Python; their number and bool results (StringSplit's
counts, RegexFullMatch's matches) are ferrum tensors on the run's device.
A ferrum tensor where a string tensor is expected raises ``ValueError``.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ferrum._ferrum import Device, Tensor
from ferrum.backend import NdArray
from ferrum.onnx.ops._util import AnyTensor
from ferrum.onnx.ops.registry import op
from ferrum.onnx.values import StringTensor, as_strings, string_tensor

__all__ = ["regex_full_match", "string_concat", "string_normalizer", "string_split"]


def _on(device: Device[Any] | None) -> Device[Any]:
    return device if device is not None else NdArray.device()


@op("StringConcat", since=20)
def string_concat(x: StringTensor, y: StringTensor) -> StringTensor:
    """StringConcat: ``x + y`` element-wise on strings, with NumPy broadcasting.

    Example:
        >>> from ferrum.onnx.values import to_strings
        >>> string_concat(to_strings(["cat", "dog"], "x"), to_strings(["s"], "y")).tolist()
        ['cats', 'dogs']
    """
    a = as_strings(x, "StringConcat: input 0")
    b = as_strings(y, "StringConcat: input 1")
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError as exc:
        raise ValueError(
            f"StringConcat: shapes {list(x.shape)} and {list(y.shape)} do not broadcast"
        ) from exc
    return string_tensor((p + q for p, q in zip(a.reshape(-1), b.reshape(-1), strict=True)), a.shape)


@op("StringSplit", since=20)
def string_split(
    x: StringTensor, delimiter: str = "", maxsplit: int | None = None, device: Device[Any] | None = None
) -> tuple[StringTensor, AnyTensor]:
    """StringSplit: each string of ``x`` cut at ``delimiter``, at most ``maxsplit`` times (Python's
    ``str.split``); an empty or absent ``delimiter`` splits at runs of whitespace, dropping leading and
    trailing whitespace.

    Returns the parts, of shape ``x.shape + [n]`` with ``n`` the most parts of any string (the rest padded
    with ``""``; ``n`` is 0 for an empty ``x``), and the number of parts of each string (Int, ``x.shape``).

    Example:
        >>> from ferrum.onnx.values import to_strings
        >>> parts, counts = string_split(to_strings(["a.b.c", "d"], "x"), delimiter=".")
        >>> parts.tolist(), counts.to_numpy().tolist()
        ([['a', 'b', 'c'], ['d', '', '']], [3, 1])
    """
    items = as_strings(x, "StringSplit: input 0")
    sep = delimiter or None
    limit = -1 if maxsplit is None else maxsplit
    split = [s.split(sep, limit) for s in items.reshape(-1)]
    width = max((len(p) for p in split), default=0)
    padded = (part for parts in split for part in [*parts, *[""] * (width - len(parts))])
    counts = np.array([len(p) for p in split], dtype=np.int64).reshape(items.shape)
    return string_tensor(padded, (*items.shape, width)), Tensor.from_numpy(counts, _on(device))


_CASES = ("LOWER", "UPPER", "NONE")


@op("StringNormalizer", since=10)
def string_normalizer(
    x: StringTensor,
    case_change_action: str = "NONE",
    is_case_sensitive: int = 0,
    locale: str = "",
    stopwords: tuple[str, ...] = (),
) -> StringTensor:
    """StringNormalizer: ``x`` (``[C]`` or ``[1, C]``) without its elements equal to one of ``stopwords``,
    then lowercased, uppercased or left as it is (``case_change_action`` ``LOWER``, ``UPPER``, ``NONE``).

    Stop words match whole elements, ignoring case unless ``is_case_sensitive``. When every element is
    dropped the result is ``[""]`` (``[[""]]`` for a ``[1, C]`` input). Cases change by Python's Unicode
    rules (``str.lower``/``str.upper``): ``locale`` is accepted and not used.

    Example:
        >>> from ferrum.onnx.values import to_strings
        >>> x = to_strings(["Monday", "tuesday"], "x")
        >>> string_normalizer(x, case_change_action="UPPER", stopwords=("monday",)).tolist()
        ['TUESDAY']
    """
    del locale
    items = as_strings(x, "StringNormalizer: input 0")
    if items.ndim not in (1, 2) or (items.ndim == 2 and items.shape[0] != 1):
        raise ValueError(f"StringNormalizer: x must be of shape [C] or [1, C], found {list(items.shape)}")
    if case_change_action not in _CASES:
        raise ValueError(
            f"StringNormalizer: case_change_action must be one of {_CASES}, found {case_change_action!r}"
        )

    def key(s: str) -> str:
        return s if is_case_sensitive else s.lower()

    stops = {key(w) for w in stopwords}
    kept: list[str] = [s for s in items.reshape(-1) if key(s) not in stops]
    if case_change_action == "LOWER":
        kept = [s.lower() for s in kept]
    elif case_change_action == "UPPER":
        kept = [s.upper() for s in kept]
    if not kept:
        kept = [""]
    shape = (len(kept),) if items.ndim == 1 else (1, len(kept))
    return string_tensor(kept, shape)


# RE2 constructs Python's ``re`` reads differently or accepts where RE2 does not: refused by name.
_GROUPS = {
    "=": "lookahead",
    "!": "lookahead",
    "<=": "lookbehind",
    "<!": "lookbehind",
    ">": "atomic group",
    "(": "conditional",
    "P=": "backreference",
    "#": "comment",
}
_ESCAPES = {
    "Z": r"\Z (RE2 spells the end of the text \z)",
    "C": r"\C (any byte)",
    "Q": r"\Q...\E quoting",
    "E": r"\Q...\E quoting",
    "p": r"\p Unicode classes",
    "P": r"\P Unicode classes",
}


def python_pattern(pattern: str) -> str:
    r"""An RE2 ``pattern`` as the Python ``re`` pattern that matches the same strings.

    RE2's ``\z`` becomes ``\Z``. Compiled with ``re.ASCII``, ``\w``, ``\d``, ``\s`` and ``\b`` are ASCII
    classes, as in RE2. ``ValueError`` for what ``re`` would read otherwise or RE2 does not have:
    backreferences, lookaround, atomic groups, conditionals, comments, possessive quantifiers, POSIX
    classes (``[[:alpha:]]``), ``\C``, ``\Q...\E``, ``\p{...}``. Known differences left: ``(?i)`` folds
    ASCII letters only, ``\s`` also matches ``\v``, and ``$`` also matches before a final newline.

    Example:
        >>> python_pattern(r"a+\z")
        'a+\\Z'
    """
    out: list[str] = []
    i, n, in_class = 0, len(pattern), False
    last = ""  # the previous unescaped character outside a class

    def refuse(what: str) -> ValueError:
        return ValueError(f"RegexFullMatch: pattern {pattern!r} uses {what}, which RE2 syntax does not allow")

    while i < n:
        c = pattern[i]
        if c == "\\":
            e = pattern[i + 1 : i + 2]
            if e in _ESCAPES and not in_class:
                raise refuse(_ESCAPES[e])
            octal = re.match(r"[0-7]{3}", pattern[i + 1 : i + 4])  # \123: an octal code in both
            if e.isdigit() and e != "0" and not octal and not in_class:
                raise refuse(f"the backreference \\{e}")
            out.append("\\Z" if e == "z" and not in_class else c + e)
            i, last = i + 2, ""
            continue
        if in_class:
            if pattern.startswith("[:", i) and re.match(r"\[:\^?[a-z]+:\]", pattern[i:]):
                raise refuse("a POSIX class (write it as a range: [a-zA-Z] for [:alpha:])")
            in_class = c != "]"
        elif c == "[":
            in_class = True
            out.append(c)
            i += 1
            for lead in ("^", "]"):  # a leading ] is a literal
                if pattern.startswith(lead, i):
                    out.append(lead)
                    i += 1
            last = ""
            continue
        elif c == "(" and pattern.startswith("?", i + 1):
            for mark, what in _GROUPS.items():
                if pattern.startswith(mark, i + 2):
                    raise refuse(f"a {what} (?{mark}")
        elif c == "+" and last in ("*", "+", "?"):
            raise refuse(f"the possessive quantifier {last}+")
        out.append(c)
        last = c if not in_class else ""
        i += 1
    return "".join(out)


@op("RegexFullMatch", since=20)
def regex_full_match(x: StringTensor, pattern: str = "", device: Device[Any] | None = None) -> AnyTensor:
    """RegexFullMatch: whether each string of ``x`` matches ``pattern`` whole, a Bool tensor of ``x``'s shape.

    ``pattern`` is RE2 syntax, run by Python's ``re`` as ``python_pattern`` translates it (which refuses
    the constructs the two read differently with ``ValueError``, as it does a pattern ``re`` cannot read).

    Example:
        >>> from ferrum.onnx.values import to_strings
        >>> regex_full_match(to_strings(["ab1", "ab"], "x"), pattern=r"[a-z]+\\d").to_numpy().tolist()
        [True, False]
    """
    items = as_strings(x, "RegexFullMatch: input 0")
    try:
        regex = re.compile(python_pattern(pattern), re.ASCII)
    except re.error as exc:
        raise ValueError(f"RegexFullMatch: pattern {pattern!r} is not a valid regex: {exc}") from exc
    found = np.array([regex.fullmatch(s) is not None for s in items.reshape(-1)], dtype=bool)
    return Tensor.from_numpy(found.reshape(items.shape), _on(device))
