"""Text datasets: AG News read from its CSV files, and text files on disk (``TextFolderDataset``).

Example:
    >>> from ferrum.data.dataset.nlp import AG_NEWS_CLASSES, AgNewsDataset
    >>> train = AgNewsDataset("/data/ag_news_csv").train()  # doctest: +SKIP
    >>> AG_NEWS_CLASSES[int(train.get(0).label) - 1]  # doctest: +SKIP
    'Business'
"""

from ferrum.data.dataset.nlp.ag_news import AG_NEWS_CLASSES, AgNewsDataset, AgNewsItem
from ferrum.data.dataset.nlp.text_folder import (
    SUPPORTED_TEXT_FILES,
    TextData,
    TextDatasetItem,
    TextFolderDataset,
    TextInvalidFileExtensionError,
    TextLoaderError,
    TextLoaderIOError,
    TextParsingError,
    decode_text,
)

__all__ = [
    "AG_NEWS_CLASSES",
    "SUPPORTED_TEXT_FILES",
    "AgNewsDataset",
    "AgNewsItem",
    "TextData",
    "TextDatasetItem",
    "TextFolderDataset",
    "TextInvalidFileExtensionError",
    "TextLoaderError",
    "TextLoaderIOError",
    "TextParsingError",
    "decode_text",
]
