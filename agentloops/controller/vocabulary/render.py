"""One small result type for tables: text for terminals and tests, HTML for JupyterLab.

Every "evidence" function returns a :class:`Table`, so the same object prints in
a CI log, renders in a notebook and turns into pandas or Markdown on request.

A table holds English data (``records()``, ``column()`` and ``to_frame()`` read the English headers, and
``--json`` writes them); it is *shown* in the learner's language: the title, the headers (marked with ``N_``
where the table is built) and every text cell — a :class:`~agentloops.i18n.Phrase`, or a trace line
:func:`~agentloops.controller.vocabulary.readback.read_back` knows — are translated as they are printed or
rendered.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentloops.controller.vocabulary.readback import read_back
from agentloops.i18n import shown
from agentloops.tables import markdown_table, text_table

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Table:
    """A titled table with an optional note under it.

    Attributes:
        title: one line above the table.
        headers: column names.
        rows: the cells, row by row (any values; shown with ``str``).
        note: one or more lines shown under the table.
    """

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    note: str = ""

    @classmethod
    def build(cls, title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]], note: str = "") -> Table:
        """Build from any sequences (copied into tuples)."""
        return cls(title, tuple(headers), tuple(tuple(r) for r in rows), note)

    def column(self, name: str) -> list[Any]:
        """The values of one column, for checks in tests and notebooks."""
        index = self.headers.index(name)
        return [row[index] for row in self.rows]

    def records(self) -> list[dict[str, Any]]:
        """Rows as dicts keyed by header (the JSON form)."""
        return [dict(zip(self.headers, row, strict=False)) for row in self.rows]

    def to_frame(self) -> pd.DataFrame:
        """The rows as a DataFrame (imports pandas on first use)."""
        from agentloops.controller.vocabulary.frames import shown_frame

        return shown_frame(list(self.rows), columns=list(self.headers))

    def shown(self) -> Table:
        """The table as a learner reads it: title, headers, notes and text cells (phrases, trace lines) in the
        language in use."""
        rows = tuple(tuple(read_back(v) if isinstance(v, str) else v for v in row) for row in self.rows)
        return Table(read_back(self.title), tuple(shown(h) for h in self.headers), rows, read_back(self.note))

    def to_markdown(self) -> str:
        """A Markdown table with the title in bold above it."""
        t = self.shown()
        text = f"**{t.title}**\n\n{markdown_table(t.headers, t.rows)}"
        return text + (f"\n\n{t.note}" if t.note else "")

    def __str__(self) -> str:
        t = self.shown()
        text = f"{t.title}\n{text_table(t.headers, t.rows)}"
        return text + (f"\n{t.note}" if t.note else "")

    def _repr_html_(self) -> str:
        t = self.shown()
        return html_table(t.title, t.headers, t.rows, t.note)


def html_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]], note: str = "",
               highlight: Sequence[bool] | None = None) -> str:
    """A small HTML table; rows flagged in ``highlight`` get a warm background.

    A wide table (the budget basis: a sentence of basis per row) must not run off the right edge of a
    notebook's output: long cells wrap at :data:`CELL_MAX_EM` and the table scrolls sideways inside its
    own box when it is still wider than the page. A cell is shown read back (:func:`read_back`): a trace line
    in the learner's language.
    """
    head = "".join(f"<th style='text-align:left'>{html.escape(str(h))}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        style = " style='background:#fde9c9'" if highlight and highlight[i] else ""
        cells = "".join(f"<td style='{_CELL_STYLE}'>{html.escape(read_back(v))}</td>" for v in row)
        body.append(f"<tr{style}>{cells}</tr>")
    foot = f"<div><small>{html.escape(note).replace(chr(10), '<br>')}</small></div>" if note else ""
    return (f"<div class='agentloops-wide' style='overflow-x:auto;max-width:100%'><b>{html.escape(title)}</b>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{foot}</div>")


CELL_MAX_EM = 32
"""Widest a table cell grows before its text wraps, in em."""

_CELL_STYLE = f"text-align:left;vertical-align:top;white-space:normal;max-width:{CELL_MAX_EM}em"


def clip(text: str, width: int = 60) -> str:
    """Shorten ``text`` to ``width`` characters with an ellipsis."""
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"
