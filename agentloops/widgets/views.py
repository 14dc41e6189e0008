"""What the explorer shows: the summary and step tables, as HTML for the page and as text for a run without
one."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentloops.comparison import cell
from agentloops.i18n import N_, _
from agentloops.plots import criterion_color
from agentloops.record import ROW_TITLES, RunRecord
from agentloops.response import show_content
from agentloops.scenario import Scenario
from agentloops.tables import text_table
from agentloops.widgets.script import (
    _CELL,
    _REPEATED_ROW,
    _TABLE,
    RoundSpec,
)

SUMMARY_HEADERS: tuple[str, ...] = (
    N_("criterion"), N_("as in the article's table"), N_("how it ended"), N_("wasted calls"), N_("wasted tool runs"),
    N_("prompt tokens billed"), N_("completion tokens billed"),
)
"""The side-by-side table's columns (English here; shown through ``_()``)."""

STEP_HEADERS: dict[str, str] = ROW_TITLES
"""Row key → column of the step-by-step table (the record's own titles; shown through ``_()``)."""

SCENARIO_TEXTS: tuple[str, ...] = (
    # normal
    N_('tool → tool → answer'),
    N_('The happy path: two tool rounds (content null, then "") and an answer with finish_reason stop. '
       'All three naive tests agree here, which is why testing only this run hides the bug.'),
    # talk-and-call
    N_('a round that talks and calls a tool'),
    N_('The first round carries text ("Let me open the file first.") and a tool call. Non-empty text is '
       'not a finished task: the content test stops after running the tool, and the result never reaches '
       'the model.'),
    # truncated
    N_('a round cut off by max_tokens'),
    N_('The round hit the token limit: content null, no tool calls, finish_reason length. The content and '
       'finish_reason tests wait for a signal that never comes and ask the same thing until the cap; the '
       'tool_calls test takes the empty round for an answer.'),
    # talk-only
    N_('talk only, no tools'),
    N_('A plain chat reply with finish_reason stop and no tool calls. Every test stops after one call; '
       'like the normal run, it cannot tell the tests apart.'),
    # content-filter
    N_('output withheld by a content filter'),
    N_('After one tool round the provider filters the reply: content null, finish_reason content_filter. '
       'Waiting for text or for stop spins to the cap; the tool_calls test reports the empty round as an '
       'answer. The correct loop raises at once: retrying the same input gets filtered again.'),
    # tool-call-with-stop
    N_('tool calls that arrive with finish_reason stop'),
    N_('Several OpenAI-compatible servers, and Gemini, end a tool-call round with stop. The finish_reason '
       'test stops after the first round and its tool result is never read; tool calls, not the finish '
       'value, must decide whether to go on.'),
    # cut-off-arguments
    N_("a round cut off inside a tool call's arguments"),
    N_('The token limit struck while the model was writing a tool call, so its arguments are half a JSON '
       'object and finish_reason is length. The tool cannot run; naive loops send the same error back '
       'until the cap, while the correct loop reports a truncation at once.'),
    # long-chain
    N_('a tool chain longer than the cap'),
    N_('The model needs ten page reads before it can answer, more than the cap of eight calls allows. The '
       'naive loops stop at the cap and hand back an empty text as if it were the answer; the correct '
       'loop raises, because a cap is a fuse, not an answer.'),
    # truncated-partial
    N_("an answer cut off mid-sentence by max_tokens"),
    N_("The commonest real cut-off: after one tool round the model starts its answer and the token limit "
       "stops it mid-sentence, so the round carries partial text, no tool calls and finish_reason length. "
       "The content test and the tool_calls test both hand the truncated text back as the answer; the "
       "finish_reason test spins to the cap; the correct loop raises truncated at once."),
)
"""The title and lesson of every shipped core scenario (``data/scenarios/``), marked for the catalog: the
scenario files stay English, the widgets show ``_(scenario.title)`` (``tests/test_i18n_core.py`` checks that
each shipped text is listed and translated)."""


def headers(names: Sequence[str]) -> list[str]:
    """Column headers in the language in use."""
    return [_(name) for name in names]


def summary_row(record: RunRecord) -> list[Any]:
    """One row of the side-by-side table (see :data:`SUMMARY_HEADERS`)."""
    return [record.criterion, cell(record), record.ending(), record.wasted_calls, record.wasted_tool_runs,
            record.billed_prompt_tokens, record.billed_completion_tokens]


def step_rows(record: RunRecord) -> list[dict[str, Any]]:
    """The step-by-step table: one :meth:`~agentloops.record.Round.to_row` per call."""
    return [r.to_row() for r in record.rounds]


