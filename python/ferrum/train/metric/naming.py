"""Numbers in metric names, written as Burn writes them.

A parameterised metric's name holds its parameters (``"Precision @
Threshold(0.5) [Macro]"``) and becomes its log file's name, so ferrum
spells the numbers as Rust's ``{}`` (Display) and ``{:?}`` (Debug) do
(``ferrum.rust_text``): an experiment logged by Burn and one logged by
ferrum name their files alike.
"""

from __future__ import annotations

from ferrum.rust_text import rust_debug, rust_display

__all__ = ["rust_debug", "rust_display"]
