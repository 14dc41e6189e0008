"""A call-by-call walk-through: what each model call sent, and what came back."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets

from agentloops.criteria import CRITERION_NAMES
from agentloops.i18n import N_, _, shown
from agentloops.loop import DEFAULT_MAX_STEPS, run
from agentloops.record import RunRecord, shown_decision
from agentloops.response import show_content
from agentloops.scenario import Scenario, load_scenario
from agentloops.tables import text_table
from agentloops.widgets.controls import (
    _STYLE,
    _check_cap,
    _check_choice,
    _classed,
)
from agentloops.widgets.script import (
    _CELL,
    _TABLE,
)
from agentloops.widgets.views import (
    headers,
)


def _message_rows(record: RunRecord, step: int) -> list[tuple[bool, list[str]]]:
    request = record.rounds[step - 1].request
    before = len(record.rounds[step - 2].request) if step > 1 else 0
    rows = []
    for index, message in enumerate(request):
        calls = ", ".join(f"{c.name}({c.arguments})" for c in message.tool_calls)
        extra = calls or (_("answers {id}").format(id=message.tool_call_id) if message.tool_call_id else "")
        rows.append((index >= before, [str(index + 1), message.role, show_content(message.content, 48), extra]))
    return rows


_TRANSCRIPT_HEADERS: tuple[str, ...] = ("#", N_("role"), "content", N_("tool calls / answers"))


class Walkthrough(widgets.VBox):
    """Step through one run call by call: the transcript sent, the response, the decision.

    Args:
        scenario: a shipped scenario's name or a :class:`Scenario`.
        criterion: the criterion to run it under (switchable).
        max_steps: the cap.
    """

    def __init__(self, scenario: str | Scenario = "normal", criterion: str = "content",
                 max_steps: int = DEFAULT_MAX_STEPS) -> None:
        _check_choice("criterion", criterion, CRITERION_NAMES)
        _check_cap(max_steps)
        self.scenario = load_scenario(scenario)
        self.max_steps = max_steps
        self._syncing = False
        self.criterion = _classed(widgets.ToggleButtons(options=list(CRITERION_NAMES), value=criterion,
                                                        description=_("criterion"), style=_STYLE),
                                  "agentloops-criterion")
        self.call = _classed(widgets.IntSlider(value=1, min=1, max=1, description=_("call"), style=_STYLE,
                                               continuous_update=True), "agentloops-call")
        self.view = _classed(widgets.HTML(), "agentloops-walkthrough")
        self.criterion.observe(self._on_criterion, names="value")
        self.call.observe(lambda change: self.refresh(), names="value")
        super().__init__([self.criterion, self.call, self.view])
        self.add_class("agentloops-walkthrough-box")
        self.record = run(self.scenario, criterion, max_steps)
        self._set_calls()
        self.refresh()

    def _on_criterion(self, change: Mapping[str, Any]) -> None:
        self.record = run(self.scenario, change["new"], self.max_steps)
        self._set_calls()
        self.refresh()

    def _set_calls(self) -> None:
        self._syncing = True
        try:
            self.call.max = max(1, self.record.steps)
            self.call.value = min(self.call.value, self.call.max)
        finally:
            self._syncing = False

    def refresh(self) -> str:
        """Redraw the current call; returns its text."""
        if self._syncing:
            return self.text()
        self.view.value = self.html()
        return self.text()

    def _parts(self) -> tuple[str, list[tuple[bool, list[str]]], str]:
        record, step = self.record, self.call.value
        round_ = record.rounds[step - 1]
        head = _("{scenario} × {criterion}: call {step} of {steps} — sends {sent} message(s); new since the last "
                 "call: {added}").format(scenario=record.scenario, criterion=record.criterion, step=step,
                                         steps=record.steps, sent=len(round_.request),
                                         added=shown(round_.added) or _("everything"))
        ran = ", ".join(round_.tools_run) or _("nothing")
        tail = (_("response: {response}\ndecision: {kind} ({reason}); tools run: {ran}").format(
                    response=round_.response.summary(), kind=shown_decision(round_.decision),
                    reason=shown(round_.decision.reason), ran=ran)
                + ("\n" + _("repeated: the same response as the previous call, with nothing new sent in between")
                   if round_.repeated else ""))
        return head, _message_rows(record, step), tail

    def text(self) -> str:
        """The current call as plain text."""
        head, rows, tail = self._parts()
        table = text_table(headers(_TRANSCRIPT_HEADERS), [[("+" if new else " ") + r[0], *r[1:]] for new, r in rows])
        return _("{head}\n{table}\n(+ = new on this call)\n{tail}\nrun: {headline}").format(
            head=head, table=table, tail=tail, headline=self.record.headline())

    def html(self) -> str:
        """The current call as HTML."""
        head, rows, tail = self._parts()
        body = "".join(
            ("<tr style='background:#e3f1fa'>" if new else "<tr>")
            + "".join(f"<td style='{_CELL}'>{html.escape(v)}</td>" for v in r) + "</tr>"
            for new, r in rows
        )
        heads = "".join(f"<th style='{_CELL}'>{h}</th>" for h in headers(_TRANSCRIPT_HEADERS))
        blue = _("(blue rows are new on this call)")
        ran = _("run: {headline}").format(headline=html.escape(self.record.headline()))
        return (f"<div style='font-size:15px'><b>{html.escape(head)}</b></div>"
                f"<table style='{_TABLE}'><thead><tr>{heads}</tr></thead><tbody>{body}</tbody></table>"
                f"<div style='font-size:14px'>{blue}</div>"
                f"<pre style='font-size:14px;white-space:pre-wrap'>{html.escape(tail)}</pre>"
                f"<div style='font-size:14px'>{ran}</div>")

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data = super()._repr_mimebundle_(**kwargs) or {}
        data["text/plain"] = self.text()
        return data


def walkthrough(scenario: str | Scenario = "normal", criterion: str = "content",
                max_steps: int = DEFAULT_MAX_STEPS) -> Walkthrough:
    """Build a call-by-call walk-through of one run (see :class:`Walkthrough`)."""
    return Walkthrough(scenario, criterion, max_steps)