def steps_text(record: RunRecord) -> str:
    """The step-by-step table as plain text."""
    keys = [k for k in STEP_HEADERS if k != "why"]
    yes = _("yes")
    rows = [[(yes if row[k] else "") if k == "repeated" else row[k] for k in keys]
            for row in (r.shown_row() for r in record.rounds)]
    return text_table([_(STEP_HEADERS[k]) for k in keys], rows)


@dataclass(frozen=True)
class ExplorerState:
    """What the explorer shows, as data: the script, the settings and one record per criterion.

    Attributes:
        source: the shipped scenario's name, or ``"custom"``.
        scenario: the scenario that was run.
        criterion: the criterion whose steps are tabled.
        max_steps: the cap.
        records: criterion → record, for every criterion side by side.
    """

    source: str
    scenario: Scenario
    criterion: str
    max_steps: int
    records: Mapping[str, RunRecord]

    @property
    def record(self) -> RunRecord:
        """The record of the selected criterion."""
        return self.records[self.criterion]

    def summary_rows(self) -> list[list[Any]]:
        """The side-by-side table: one row per criterion."""
        return [summary_row(r) for r in self.records.values()]

    def text(self) -> str:
        """Everything on screen, as plain text (what a headless run prints)."""
        script = "\n".join("  " + _("round {n}: {round}").format(n=i, round=RoundSpec.from_response(r).label())
                           for i, r in enumerate(self.scenario.responses, 1))
        record = self.record
        return _(
            "Explorer — scenario: {name} ({title}) · criterion: {criterion} · max_steps: {cap}\n{teaches}\n"
            "script (the last round repeats):\n{script}\n\n"
            "Every criterion on this script\n{summary}\n\n"
            "Step by step under {criterion}: {headline}\n{steps}"
        ).format(name=self.scenario.name, title=_(self.scenario.title), criterion=self.criterion, cap=self.max_steps,
                 teaches=_(self.scenario.teaches), script=script,
                 summary=text_table(headers(SUMMARY_HEADERS), self.summary_rows()), headline=record.headline(),
                 steps=steps_text(record))


def _chip(criterion: str) -> str:
    color = criterion_color(criterion)
    return (f"<span style='display:inline-block;width:0.9em;height:0.9em;background:{color};"
            f"margin-right:6px;vertical-align:middle'></span>{html.escape(criterion)}")


def summary_html(state: ExplorerState) -> str:
    """The side-by-side table as HTML, the selected criterion in bold, criterion colours as chips."""
    head = "".join(f"<th style='{_CELL}'>{html.escape(h)}</th>" for h in headers(SUMMARY_HEADERS))
    body = []
    for row in state.summary_rows():
        weight = "font-weight:bold;" if row[0] == state.criterion else ""
        cells = [_chip(row[0])] + [html.escape(str(v)) for v in row[1:]]
        body.append(f"<tr style='{weight}'>" + "".join(f"<td style='{_CELL}'>{c}</td>" for c in cells) + "</tr>")
    return f"<table style='{_TABLE}'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def steps_html(record: RunRecord) -> str:
    """The step-by-step table as HTML; wasted (repeated) calls are tinted."""
    head = "".join(f"<th style='{_CELL}'>{html.escape(h)}</th>" for h in headers(list(STEP_HEADERS.values())))
    body = []
    yes = _("yes")
    for row in (r.shown_row() for r in record.rounds):
        tint = f" style='background:{_REPEATED_ROW}'" if row["repeated"] else ""
        values = [(yes if v else "") if k == "repeated" else v for k, v in row.items()]
        body.append(f"<tr{tint}>" + "".join(f"<td style='{_CELL}'>{html.escape(str(v))}</td>" for v in values)
                    + "</tr>")
    answer = _("answer returned: {answer}").format(answer=html.escape(show_content(record.answer)))
    error = (_(" · error: {error}").format(error=html.escape(record.shown_error() or ""))
             if record.error_message else "")
    return (
        f"<div style='font-size:15px'><b>{_chip(record.criterion)}</b>: {html.escape(record.headline())}</div>"
        f"<table style='{_TABLE}'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        f"<div style='font-size:14px'>{answer}{error}</div>"
    )


def header_html(state: ExplorerState) -> str:
    """Title and lesson of the scenario on screen."""
    return (f"<div style='font-size:16px'><b>{html.escape(_(state.scenario.title))}</b> "
            f"<code>{html.escape(state.scenario.name)}</code></div>"
            f"<div style='font-size:14px;color:#333'>{html.escape(_(state.scenario.teaches))}</div>")
