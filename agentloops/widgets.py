"""Widgets for the notebooks: change one thing, watch what moves.

Every builder returns the widget itself, so a test can drive it without a
browser: set ``.value`` on a control, then read :attr:`Explorer.state` (the
records behind what is on screen) or the ``.value`` of the HTML and image
outputs. All redraw logic is plain methods (``refresh``) that tests and the
benchmark call directly.

Executed headless (nbclient, CI, a static notebook viewer) a widget has no
front end; its ``text/plain`` rendering is then the current tables, as text,
so an executed notebook still reads.

Controls carry stable CSS classes (``agentloops-finish-reason``,
``agentloops-chart``…) so a browser test can find them on the page.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, get_args

import ipywidgets as widgets
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentloops.comparison import cell
from agentloops.criteria import CRITERIA, CRITERION_NAMES
from agentloops.errors import AgentLoopsError, ScenarioError, UsageError, describe_validation_error
from agentloops.i18n import N_, _, ngettext, shown
from agentloops.loop import DEFAULT_MAX_STEPS, run
from agentloops.plots import OKABE_ITO, LiveChart, criterion_color
from agentloops.quiz import CheckResult, Question
from agentloops.record import ROW_TITLES, RunRecord
from agentloops.response import FinishReason, Response, ToolCall, show_content
from agentloops.scenario import DEFAULT_PROMPT, Group, Scenario, list_scenarios, load_scenario
from agentloops.tables import text_table

FINISH_REASONS: tuple[str, ...] = get_args(FinishReason)
"""Every finish reason a round can be given in the script builder."""

ContentKind = Literal["null", "empty", "text"]
"""The three kinds of content a naive test confuses: ``None``, ``""`` and text."""

CONTENT_LABELS: dict[str, str] = {"null": "null", "empty": N_('"" (empty)'), "text": N_("text")}
"""The content dropdown's option texts (translated when a dropdown is built; the values stay code)."""

MAX_ROUNDS = 12
"""Rounds the script builder offers (the long chain of the shipped scenarios needs 11)."""

MAX_TOOL_CALLS = 3
"""Tool calls per round the script builder offers."""

MAX_CAP = 12
"""The largest step cap the explorer's slider offers."""

CUSTOM = "custom"
"""The explorer's scenario value for a script built round by round."""

DEFAULT_SCENARIO = "truncated"
"""What the explorer opens on: the round that makes two tests spin and one report an empty answer."""

TALK = "Let me open the file first."
ANSWER = "notes.txt has 42 lines."
CUSTOM_TOOLS: tuple[str, ...] = ("read_file", "count_lines", "search")
"""Tools a built round calls, in order: the first call of a round reads the file, the second counts lines…"""

EXPLORER_GROUPS: tuple[Group, ...] = ("article", "extra")

_CELL = "padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top"
_TABLE = "border-collapse:collapse;font-size:15px;margin:4px 0 10px 0"
_REPEATED_ROW = "#fbe3d4"  # a light tint of the vermillion that marks wasted calls in the charts


# --------------------------------------------------------------------------- scripts built round by round


