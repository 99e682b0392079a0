"""Text files on disk as a classification dataset: Burn's ``TextFolderDataset``.

``root/<class>/<file>.txt``: each file is one item, labelled by the folder
that holds it. Files are listed (and checked) when the dataset is built and
read each time an item is read. The encoding is detected as Burn does:
UTF-8 (with or without a byte-order mark), UTF-16 with a byte-order mark,
GB18030, GBK, and as a last resort UTF-8 with the undecodable bytes replaced
by U+FFFD.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias, Union

from ferrum.data.dataset.base import Dataset
from ferrum.data.dataset.folder_walk import files_below, index_classes

__all__ = [
    "SUPPORTED_TEXT_FILES",
    "TextData",
    "TextDatasetItem",
    "TextFolderDataset",
    "TextInvalidFileExtensionError",
    "TextLoaderError",
    "TextLoaderIOError",
    "TextParsingError",
    "decode_text",
]

PathLike: TypeAlias = Union[str, "os.PathLike[str]"]

SUPPORTED_TEXT_FILES: tuple[str, ...] = ("txt",)
"""The text file extensions the dataset reads (Burn's list)."""


class TextLoaderError(Exception):
    """Any failure to build a ``TextFolderDataset`` or read one of its items: Burn's ``TextLoaderError``."""


class TextLoaderIOError(TextLoaderError, OSError):
    """A missing or empty folder, or a file that cannot be read (Burn's ``IOError``)."""


class TextInvalidFileExtensionError(TextLoaderError, ValueError):
    """An extension outside ``SUPPORTED_TEXT_FILES`` (Burn's ``InvalidFileExtensionError``)."""


class TextParsingError(TextLoaderError, ValueError):
    """A label that is not one of the classes, or a class listed twice."""


@dataclass(frozen=True)
class TextData:
    """A text and the file it was read from: Burn's ``TextData``."""

    text: str
    text_path: str


@dataclass(frozen=True)
class TextDatasetItem:
    """One text and its class id: Burn's ``TextDatasetItem``."""

    text: TextData
    label: int


def decode_text(data: bytes) -> str:
    """``data`` decoded with the first encoding that fits, in Burn's order (see the module).

    Example:
        >>> from ferrum.data.dataset.nlp import decode_text
        >>> decode_text("déjà".encode("utf-16")), decode_text("你好".encode("gb18030"))
        ('déjà', '你好')
    """
    if data.startswith(codecs.BOM_UTF8):
        try:
            return data[len(codecs.BOM_UTF8) :].decode("utf-8")
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    for bom, encoding in ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(encoding)
            except UnicodeDecodeError:
                pass
    for encoding in ("gb18030", "gbk"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            pass
    return data.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class _Raw:
    path: Path
    label: int


class TextFolderDataset(Dataset[TextDatasetItem]):
    """Text files with class labels: Burn's ``TextFolderDataset``.

    Example (a folder ``root/negative/a.txt``, ``root/positive/a.txt``):
        >>> import tempfile
        >>> from pathlib import Path
        >>> from ferrum.data.dataset.nlp import TextFolderDataset
        >>> folder = tempfile.TemporaryDirectory()
        >>> for name in ["positive", "negative"]:
        ...     (Path(folder.name) / name).mkdir()
        ...     _ = (Path(folder.name) / name / "a.txt").write_text(f"a {name} text")
        >>> dataset = TextFolderDataset.new_classification(folder.name)
        >>> item = dataset.get(1)
        >>> item.text.text, item.label, dataset.class_ids()
        ('a positive text', 1, {'negative': 0, 'positive': 1})
        >>> folder.cleanup()
    """

    def __init__(self, items: Sequence[_Raw], classes: dict[str, int]) -> None:
        """Internal: use the ``new_classification*`` constructors."""
        self._items = list(items)
        self._classes = dict(classes)

    @staticmethod
    def new_classification(root: PathLike) -> TextFolderDataset:
        """The ``.txt`` files under ``root``, each labelled by the name of the folder that holds it.

        ``root/<class>/<file>.txt``: class ids number the folder names in
        sorted order; items are in sorted path order; subfolders are searched
        too (the label is then the innermost folder's name).
        """
        return TextFolderDataset.new_classification_with(root, SUPPORTED_TEXT_FILES)

    @staticmethod
    def new_classification_with(root: PathLike, extensions: Sequence[str]) -> TextFolderDataset:
        """As ``new_classification``, reading the files with one of ``extensions``.

        Raises ``TextInvalidFileExtensionError`` for an extension outside
        ``SUPPORTED_TEXT_FILES`` and ``TextLoaderIOError`` when ``root`` is
        not a folder or holds no such file.
        """
        if isinstance(extensions, str):
            raise TypeError("extensions must be a sequence of extensions, not a string")
        what = f"new_classification_with({str(root)!r})"
        allowed = {_check_extension(ext.lstrip("."), what) for ext in extensions}
        base = Path(root)
        if not base.is_dir():
            raise TextLoaderIOError(f"dataset root {base} is not a directory")
        paths = files_below(base, lambda p: p.suffix[1:].lower() in allowed)
        if not paths:
            raise TextLoaderIOError(f"dataset root {base} holds no text file ({', '.join(sorted(allowed))})")
        ids = {name: index for index, name in enumerate(sorted({p.parent.name for p in paths}))}
        return TextFolderDataset([_Raw(p, ids[p.parent.name]) for p in paths], ids)

    @staticmethod
    def new_classification_with_items(
        items: Iterable[tuple[PathLike, str]], classes: Sequence[str]
    ) -> TextFolderDataset:
        """A dataset of ``(text path, class name)`` pairs; class ids are positions in ``classes``.

        Raises ``TextLoaderIOError`` for a missing file,
        ``TextInvalidFileExtensionError`` for an unsupported extension and
        ``TextParsingError`` for a class name not in ``classes``.
        """
        ids = index_classes(classes, TextParsingError)
        raw = []
        for text_path, label in items:
            path = Path(text_path)
            _check_extension(path.suffix[1:], str(path))
            if not path.is_file():
                raise TextLoaderIOError(f"text file {path} not found")
            if label not in ids:
                raise TextParsingError(f"{path}: label {label!r} is not one of the classes {list(ids)}")
            raw.append(_Raw(path, ids[label]))
        return TextFolderDataset(raw, ids)

    def get(self, index: int) -> TextDatasetItem | None:
        if not 0 <= index < len(self._items):
            return None
        raw = self._items[index]
        try:
            data = raw.path.read_bytes()
        except OSError as err:
            raise TextLoaderIOError(f"text file {raw.path} cannot be read: {err}") from err
        return TextDatasetItem(TextData(decode_text(data), str(raw.path)), raw.label)

    def len(self) -> int:
        return len(self._items)

    def class_ids(self) -> dict[str, int]:
        """The class names and their ids."""
        return dict(self._classes)


def _check_extension(extension: str, what: str) -> str:
    if extension.lower() not in SUPPORTED_TEXT_FILES:
        raise TextInvalidFileExtensionError(
            f"{what}: extension {extension!r} is not supported (supported: {', '.join(SUPPORTED_TEXT_FILES)})"
        )
    return extension.lower()
