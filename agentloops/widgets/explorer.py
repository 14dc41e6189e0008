"""The criteria explorer: pick or build a scenario, a criterion and a cap; see every criterion's run."""

from __future__ import annotations

import html
from collections.abc import Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, cast

import ipywidgets as widgets

from agentloops.controller.teaching.prewarm import RENDER_LOCK, Prewarm
from agentloops.criteria import CRITERIA, CRITERION_NAMES
from agentloops.errors import AgentLoopsError, ScenarioError
from agentloops.i18n import _, language, shown
from agentloops.loop import DEFAULT_MAX_STEPS, run
from agentloops.plots import OKABE_ITO, LiveChart
from agentloops.scenario import Group, Scenario, list_scenarios, load_scenario
from agentloops.widgets.ahead import Setting, View, next_settings
from agentloops.widgets.controls import (
    _STYLE,
    _check_cap,
    _check_choice,
    _classed,
)
from agentloops.widgets.script import (
    ANSWER,
    CONTENT_LABELS,
    CUSTOM,
    DEFAULT_SCENARIO,
    EXPLORER_GROUPS,
    FINISH_REASONS,
    MAX_CAP,
    MAX_ROUNDS,
    MAX_TOOL_CALLS,
    TALK,
    RoundSpec,
    _spec,
    build_scenario,
    text_read,
)
from agentloops.widgets.views import (
    ExplorerState,
    header_html,
    steps_html,
    summary_html,
)

VIEWS = 128
"""Settings the explorer keeps (each: six runs, a PNG of about 60 kB, three tables), least recently used dropped:
twice what it works ahead (:func:`~agentloops.widgets.ahead.next_settings`, some 50 settings)."""


class RoundRow:
    """The controls of one round of the script builder: content, text, tool calls, finish_reason."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.content = _classed(widgets.Dropdown(
            options=[(_(label), kind) for kind, label in CONTENT_LABELS.items()], value="null",
            description=_("round {n}").format(n=number), style=_STYLE, layout=widgets.Layout(width="230px")),
            "agentloops-content")
        self.text = _classed(widgets.Text(value=shown(ANSWER), placeholder=_("the round's text"), description=_("text"),
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
        return _spec({"content": self.content.value, "text": text_read(self.text.value),
                      "tool_calls": self.tool_calls.value, "finish_reason": self.finish_reason.value}, self.number)

    def show(self, spec: RoundSpec) -> None:
        """Set the controls to ``spec``."""
        self.content.value = spec.content
        self.text.value = shown(spec.text)
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
                 groups: Sequence[Group] = EXPLORER_GROUPS, prewarm: bool = True) -> None:
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
        self._shipped = names
        self.prewarm = prewarm
        self._views = Prewarm(self._view, size=VIEWS)  # what a setting shows, computed once (or ahead)
        self._moved: tuple[str, int] | None = None

        self.scenario = _classed(widgets.Dropdown(
            options=[(f"{s.name} — {_(s.title)}", s.name) for s in shipped]
            + [(_("custom — the rounds below"), CUSTOM)],
            value=source, description=_("scenario"), style=_STYLE, layout=widgets.Layout(width="620px")),
            "agentloops-scenario")
        self.criterion = _classed(widgets.ToggleButtons(
            options=list(CRITERION_NAMES), value=criterion, description=_("criterion"), style=_STYLE,
            tooltips=[CRITERIA[c].summary for c in CRITERION_NAMES]), "agentloops-criterion")
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
        """Show the current script run under every criterion (computed once per setting, or ahead while the
        page was read: :mod:`agentloops.widgets.ahead`), then work ahead."""
        try:
            key = self._key()
            view = self._views.get(key)
            with self._views.answering():  # every worker waits until the page has what it shows
                self._show(view)
        except AgentLoopsError as exc:  # a script the controls allowed but the loop rejects: say so, keep the page
            self.note.value = f"<span style='color:{OKABE_ITO['vermillion']}'>{html.escape(str(exc))}</span>"
            if self._state is None:
                raise
            return self._state
        if self.prewarm:
            rows = self.round_specs()
            base = self._base.model_dump_json() if self._base is not None else None
            added = self.rounds[len(rows)].spec() if len(rows) < MAX_ROUNDS else rows[-1]
            self._views.ahead(next_settings(key, rows, self._shipped, base=base, added=added, moved=self._moved))
        return view.state

    # ---- internals

    def _show(self, view: View) -> None:
        self._state = view.state
        for i, row in enumerate(self.rounds):
            row.box.layout.display = "flex" if i < self.round_count.value else "none"
            row.text.disabled = row.content.value != "text"
        self.header.value, self.summary.value, self.table.value = view.header, view.summary, view.table
        self.chart.value = view.png

    def _key(self) -> Setting:
        """What the controls describe (see :data:`agentloops.widgets.ahead.Setting`)."""
        common = (self.criterion.value, self.cap.value, language())
        if self.scenario.value != CUSTOM:
            return (self.scenario.value, None, (), *common)
        base = self._base.model_dump_json() if self._base is not None else None
        return (CUSTOM, base, tuple(self.round_specs()), *common)

    def _view(self, key: Hashable) -> View:
        """What a setting shows: every criterion's run, the tables and the chart (the worker calls it too)."""
        source, base, specs, criterion, cap, lang = cast(Setting, key)
        scenario = (load_scenario(source) if source != CUSTOM else build_scenario(
            list(specs), base=None if base is None else Scenario.model_validate_json(base)))
        records = {}
        for name in CRITERION_NAMES:
            self._views.checkpoint()  # in the worker: the learner's answer first
            records[name] = run(scenario, name, cap)
        state = ExplorerState(source, scenario, criterion, cap, records)
        self._views.checkpoint()
        with RENDER_LOCK:  # one chart, drawn by one thread at a time
            if self._chart is None:
                self._chart = LiveChart(CRITERION_NAMES, max_cap=MAX_CAP)
            png = self._chart.update(records, cap, highlight=criterion)
        if lang != language():  # the language changed while the worker drew it: not kept
            raise LookupError(key)
        return View(state, png, header_html(state), summary_html(state), steps_html(state.record))

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
            self._moved = ("criterion" if change.get("owner") is self.criterion else "cap", 0)
            self.refresh()

    def _on_edit(self, change: Mapping[str, Any]) -> None:
        if self._syncing:
            return
        self._moved = next(((field, row.number) for row in self.rounds for field in ("content", "tool_calls",
                            "finish_reason") if getattr(row, field) is change.get("owner")), None)
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
             groups: Sequence[Group] = EXPLORER_GROUPS, prewarm: bool = True) -> Explorer:
    """Build the criteria explorer (see :class:`Explorer`); it draws once before it is returned.

    ``prewarm=False`` computes only what is shown (no worker thread)."""
    return Explorer(scenario, criterion, max_steps, editable=editable, groups=groups, prewarm=prewarm)