class RoundSpec(BaseModel):
    """One round of a hand-built script, as the explorer's controls describe it.

    Attributes:
        content: ``null``, ``empty`` (``""``) or ``text``.
        text: the round's text when ``content`` is ``text``.
        tool_calls: how many tool calls the round makes (0–3).
        finish_reason: how the round ended.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: ContentKind = "null"
    text: str = ANSWER
    tool_calls: int = Field(default=0, ge=0, le=MAX_TOOL_CALLS)
    finish_reason: FinishReason = "stop"

    def content_value(self) -> str | None:
        """The ``content`` field of the response this round produces."""
        if self.content == "null":
            return None
        if self.content == "empty":
            return ""
        return self.text

    @classmethod
    def from_response(cls, response: Response) -> RoundSpec:
        """Describe ``response`` as a round (more than three tool calls are shown as three)."""
        if response.content is None:
            kind: ContentKind = "null"
        elif response.content == "":
            kind = "empty"
        else:
            kind = "text"
        return cls(content=kind, text=response.content or ANSWER,
                   tool_calls=min(len(response.tool_calls), MAX_TOOL_CALLS), finish_reason=response.finish_reason)

    def label(self) -> str:
        """The round in a few words: ``content="Let me…" 1 call finish=tool_calls``."""
        calls = ngettext("{n} call", "{n} calls", self.tool_calls).format(n=self.tool_calls)
        return f"content={show_content(self.content_value(), 24)} {calls} finish={self.finish_reason}"


def _spec(value: RoundSpec | Mapping[str, Any], number: int) -> RoundSpec:
    if isinstance(value, RoundSpec):
        return value
    if not isinstance(value, Mapping):
        raise ScenarioError(_("round {n}: expected a RoundSpec or a dict; got {kind}").format(
            n=number, kind=type(value).__name__))
    try:
        return RoundSpec.model_validate(value)
    except ValidationError as exc:
        raise ScenarioError(_("round {n}: {problem}").format(n=number, problem=describe_validation_error(exc))) \
            from None


def _custom_tools() -> dict[str, str]:
    normal = load_scenario("normal").tools
    return {"read_file": normal.get("read_file", "(notes.txt)"), "count_lines": normal.get("count_lines", "42"),
            "search": "line 3: add a cap test"}


def build_scenario(rounds: Sequence[RoundSpec | Mapping[str, Any]], *, base: Scenario | None = None,
                   name: str = CUSTOM, title: str | None = None) -> Scenario:
    """Turn rounds described by the explorer's controls into a scenario the loop can run.

    A round whose tool-call count matches the same round of ``base`` keeps
    that round's calls (and a round identical to ``base``'s keeps the whole
    response), so editing a shipped scenario changes only what was edited.
    Other calls are generated: call ``j`` of round ``i`` calls
    ``CUSTOM_TOOLS[j]`` on page ``i``, so every round asks for something new
    — until the script runs out and its last round repeats.

    Args:
        rounds: one :class:`RoundSpec` (or dict of its fields) per round.
        base: the scenario the rounds were copied from, if any.
        name: the scenario name of the result.
        title: its title (default: "custom script").

    Raises:
        ScenarioError: no rounds, or a round with a field out of range (the message names the round).
    """
    specs = [_spec(r, i) for i, r in enumerate(rounds, 1)]
    if not specs:
        raise ScenarioError(_("a script needs at least one round"))
    tools = dict(base.tools) if base is not None else {}
    for tool, result in _custom_tools().items():
        tools.setdefault(tool, result)
    responses = []
    for i, spec in enumerate(specs, 1):
        original = base.responses[i - 1] if base is not None and i <= len(base.responses) else None
        unchanged = original is not None and RoundSpec.from_response(original) == spec
        if original is not None and unchanged and len(original.tool_calls) <= MAX_TOOL_CALLS:
            responses.append(original)
            continue
        if original is not None and len(original.tool_calls) == spec.tool_calls:
            calls = original.tool_calls
        else:
            calls = tuple(
                ToolCall(id=f"call_{i}_{j + 1}", name=CUSTOM_TOOLS[j % len(CUSTOM_TOOLS)],
                         arguments=json.dumps({"path": "notes.txt", "page": i}))
                for j in range(spec.tool_calls)
            )
        raw = None
        if spec.finish_reason == "unknown":
            raw = original.raw_finish_reason if original is not None and original.raw_finish_reason else "OTHER"
        responses.append(Response(content=spec.content_value(), tool_calls=calls, finish_reason=spec.finish_reason,
                                  raw_finish_reason=raw))
    default_title = (_("custom script (edited from {name})").format(name=base.name) if base is not None
                     else _("custom script"))
    return Scenario(
        name=name,
        title=title or default_title,
        teaches=_("A script built round by round; its last round repeats once the script runs out."),
        group="custom",
        prompt=base.prompt if base is not None else DEFAULT_PROMPT,
        tools=tools,
        responses=tuple(responses),
    )


# --------------------------------------------------------------------------- what the explorer shows


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
    N_('an answer cut off mid-sentence by max_tokens'),
    N_('The commonest real cut-off: after one tool round the model starts its answer and the token limit '
       'stops it mid-sentence, so the round carries partial text, no tool calls and finish_reason length. '
       'The content test and the tool_calls test both hand the truncated text back as the answer; the '
       'finish_reason test spins to the cap; the correct loop raises truncated at once.'),
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


# --------------------------------------------------------------------------- the explorer


def _classed(widget: widgets.DOMWidget, *classes: str) -> Any:
    for name in classes:
        widget.add_class(name)
    return widget


_STYLE = {"description_width": "100px"}


class RoundRow:
    """The controls of one round of the script builder: content, text, tool calls, finish_reason."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.content = _classed(widgets.Dropdown(
            options=[(_(label), kind) for kind, label in CONTENT_LABELS.items()], value="null",
            description=_("round {n}").format(n=number), style=_STYLE, layout=widgets.Layout(width="230px")),
            "agentloops-content")
        self.text = _classed(widgets.Text(value=ANSWER, placeholder=_("the round's text"), description=_("text"),
                                          continuous_update=False,
                                          style={"description_width": "40px"}, layout=widgets.Layout(width="300px")),
                             "agentloops-text")
        self.tool_calls = _classed(widgets.Dropdown(options=list(range(MAX_TOOL_CALLS + 1)), value=0,
                                                    description=_("tool calls"), style={"description_width": "70px"},
                                                    layout=widgets.Layout(width="140px")), "agentloops-tool-calls")
        self.finish_reason = _classed(widgets.Dropdown(options=list(FINISH_REASONS), value="stop",
                                                       description="finish_reason", style={"description_width": "95px"},
                                                       layout=widgets.Layout(width="290px")),
                                      "agentloops-finish-reason")
        self.box = _classed(widgets.HBox([self.content, self.text, self.tool_calls, self.finish_reason]),
                            "agentloops-round", f"agentloops-round-{number}")

    @property
    def controls(self) -> tuple[widgets.ValueWidget, ...]:
        """The four value controls."""
        return (self.content, self.text, self.tool_calls, self.finish_reason)

    def spec(self) -> RoundSpec:
        """The round the controls describe."""
        return _spec({"content": self.content.value, "text": self.text.value, "tool_calls": self.tool_calls.value,
                      "finish_reason": self.finish_reason.value}, self.number)

    def show(self, spec: RoundSpec) -> None:
        """Set the controls to ``spec``."""
        self.content.value = spec.content
        self.text.value = spec.text
        self.tool_calls.value = spec.tool_calls
        self.finish_reason.value = spec.finish_reason


