"""The AG News topic classification dataset from a local copy of its CSV files: Burn's ``AgNewsDataset``."""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias, Union

from ferrum.data.dataset.in_memory import InMemDataset

__all__ = ["AG_NEWS_CLASSES", "AgNewsDataset", "AgNewsItem"]

PathLike: TypeAlias = Union[str, "os.PathLike[str]"]

AG_NEWS_CLASSES: tuple[str, ...] = ("World", "Sports", "Business", "Sci/Tech")
"""The topics of labels ``"1"`` to ``"4"``, in order (the archive's ``classes.txt``)."""

_FOLDER = "ag_news_csv"
_COLUMNS = 3


@dataclass(frozen=True)
class AgNewsItem:
    """One news article: Burn's ``AgNewsItem``.

    ``label`` is the class index as written in the file, ``"1"`` to ``"4"``
    (``AG_NEWS_CLASSES[int(label) - 1]`` is its topic); ``title`` and
    ``content`` are the text as written (AG News keeps escapes such as
    ``\\$`` literally).
    """

    label: str
    title: str
    content: str


class AgNewsDataset:
    """AG News from a local copy of ``train.csv`` (120,000 articles) and ``test.csv`` (7,600).

    ``root`` is the folder holding the two files (``ag_news_csv``, as the
    archive ``ag_news_csv.tgz`` extracts) or the folder holding that. Each
    row is ``class index, title, description``, without a header. Nothing
    is downloaded: a missing file raises ``FileNotFoundError`` naming it and
    where it was looked for.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from ferrum.data.dataset.nlp import AgNewsDataset
        >>> root = tempfile.TemporaryDirectory()
        >>> _ = (Path(root.name) / "test.csv").write_text('"2","Goal!","A late goal wins it."\\n')
        >>> AgNewsDataset(root.name).test().get(0)
        AgNewsItem(label='2', title='Goal!', content='A late goal wins it.')
        >>> root.cleanup()
    """

    def __init__(self, root: PathLike) -> None:
        base = Path(root)
        self._dir = base / _FOLDER if (base / _FOLDER).is_dir() else base

    def train(self) -> InMemDataset[AgNewsItem]:
        """The training articles, from ``train.csv``."""
        return self._parse("train.csv")

    def test(self) -> InMemDataset[AgNewsItem]:
        """The test articles, from ``test.csv``."""
        return self._parse("test.csv")

    def _parse(self, name: str) -> InMemDataset[AgNewsItem]:
        path = self._dir / name
        if not path.is_file():
            raise FileNotFoundError(
                f"AG News file {name} is missing from {self._dir}: put the {name} of ag_news_csv.tgz "
                f"(rows: class index, title, description) at {path}"
            )
        items = []
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                reader = csv.reader(handle)
                for row in reader:
                    if not row:
                        continue
                    where = f"{path} line {reader.line_num}"
                    if len(row) != _COLUMNS:
                        raise ValueError(
                            f"{where}: expected {_COLUMNS} fields (class index, title, description), "
                            f"found {len(row)}"
                        )
                    label, title, content = row
                    if label not in ("1", "2", "3", "4"):
                        raise ValueError(f"{where}: class index must be 1 to 4, found {label[:40]!r}")
                    items.append(AgNewsItem(label, title, content))
        except UnicodeDecodeError as err:
            raise ValueError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
        except csv.Error as err:
            raise ValueError(f"{path}: malformed CSV ({err})") from None
        return InMemDataset(items)
