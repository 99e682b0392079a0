"""Inputs of the fuzz tests: the seeds and regressions of a target, and random byte mutations of them."""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

FUZZ = Path(__file__).parents[2] / "fuzz"


def inputs(target: str) -> list[tuple[str, bytes]]:
    """``(name, bytes)`` of every file in ``fuzz/corpus/<target>`` and ``fuzz/regressions/<target>``."""
    found = []
    for kind in ("corpus", "regressions"):
        folder = FUZZ / kind / target
        if folder.is_dir():
            found += [
                (f"{kind}/{target}/{p.name}", p.read_bytes()) for p in sorted(folder.iterdir()) if p.is_file()
            ]
    return found


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    """One of ``seeds`` after one to six edits: bit flips, insertions, deletions, repeats, truncation."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.integers(0, 5))
        at = draw(st.integers(0, len(data)))
        if kind == 0 and at < len(data):
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == 1:
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == 2:
            del data[at : at + draw(st.integers(1, 16))]
        elif kind == 3:
            piece = data[at : at + draw(st.integers(1, 32))]
            data[at:at] = piece * draw(st.integers(1, 8))
        elif kind == 4:
            data[at:at] = draw(
                st.sampled_from([b"\xc0", b"\x90", b"\x80", b"\xdd\xff\xff\xff\xff", b"[", b"{", b"9" * 40])
            )
        else:
            del data[at:]
    return bytes(data)