class Explorer(widgets.VBox):
    """One page to play: a scenario or a hand-built script, a criterion and a cap — and everything measured.

    Shows at once the step-by-step table of the selected criterion, every
    criterion side by side (the article's cells, wasted calls and tool runs,
    tokens billed) and a chart of calls, context per call and tokens billed.
    Editing a round of a shipped scenario turns it into a custom copy.

    Args:
        scenario: a shipped scenario's name, ``"custom"``, or a :class:`Scenario` to start from;
            default: :data:`DEFAULT_SCENARIO` (or the first of ``groups`` when it is not among them).
        criterion: the criterion whose steps are tabled first.
        max_steps: the cap.
        editable: show the scenario picker and the script builder (``False`` for a focused walk-through).
        groups: which shipped scenarios the picker lists.
    """

    def __init__(self, scenario: str | Scenario | None = None, criterion: str = "content",
                 max_steps: int = DEFAULT_MAX_STEPS, *, editable: bool = True,
                 groups: Sequence[Group] = EXPLORER_GROUPS) -> None:
        _check_choice("criterion", criterion, CRITERION_NAMES)
        _check_cap(max_steps)
        shipped = list_scenarios(list(groups))
        names = [s.name for s in shipped]
        start: Scenario | None = None
        if isinstance(scenario, Scenario):
            start, source = scenario, CUSTOM
        else:
            if scenario is None:
                scenario = DEFAULT_SCENARIO if DEFAULT_SCENARIO in names else (names[0] if names else CUSTOM)
            _check_choice("scenario", scenario, [*names, CUSTOM])
            source = scenario
        self._syncing = False
        self._base: Scenario | None = None
        self._state: ExplorerState | None = None
        self._chart: LiveChart | None = None

        self.scenario = _classed(widgets.Dropdown(
            options=[(f"{s.name} — {_(s.title)}", s.name) for s in shipped]
            + [(_("custom — the rounds below"), CUSTOM)],
            value=source, description=_("scenario"), style=_STYLE, layout=widgets.Layout(width="620px")),
            "agentloops-scenario")
        self.criterion = _classed(widgets.ToggleButtons(
            options=list(CRITERION_NAMES), value=criterion, description=_("criterion"), style=_STYLE,
            tooltips=[_(CRITERIA[c].summary) for c in CRITERION_NAMES]), "agentloops-criterion")
        self.cap = _classed(widgets.IntSlider(value=max_steps, min=1, max=MAX_CAP, description="max_steps",
                                              continuous_update=False, style=_STYLE), "agentloops-cap")
        self.round_count = _classed(widgets.BoundedIntText(value=1, min=1, max=MAX_ROUNDS, description=_("rounds"),
                                                           style=_STYLE, layout=widgets.Layout(width="180px")),
                                    "agentloops-rounds")
        self.rounds = [RoundRow(i) for i in range(1, MAX_ROUNDS + 1)]
        self.note = _classed(widgets.HTML(), "agentloops-note")
        self.header = _classed(widgets.HTML(), "agentloops-header")
        self.summary = _classed(widgets.HTML(), "agentloops-summary")
        self.chart = _classed(widgets.Image(format="png", layout=widgets.Layout(max_width="100%")),
                              "agentloops-chart")
        self.table = _classed(widgets.HTML(), "agentloops-table")

        if start is not None:
            self._load_rows(start)
        elif source != CUSTOM:
            self._load_rows(load_scenario(source))
        else:
            self._load_specs(DEFAULT_CUSTOM_SCRIPT)

        self.scenario.observe(self._on_scenario, names="value")
        for control in (self.criterion, self.cap):
            control.observe(self._on_view, names="value")
        self.round_count.observe(self._on_edit, names="value")
        for row in self.rounds:
            for control in row.controls:
                control.observe(self._on_edit, names="value")

        builder = widgets.VBox(
            [widgets.HTML(_("<b>Script</b> — one line per round; the model repeats the last round once the "
                            "script runs out. Editing a shipped scenario makes a custom copy.")),
             self.round_count, *(row.box for row in self.rounds)],
            layout=widgets.Layout(display="flex" if editable else "none"))
        builder.add_class("agentloops-builder")
        picker = self.scenario if editable else widgets.HTML()
        self.table.layout = widgets.Layout(overflow="auto", max_width="100%")  # a wide step table scrolls itself
        self.summary.layout = widgets.Layout(overflow="auto", max_width="100%")
        # compact and stacked: the chart sits right under the controls and above the script, so at 1440×900
        # it stays in view while a round is edited; the tables, which only grow, come last
        settings = widgets.HBox([self.criterion, self.cap], layout=widgets.Layout(flex_flow="row wrap"))
        super().__init__([picker, settings, self.header, self.chart, builder, self.note, self.summary, self.table])
        self.add_class("agentloops-explorer")
        self.refresh()

    # ---- reading and driving it from code

    @property
    def state(self) -> ExplorerState:
        """What is on screen, as data (computed by the last :meth:`refresh`)."""
        assert self._state is not None  # refresh() runs in __init__
        return self._state

    def round_specs(self) -> list[RoundSpec]:
        """The rounds of the script builder that are in use."""
        return [row.spec() for row in self.rounds[: self.round_count.value]]

    def set_rounds(self, rounds: Sequence[RoundSpec | Mapping[str, Any]]) -> ExplorerState:
        """Load a hand-built script into the builder, switch to it and redraw once.

        Raises:
            ScenarioError: no rounds, too many, or a round out of range.
        """
        specs = [_spec(r, i) for i, r in enumerate(rounds, 1)]
        if not 1 <= len(specs) <= MAX_ROUNDS:
            raise ScenarioError(_("a script in the explorer has 1 to {most} rounds; got {n}").format(
                most=MAX_ROUNDS, n=len(specs)))
        with self._sync():
            self._base = None
            self._load_specs(specs)
            self.scenario.value = CUSTOM
        self.note.value = ""
        return self.refresh()

    def text(self) -> str:
        """Everything on screen as plain text."""
        return self.state.text()

    def refresh(self) -> ExplorerState:
        """Run the current script under every criterion and redraw the tables and the chart."""
        try:
            scenario = self._current_scenario()
            records = {c: run(scenario, c, self.cap.value) for c in CRITERION_NAMES}
        except AgentLoopsError as exc:  # a script the controls allowed but the loop rejects: say so, keep the page
            self.note.value = f"<span style='color:{OKABE_ITO['vermillion']}'>{html.escape(str(exc))}</span>"
            if self._state is None:
                raise
            return self._state
        state = ExplorerState(self.scenario.value, scenario, self.criterion.value, self.cap.value, records)
        self._state = state
        self._draw(state)
        return state

    # ---- internals

    def _current_scenario(self) -> Scenario:
        if self.scenario.value != CUSTOM:
            return load_scenario(self.scenario.value)
        return build_scenario(self.round_specs(), base=self._base)

    def _draw(self, state: ExplorerState) -> None:
        for i, row in enumerate(self.rounds):
            row.box.layout.display = "flex" if i < self.round_count.value else "none"
            row.text.disabled = row.content.value != "text"
        self.header.value = header_html(state)
        self.summary.value = summary_html(state)
        self.table.value = steps_html(state.record)
        if self._chart is None:
            self._chart = LiveChart(CRITERION_NAMES, max_cap=MAX_CAP)
        self.chart.value = self._chart.update(state.records, state.max_steps, highlight=state.criterion)

    @contextmanager
    def _sync(self) -> Iterator[None]:
        """Set controls from code without each change triggering a redraw."""
        previous, self._syncing = self._syncing, True
        try:
            yield
        finally:
            self._syncing = previous

    def _load_specs(self, specs: Sequence[RoundSpec]) -> None:
        with self._sync():
            self.round_count.value = max(1, min(len(specs), MAX_ROUNDS))
            for i, row in enumerate(self.rounds):
                row.show(specs[i] if i < len(specs) else NEXT_ROUND)

    def _load_rows(self, scenario: Scenario) -> None:
        self._base = scenario
        self._load_specs([RoundSpec.from_response(r) for r in scenario.responses[:MAX_ROUNDS]])
        clipped = len(scenario.responses) > MAX_ROUNDS or any(
            len(r.tool_calls) > MAX_TOOL_CALLS for r in scenario.responses)
        self.note.value = (_("The builder shows {name} clipped to {rounds} rounds of at most {calls} calls; "
                             "editing keeps only what it shows.").format(
                                 name=scenario.name, rounds=MAX_ROUNDS, calls=MAX_TOOL_CALLS) if clipped else "")

    def _on_scenario(self, change: Mapping[str, Any]) -> None:
        if self._syncing:
            return
        if change["new"] != CUSTOM:
            self._load_rows(load_scenario(change["new"]))
        self.refresh()

    def _on_view(self, change: Mapping[str, Any]) -> None:
        if not self._syncing:
            self.refresh()

    def _on_edit(self, change: Mapping[str, Any]) -> None:
        if self._syncing:
            return
        if self.scenario.value != CUSTOM:
            name = self.scenario.value
            self._base = load_scenario(name)
            with self._sync():
                self.scenario.value = CUSTOM
            self.note.value = _("Editing made a custom copy of <code>{name}</code>.").format(name=html.escape(name))
        self.refresh()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data = super()._repr_mimebundle_(**kwargs) or {}
        data["text/plain"] = self.text()
        return data


