"""Byte mutations shared by the fuzz tests: bit flips, insertions, deletions, repeats, markers, truncation."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    """One of ``seeds`` after one to six random edits."""
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
