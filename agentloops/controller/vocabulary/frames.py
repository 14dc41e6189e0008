"""DataFrames that keep English data and show themselves in the learner's language.

A frame's columns are read by name (``frame["decision"]``) and its cells are the trace's English lines, so
both stay as they are; only what a notebook *displays* of it — the headers, the index name, the text cells —
is translated: a column through its header in :data:`HEADERS` (marked with ``N_``), a cell through
:func:`~agentloops.controller.vocabulary.readback.read_back`. Slices and selections of a
:class:`ShownFrame` are shown frames too (pandas builds them with :attr:`ShownFrame._constructor`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from agentloops.controller.vocabulary.readback import read_back
from agentloops.i18n import N_, _, language

HEADERS: dict[str, str] = {
    "turn": N_("turn"), "at_s": N_("time (s)"), "state_version": N_("state version"),
    "state_version_after": N_("state version after"), "pending_goal": N_("pending goal"), "action": N_("action"),
    "tool_status": N_("tool status"), "observation": N_("observation"), "state_delta": N_("state delta"),
    "progress": N_("progress"), "open_items": N_("open items"), "missing_items": N_("missing items"),
    "context_tokens": N_("context tokens"), "decision": N_("decision"),
}
"""A column's name → its header as a learner reads it (English here; shown through ``_()``)."""


class ShownFrame(pd.DataFrame):
    """A DataFrame whose display (HTML and text) is in the language in use; its data stays English."""

    @property
    def _constructor(self) -> Any:
        return ShownFrame

    def shown(self) -> pd.DataFrame:
        """A plain copy with headers and text cells translated (the frame itself unchanged)."""
        frame = pd.DataFrame(self).copy()
        for column in frame.columns:
            if not pd.api.types.is_numeric_dtype(frame[column]):
                frame[column] = frame[column].map(lambda v: read_back(v) if isinstance(v, str) else v)
        frame = frame.rename(columns=_header, index=lambda v: read_back(v) if isinstance(v, str) else v)
        frame.index.name = _header(frame.index.name) if isinstance(frame.index.name, str) else frame.index.name
        frame.columns.name = None
        return frame

    def _repr_html_(self) -> str | None:
        if language() == "en":
            return super()._repr_html_()
        with pd.option_context("display.max_colwidth", None):  # a clipped line could not be read back
            return self.shown()._repr_html_()

    def __repr__(self) -> str:
        return super().__repr__() if language() == "en" else repr(self.shown())


def _header(name: Any) -> Any:
    if not isinstance(name, str):
        return name
    if name in HEADERS:
        return _(HEADERS[name])
    if name.startswith("left_"):
        return _("{budget} left").format(budget=name[5:])
    return _(name)


def shown_frame(rows: Any, headers: Mapping[str, str] | None = None, **kwargs: Any) -> ShownFrame:
    """``pd.DataFrame(rows, **kwargs)`` as a :class:`ShownFrame`; ``headers`` adds column headers."""
    if headers:
        HEADERS.update(headers)
    return ShownFrame(rows, **kwargs)