DEFAULT_CUSTOM_SCRIPT: tuple[RoundSpec, ...] = (
    RoundSpec(content="text", text=TALK, tool_calls=1, finish_reason="tool_calls"),
    RoundSpec(content="null", tool_calls=0, finish_reason="length"),
)
"""The explorer's starting custom script: a round that talks and calls a tool, then a cut-off round."""

NEXT_ROUND = RoundSpec(content="text", text=ANSWER, tool_calls=0, finish_reason="stop")
"""What a round added to the builder starts as: a plain answer."""


def explorer(scenario: str | Scenario | None = None, criterion: str = "content",
             max_steps: int = DEFAULT_MAX_STEPS, *, editable: bool = True,
             groups: Sequence[Group] = EXPLORER_GROUPS) -> Explorer:
    """Build the criteria explorer (see :class:`Explorer`); it draws once before it is returned."""
    return Explorer(scenario, criterion, max_steps, editable=editable, groups=groups)


# --------------------------------------------------------------------------- a call-by-call walk-through


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
                    response=round_.response.summary(), kind=type(round_.decision).__name__.lower(),
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


# --------------------------------------------------------------------------- predict, commit, reveal


PredictionStage = Literal["open", "locked", "revealed"]
"""A prediction is open (the learner may change it), locked in, then revealed against a fresh run."""


