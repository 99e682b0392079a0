"""The file recorders and precisions that the record tests, the fuzzers and the records bench run over.

Names are the stems of Burn's fixture files (``tests/fixtures/burn/{recorder}_{precision}.*``),
so a case id reads the same in every test that goes through them.
"""

from __future__ import annotations

from ferrum.record import (
    BinFileRecorder,
    BinGzFileRecorder,
    DoublePrecisionSettings,
    FileRecorder,
    FullPrecisionSettings,
    HalfPrecisionSettings,
    JsonGzFileRecorder,
    NamedMpkFileRecorder,
    NamedMpkGzFileRecorder,
    PrecisionSettings,
    PrettyJsonFileRecorder,
)

RECORDERS: dict[str, type[FileRecorder]] = {
    "named_mpk": NamedMpkFileRecorder,
    "named_mpk_gz": NamedMpkGzFileRecorder,
    "bin": BinFileRecorder,
    "bin_gz": BinGzFileRecorder,
    "json_gz": JsonGzFileRecorder,
    "pretty_json": PrettyJsonFileRecorder,
}
FILE_RECORDERS: list[type[FileRecorder]] = list(RECORDERS.values())
# The formats that name their fields; Burn's optimizer records are only read and written in these.
SELF_DESCRIBING = ["named_mpk", "named_mpk_gz", "json_gz", "pretty_json"]
GZ_RECORDERS: list[type[FileRecorder]] = [NamedMpkGzFileRecorder, BinGzFileRecorder, JsonGzFileRecorder]
# Burn's bincode formats: positional, so a record must match the module's layout exactly.
BINCODE_RECORDERS: list[type[FileRecorder]] = [BinFileRecorder, BinGzFileRecorder]
PRECISIONS: dict[str, type[PrecisionSettings]] = {
    "full": FullPrecisionSettings,
    "half": HalfPrecisionSettings,
    "double": DoublePrecisionSettings,
}
