"""Plain-text and Markdown tables that line up with CJK text too.

Terminals and CI logs are where many people first read a result, so every
result object can print itself without pandas.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence


def display_width(text: str) -> int:
    """Columns ``text`` occupies in a terminal: wide (CJK) characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - display_width(text))


def text_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A space-aligned table with a rule under the header."""
    cells = [[str(h) for h in headers]] + [[str(v) for v in row] for row in rows]
    widths = [max(display_width(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(_pad(v, w) for v, w in zip(row, widths, strict=False)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub-flavoured Markdown table (pipes in cells are escaped)."""

    def cell(value: object) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
