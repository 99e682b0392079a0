"""Audio datasets: Speech Commands read from its WAV files (``SpeechCommandsDataset``).

Example:
    >>> from ferrum.data.dataset.audio import SpeechCommandsDataset
    >>> SpeechCommandsDataset.num_classes()
    37
"""

from ferrum.data.dataset.audio.speech_commands import (
    SpeechCommandClass,
    SpeechCommandsDataset,
    SpeechItem,
    read_wav,
)

__all__ = ["SpeechCommandClass", "SpeechCommandsDataset", "SpeechItem", "read_wav"]
