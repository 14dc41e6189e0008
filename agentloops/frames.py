"""A DataFrame that shows itself in the learner's language and stays English data.

``RunRecord.to_frame()`` and ``Comparison.to_frame()`` hand back data a later cell reads by its English column
names and values. In another language the notebook should still *show* Chinese: the frame carries, in
``attrs["shown"]``, the same rows as a learner reads them (phrases, scenario texts and decisions shown), and
its HTML puts those rows under translated headers. Slicing keeps the subclass and the shown rows.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pandas as pd

from agentloops.i18n import N_, _, language

HEADERS: tuple[str, ...] = (N_("step"), N_("criterion"), N_("outcome"), N_("error"), N_("answer"), N_("repeated"),
                            N_("scenario"), N_("decision"), N_("why"))
"""Column names a frame shows translated; names written as code (with ``_``) stay as they are."""


class ShownFrame(pd.DataFrame):
    """A DataFrame whose HTML is in the language in use (its data is untouched)."""

    @property
    def _constructor(self) -> type[ShownFrame]:
        return ShownFrame

    def _repr_html_(self) -> str | None:
        if language() == "en":
            return super()._repr_html_()
        view = pd.DataFrame(self)
        shown = self.attrs.get("shown")
        if isinstance(shown, pd.DataFrame):
            with contextlib.suppress(KeyError):  # a column or row added since: show the data as it is
                view = shown.loc[self.index, self.columns]
        view = view.rename(columns=_header)
        view.attrs = {}
        view.index = view.index.rename(_header(view.index.name) if isinstance(view.index.name, str) else None)
        return view._repr_html_()


def _header(name: Any) -> Any:
    return _(name) if isinstance(name, str) and name in HEADERS else name


def shown_frame(rows: list[dict[str, Any]], shown_rows: list[dict[str, Any]], index: str | None = None) -> ShownFrame:
    """The ``rows`` as data, showing ``shown_rows`` (the same keys, as a learner reads them)."""
    frame, shown = ShownFrame(rows), pd.DataFrame(shown_rows)
    if index is not None:
        frame, shown = frame.set_index(index), shown.set_index(index)
    frame.attrs["shown"] = shown
    return frame
