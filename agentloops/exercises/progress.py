"""The progress summary: every exercise of a set, and how far this session has got with each.

It reads the session's record (:mod:`~agentloops.exercises.session`) and the
registry's list of exercises. :func:`summary` returns a widget that redraws
itself whenever a check runs, so the summary at the end of a notebook stays
current while the learner works above it. Executed headless, it prints the
same table as text (:func:`progress_text`).
"""

from __future__ import annotations

import html
from typing import Any

from agentloops.exercises.exercise import Exercise
from agentloops.exercises.registry import all_exercises
from agentloops.exercises.results import BADGES
from agentloops.exercises.session import Entry, entry, watch
from agentloops.i18n import N_, _
from agentloops.tables import text_table

STATES: dict[str, str] = {
    "passed earlier": N_("passed earlier; the latest check did not"),
    "passed": N_("passed"),
    "not yet": N_("not yet"),
    "to do": N_("to do"),
}
"""An exercise's state in the summary, by key; the label is translated where it is shown."""


def _state_key(item: Entry) -> str:
    if item.passed and item.last != "correct":
        return "passed earlier"
    if item.passed:
        return "passed"
    if item.last == "incorrect":
        return "not yet"
    return "to do"


def _state(item: Entry) -> str:
    return _(STATES[_state_key(item)])


def rows(set_name: str | None = None) -> list[list[Any]]:
    """One row per exercise: ``q1``, title, state, checks run, solution viewed."""
    table = []
    for exercise in all_exercises(set_name):
        item = entry(exercise.id)
        table.append([exercise.name, _(exercise.title), _state(item), item.checks,
                      _("yes") if item.solution_viewed else ""])
    return table


HEADERS = ("", N_("exercise"), N_("state"), N_("checks"), N_("solution viewed"))
"""The summary's column headers (translated where they are shown)."""


def headers() -> tuple[str, ...]:
    """:data:`HEADERS` in the language in use."""
    return tuple(_(h) for h in HEADERS)


def counts(set_name: str | None = None) -> tuple[int, int]:
    """(passed, total) for the set (or every exercise)."""
    exercises = all_exercises(set_name)
    return sum(entry(e.id).passed for e in exercises), len(exercises)


def progress_text(set_name: str | None = None) -> str:
    """The summary as plain text: a headline and one row per exercise."""
    done, total = counts(set_name)
    remaining = [e.name for e in _remaining(set_name)]
    tail = _("remaining: {names}").format(names=", ".join(remaining)) if remaining else _("all done")
    head = _("Progress this session: {done} of {total} passed ({tail})").format(done=done, total=total, tail=tail)
    return f"{head}\n{text_table(headers(), rows(set_name))}"


def _remaining(set_name: str | None) -> list[Exercise]:
    return [e for e in all_exercises(set_name) if not entry(e.id).passed]


_CELL = "padding:3px 10px;border-bottom:1px solid #ddd;text-align:left"
_COLOURS = {"passed": BADGES["correct"][1], "not yet": BADGES["incorrect"][1], "to do": BADGES["not attempted"][1]}


def progress_html(set_name: str | None = None) -> str:
    """The summary as HTML: a headline, a bar and one coloured row per exercise."""
    done, total = counts(set_name)
    width = 0 if not total else round(100 * done / total)
    head = "".join(f"<th style='{_CELL}'>{html.escape(h)}</th>" for h in headers())
    body = []
    keys = [_state_key(entry(e.id)) for e in all_exercises(set_name)]
    for key, row in zip(keys, rows(set_name)):
        colour = _COLOURS.get(key, BADGES["incorrect"][1])
        cells = [f"<b>{html.escape(row[0])}</b>", html.escape(row[1]),
                 f"<span style='color:{colour};font-weight:bold'>{html.escape(row[2])}</span>",
                 str(row[3]), html.escape(row[4])]
        body.append("<tr>" + "".join(f"<td style='{_CELL}'>{c}</td>" for c in cells) + "</tr>")
    bar = (f"<div style='width:320px;height:10px;background:#eaeef2;border-radius:5px;margin:4px 0'>"
           f"<div style='width:{width}%;height:10px;background:{BADGES['correct'][1]};border-radius:5px'></div></div>")
    title = html.escape(_("Progress this session: {done} of {total} passed").format(done=done, total=total))
    return (f"<div><b>{title}</b>{bar}"
            f"<table style='border-collapse:collapse'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>")


def summary(set_name: str | None = None) -> Any:
    """A live progress widget for one exercise set (or all); its text form is :func:`progress_text`.

    Raises:
        UsageError: ``set_name`` is not a known set.
    """
    import ipywidgets as widgets

    all_exercises(set_name)  # validates the name before a widget is built

    class ProgressSummary(widgets.VBox):
        """The summary widget; redrawn by every check in this kernel."""

        def __init__(self) -> None:
            self.set_name = set_name
            self.view = widgets.HTML()
            self.view.add_class("agentloops-progress-table")
            super().__init__([self.view])
            self.add_class("agentloops-progress")
            self.refresh()

        def refresh(self) -> None:
            self.view.value = progress_html(self.set_name)

        def text(self) -> str:
            return progress_text(self.set_name)

        def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
            data = super()._repr_mimebundle_(**kwargs) or {}
            data["text/plain"] = self.text()
            return data

    widget = ProgressSummary()
    watch(widget)
    return widget