class Prediction(widgets.VBox):
    """Ask for a prediction *before* the run is shown, lock it in, then reveal it against a fresh run.

    The comparison is a :class:`~agentloops.quiz.Question` whose answer is
    computed when the reveal happens, so it reads the code, never the prose
    or another widget's state. Nothing here needs a click to run top to
    bottom: "Run all" leaves it open, with no prediction recorded.

    Args:
        question: the prompt, the computed answer, the options and an explanation per option.
    """

    def __init__(self, question: Question) -> None:
        self.question = question
        self.stage: PredictionStage = "open"
        self.verdict: CheckResult | None = None
        self._locked: Any = None
        if question.options:
            self.choice: widgets.ValueWidget = widgets.ToggleButtons(options=list(question.options), value=None,
                                                                     style={"button_width": "auto"})
        else:
            self.choice = widgets.IntText(value=0, description=_("my guess"), style=_STYLE,
                                          layout=widgets.Layout(width="220px"))
        _classed(self.choice, "agentloops-prediction-choice")
        self.lock_button = _classed(widgets.Button(description=_("Lock in my prediction"), button_style="primary",
                                                   icon="lock"), "agentloops-prediction-lock")
        self.reveal_button = _classed(widgets.Button(description=_("Reveal the run"), disabled=True, icon="eye"),
                                      "agentloops-prediction-reveal")
        self.result = _classed(widgets.HTML(), "agentloops-prediction-result")
        self.lock_button.on_click(lambda button: self.lock())
        self.reveal_button.on_click(lambda button: self.reveal())
        prompt = widgets.HTML(_("<b>Predict first:</b> {prompt}").format(prompt=html.escape(question.prompt)))
        super().__init__([prompt, self.choice, widgets.HBox([self.lock_button, self.reveal_button]), self.result])
        self.add_class("agentloops-prediction")
        self._show()

    @property
    def predicted(self) -> Any:
        """The locked-in prediction, or the current choice while still open (``None`` until one is picked)."""
        return self._locked if self.stage != "open" else self.choice.value

    def lock(self, value: Any = None) -> Prediction:
        """Lock in ``value`` (default: the current choice); a missing choice is said on screen, not raised."""
        if self.stage != "open":
            return self
        if value is not None:
            self.choice.value = value
        if self.predicted is None:
            self.result.value = "<i>" + _("Pick an answer first, then lock it in.") + "</i>"
            return self
        self._locked, self.stage = self.predicted, "locked"
        self.choice.disabled = self.lock_button.disabled = True
        self.reveal_button.disabled = False
        self._show()
        return self

    def reveal(self) -> CheckResult | None:
        """Compare the locked prediction with a fresh run; ``None`` (and a note) if nothing is locked in yet."""
        if self.stage == "open":
            self.result.value = "<i>" + _("Lock in a prediction before the reveal: that is the point.") + "</i>"
            return None
        if self.stage == "revealed":
            return self.verdict
        self.stage = "revealed"
        self.reveal_button.disabled = True
        self.verdict = self.question.check(self.predicted)
        self._show()
        return self.verdict

    def text(self) -> str:
        """The prediction as plain text (what a headless run prints)."""
        options = ("\n" + _("options: {options}").format(options=", ".join(map(repr, self.question.options)))
                   if self.question.options else "")
        if self.stage == "open":
            state = _("not recorded yet: pick an answer, press 'Lock in my prediction', then 'Reveal the run'")
        elif self.stage == "locked":
            state = _("locked in: {prediction} (press 'Reveal the run')").format(prediction=repr(self.predicted))
        else:
            state = _("you predicted {prediction}; the run says {actual}\n{verdict}").format(
                prediction=repr(self.predicted), actual=repr(self.question.expected()), verdict=self.verdict)
        return _("Predict first: {prompt}{options}\nprediction: {state}").format(
            prompt=self.question.prompt, options=options, state=state)

    def _show(self) -> None:
        if self.stage == "revealed" and self.verdict is not None:
            actual = html.escape(repr(self.question.expected()))
            self.result.value = _("You predicted <code>{prediction}</code>; the run says <code>{actual}</code>."
                                  ).format(prediction=html.escape(repr(self.predicted)), actual=actual) \
                + self.verdict._repr_html_()
        elif self.stage == "locked":
            self.result.value = _("Locked in: <code>{prediction}</code>. Now reveal the run.").format(
                prediction=html.escape(repr(self.predicted)))
        else:
            self.result.value = ""

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data = super()._repr_mimebundle_(**kwargs) or {}
        data["text/plain"] = self.text()
        return data


def predict(prompt: str, answer: Any, *, options: Sequence[str] = (),
            explanations: Mapping[str, str] | None = None) -> Prediction:
    """Build a predict–commit–reveal widget (see :class:`Prediction`).

    Args:
        prompt: what to predict.
        answer: the right answer, or a zero-argument function that computes it from a fresh run.
        options: the choices (none: a whole number is asked for).
        explanations: option → why it is right or wrong.
    """
    return Prediction(Question(prompt=prompt, answer=answer, options=options, explanations=explanations or {}))


# --------------------------------------------------------------------------- argument checks


def _check_choice(name: str, value: object, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise UsageError(_("unknown {name} {value}; expected one of: {allowed}").format(
            name=name, value=repr(value), allowed=", ".join(allowed)))


def _check_cap(max_steps: object) -> None:
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or not 1 <= max_steps <= MAX_CAP:
        raise UsageError(_("max_steps must be a whole number from 1 to {most} in the explorer; got {value}").format(
            most=MAX_CAP, value=repr(max_steps)))
