"""Widgets for the controller notebooks (10–16): change one setting, re-run, see what moved.

Every builder returns the widget itself, already drawn once with its
defaults, so "Run all" needs no click. Each widget keeps what is on screen
as data in :attr:`state` (a small frozen object with the runs behind it), and
its redraw is one plain method, :meth:`refresh`, that tests and the benchmark
call directly.

A redraw stays interactive (well under 100 ms on a 2-core machine, see
``benchmarks/bench_controller_widgets.py``) because nothing is rebuilt: the
runs behind a control state are computed once and kept in a small LRU keyed
by the control values, and each chart is a live figure from
:mod:`agentloops.controller.teaching.plots` whose artists are moved in place and
shown at the PNG's own pixel size. (The interview practice box lives in
:func:`agentloops.interview.practice`.)

Executed headless (nbclient, CI, a static viewer) a widget has no front end;
its ``text/plain`` rendering is then the current state as text tables, so an
executed notebook still reads — the same contract as :mod:`agentloops.widgets`.

The controller explorer's controls carry stable CSS classes
(``agentloops-ctl-scenario``, ``-policy``, ``-fault``, ``-status``, ``-table``,
``-chart``, and ``agentloops-ctl-budget-<name>`` for each budget slider) so an
app page can be driven from a real browser.

Labels, menus, tables and status lines speak the language in use
(:mod:`agentloops.i18n`), read when a widget is built and when it redraws;
the values behind the controls (scenario, policy and fault names, the
budget names), the runs' records and the trace lines stay English.

The small experiments behind the widgets (:func:`inject`,
:func:`claim_counts`, :func:`storm_runs`, :func:`budget_comparison`,
:func:`parallel_run`, :func:`context_run`) are plain functions too: a
notebook cell can call them without a widget.
"""

from __future__ import annotations

import html
import json
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import replace as dc_replace
from typing import Any

import ipywidgets as widgets

from agentloops.controller.controller import Controller
from agentloops.controller.engine import Controls
from agentloops.controller.errors import ConfigError
from agentloops.controller.persistence.replaying import Replay, replay
from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.policy.budgets import BUDGET_NAMES
from agentloops.controller.policy.error_policy import POLICIES, resolve_policy
from agentloops.controller.render import clip, html_table
from agentloops.controller.sim.faults import Fault
from agentloops.controller.sim.planners import TaskPlanner
from agentloops.controller.sim.scenarios import build_controller, controller_scenario_names, load_controller_scenario
from agentloops.controller.task.context import ContextPolicy, careless_compactor, memory_from_state
from agentloops.controller.task.tasks import Task, make_task
from agentloops.controller.task.world import TOOLS
from agentloops.controller.teaching.experiments import (
    LoopComparison,
    random_case,
    run_cap_only,
    run_case,
)
from agentloops.controller.tools import Toolbox
from agentloops.i18n import N_, _
from agentloops.tables import text_table

PREFIX = "agentloops-ctl"
"""CSS class prefix of the controller widgets."""

_STYLE = {"description_width": "150px"}
_WIDE = widgets.Layout(width="560px")
_MENU = widgets.Layout(width="440px")
"""A menu of short labels: room after the 150 px description for "as the scenario says" (and its Chinese)."""


# =========================================================================== faults a widget can inject


@dataclass(frozen=True, slots=True)
class FaultChoice:
    """One entry of the fault menu: what to inject into the task's main tool.

    Attributes:
        kind: the :class:`~agentloops.controller.sim.faults.Fault` kind.
        times: how many matching calls fail (``None``: every one).
        fallback_too: inject the same fault into the tool's fallback (an outage of both services).
        note: what it simulates, in a few words.
    """

    kind: str
    times: int | None
    fallback_too: bool
    note: str


FAULT_CHOICES: dict[str, FaultChoice | None] = {
    "none": None,
    "timeout once": FaultChoice("timeout", 1, False, N_("the service is slow once, then answers")),
    "timeout always": FaultChoice("timeout", None, True, N_("the service and its fallback never answer")),
    "empty": FaultChoice("empty", None, True, N_("both services answer with nothing")),
    "invalid arguments": FaultChoice("reject_arguments", None, False, N_("the service rejects the arguments")),
    "missing parameter": FaultChoice("missing_parameter", 1, False, N_("the request is ambiguous: ask which one")),
    "permission denied": FaultChoice("permission_denied", None, False, N_("the caller may not use this tool")),
    "rate limited once": FaultChoice("rate_limited", 1, False, N_("too many requests, once")),
    "not found": FaultChoice("not_found", None, False, N_("the resource does not exist")),
    "permanent error": FaultChoice("permanent_error", None, True, N_("the service is down for maintenance")),
    "format change": FaultChoice("format_change", None, False, N_("the service renamed its output fields")),
}
"""The fault menu, by the name a learner picks."""

SIX_FAULTS: tuple[str, ...] = ("timeout once", "timeout always", "empty", "invalid arguments", "missing parameter",
                               "permission denied")
"""The six faults the source article injects, as menu names."""


def fault_target(task: Task) -> tuple[str, dict[str, Any]]:
    """The (tool, arguments) a fault is aimed at: the call that settles the task's *last* item.

    Aiming at the last item lets the first items succeed, so a fault shows
    what happens to work that is already done (it is kept).
    """
    inputs = {**task.type.inputs(task.params)}
    return task.type.action(task.items[-1], task.params, inputs)


def inject(task: Task, choice: str) -> tuple[Fault, ...]:
    """The faults that the menu entry ``choice`` declares for ``task``.

    Raises:
        ConfigError: an unknown menu entry (the message lists them).
    """
    if choice not in FAULT_CHOICES:
        raise ConfigError(_("unknown fault {choice!r}; expected one of: {names}").format(
            choice=choice, names=", ".join(FAULT_CHOICES)))
    entry = FAULT_CHOICES[choice]
    if entry is None:
        return ()
    tool, args = fault_target(task)
    match = {k: v for k, v in args.items() if isinstance(v, (str, int, float))}
    faults = [Fault(tool=tool, kind=entry.kind, times=entry.times, match=match)]  # type: ignore[arg-type]
    fallback = task.toolbox()[tool].fallback
    if entry.fallback_too and fallback is not None:
        faults.append(Fault(tool=fallback, kind=entry.kind, times=entry.times, match=match))  # type: ignore[arg-type]
    return tuple(faults)


# =========================================================================== shared plumbing


def _classed(widget: Any, *classes: str) -> Any:
    for name in classes:
        widget.add_class(name)
    return widget


class _Lru:
    """Results by control values, least recently used dropped first: a state already shown is not recomputed."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The cached value for ``key``, computing (and keeping) it on a miss."""
        if key in self._items:
            self._items.move_to_end(key)
            return self._items[key]
        value = self._items[key] = compute()
        if len(self._items) > self.size:
            self._items.popitem(last=False)
        return value


def _chart_image(chart: Any) -> widgets.Image:
    """An image widget that shows a live chart's PNG at its pixel size (never stretched, so never blurred)."""
    width, _height = chart.live.size_px
    image = widgets.Image(format="png", layout=widgets.Layout(width=f"{width}px", max_width="100%",
                                                               height="auto", align_self="flex-start"))
    return _classed(image, f"{PREFIX}-chart")


def _badge(status: str) -> str:
    from agentloops.controller.teaching.plots import status_color

    dark = status in ("failed_unrecoverable", "handed_off", "cancelled", "no_progress")
    return (f"<span style='background:{status_color(status)};color:{'white' if dark else 'black'};"
            f"padding:2px 8px;border-radius:4px;font-weight:bold'>{html.escape(status)}</span>")


TURN_HEADERS: tuple[str, ...] = (N_("turn"), N_("state"), N_("pending goal"), N_("action"), N_("tool status"),
                                 N_("state delta (or why not)"), N_("decision"))
"""Columns of the per-turn table (shown translated: ``_(header)``)."""


def _headers(headers: Sequence[str]) -> list[str]:
    """Column names in the language in use (the tables' data and the run's records stay English)."""
    return [_(h) for h in headers]


def turn_rows(run: ControllerRun, width: int = 60) -> list[list[Any]]:
    """One row per turn: version change, pending goal, action, tool status, state delta, decision."""
    return [[t.turn, f"v{t.state_version}→v{t.state_version_after}", t.pending_goal, clip(t.action, width),
             clip(t.tool_status, 40), clip(t.delta_text(), width), clip(t.decision, 50)] for t in run.turns]


def turns_html(run: ControllerRun) -> str:
    """The per-turn table as HTML; turns that changed the state are highlighted."""
    changed = [t.state_version_after != t.state_version for t in run.turns]
    return html_table(_("{label}: one row per turn (highlighted: the state changed)").format(label=run.label),
                      _headers(TURN_HEADERS), turn_rows(run, 90), highlight=changed)


def turns_text(run: ControllerRun) -> str:
    """The per-turn table as plain text."""
    return text_table(_headers(TURN_HEADERS), turn_rows(run))


def stop_html(run: ControllerRun) -> str:
    """The stop rendered twice, side by side: the user message and the system record."""
    record = {k: v for k, v in run.system_record().items() if k not in ("state", "facts", "budgets_left")
              and v not in (None, [], {})}
    user, system = html.escape(_("User message")), html.escape(_("System record"))
    return ("<div style='display:flex;gap:1em;font-size:14px'>"
            f"<div style='flex:1'><b>{user}</b><pre style='white-space:pre-wrap'>"
            f"{html.escape(run.user_message())}</pre></div>"
            f"<div style='flex:1'><b>{system}</b><pre style='white-space:pre-wrap'>"
            f"{html.escape(json.dumps(record, ensure_ascii=False, indent=1))}</pre></div></div>")


def stop_text(run: ControllerRun) -> str:
    """The stop as text: the user message, then the system record's main fields."""
    keys = ("status", "code", "reason", "budget", "tool", "error_class", "question", "pending_action", "verified")
    record = {k: run.system_record()[k] for k in keys if run.system_record()[k] not in (None, "")}
    user, system = _("--- user message ---"), _("--- system record ---")
    return f"{user}\n{run.user_message()}\n{system}\n" + json.dumps(record, ensure_ascii=False, indent=1)


def routes(run: ControllerRun) -> list[tuple[str, str, str]]:
    """(action label, tool status, route taken) for every tool action of a run, in order."""
    return [(a["label"], a.get("status") or "not run", a.get("route") or "-")
            for t in run.turns for a in t.actions if a.get("tool")]


def route_row(run: ControllerRun) -> dict[str, Any]:
    """One table row about a run's routing: tool statuses, routes, how it ended, retries spent."""
    taken = routes(run)
    return {"tool statuses": " → ".join(s for _label, s, _route in taken),
            "routes": " → ".join(r for _label, _status, r in taken),
            "ends as": f"{run.status} ({run.code})", "retries": int(run.usage["retries"])}


class _Panel(widgets.VBox):
    """Plumbing shared by the widgets: controls → :meth:`refresh` → :attr:`state`, HTML, PNG, text."""

    def _wire(self, controls: Sequence[widgets.ValueWidget]) -> None:
        self._syncing = False
        for control in controls:
            control.observe(self._on_change, names="value")

    def _on_change(self, change: Mapping[str, Any]) -> None:
        if not self._syncing:
            self.refresh()

    @contextmanager
    def _sync(self) -> Iterator[None]:
        """Set controls from code without each change triggering a redraw."""
        previous, self._syncing = self._syncing, True
        try:
            yield
        finally:
            self._syncing = previous

    @property
    def state(self) -> Any:
        """What is on screen, as data (computed by the last :meth:`refresh`)."""
        return self._state

    def refresh(self) -> Any:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def text(self) -> str:
        """Everything on screen as plain text."""
        return str(self._state.text())

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data = super()._repr_mimebundle_(**kwargs) or {}
        data["text/plain"] = self.text()
        return data


def _actions_html(run: ControllerRun) -> str:
    """``actions: a → b → c`` (the action labels are the trace's, in English)."""
    return html.escape(_("actions: {actions}").format(actions=" → ".join(run.actions)))


def _error_html(exc: Exception) -> str:
    from agentloops.plots import OKABE_ITO

    return f"<span style='color:{OKABE_ITO['vermillion']}'>{html.escape(str(exc))}</span>"


# =========================================================================== the controller explorer


SLIDER_BUDGETS: dict[str, tuple[int, int, int]] = {
    "steps": (1, 12, 1),
    "tool_calls": (1, 16, 1),
    "retries": (0, 8, 1),
    "wall_time_s": (5, 120, 5),
}
"""Budgets the explorer offers as sliders: (min, max, step)."""

SCENARIO_POLICY = N_("as the scenario says")
"""The policy menu's first value: each scenario's own policy (the value stays English; its label is translated)."""


@dataclass(frozen=True)
class ControllerExplorerState:
    """What the controller explorer shows, as data.

    Attributes:
        scenario: the controller scenario's name.
        policy: the policy the run used (its name).
        fault: the injected fault's menu name.
        budget: the budget values of the sliders.
        faults: every fault of the run (the scenario's, after the injected ones).
        run: the run.
    """

    scenario: str
    policy: str
    fault: str
    budget: Mapping[str, float]
    faults: tuple[Fault, ...]
    run: ControllerRun

    def text(self) -> str:
        """Everything on screen, as plain text."""
        faults = "; ".join(f.describe() for f in self.faults) or _("none")
        budget = ", ".join(f"{k}={v:g}" for k, v in self.budget.items())
        head = _("Controller explorer — scenario {scenario} · policy {policy} · fault {fault}").format(
            scenario=self.scenario, policy=self.policy, fault=self.fault)
        lines = _("faults: {faults}\nbudgets: {budgets}").format(faults=faults, budgets=budget)
        return f"{head}\n{lines}\n{self.run.headline()}\n\n{turns_text(self.run)}\n\n{stop_text(self.run)}"


class ControllerExplorer(_Panel):
    """Pick a controller scenario, a policy, a fault to inject and budgets; see how the run ends.

    Shows the stop status, the user message next to the system record, the
    per-turn table with state deltas (turns that changed the state
    highlighted) and a chart: state per turn, and the seven budgets used.

    Args:
        scenario: a shipped controller scenario's name.
        policy: ``"as the scenario says"`` or a shipped policy name.
        fault: a :data:`FAULT_CHOICES` name, injected on top of the scenario's own faults.
        budget: slider values to start from (default: the scenario's budgets).
    """

    def __init__(self, scenario: str = "weather-normal", policy: str = SCENARIO_POLICY, fault: str = "none",
                 budget: Mapping[str, float] | None = None) -> None:
        names = controller_scenario_names()
        _check("scenario", scenario, names)
        _check("policy", policy, [SCENARIO_POLICY, *POLICIES])
        _check("fault", fault, list(FAULT_CHOICES))
        self._state: ControllerExplorerState | None = None
        self.scenario = _classed(widgets.Dropdown(
            options=[(f"{s.name} — {s.title}", s.name) for s in map(load_controller_scenario, names)],
            value=scenario, description=_("scenario"), style=_STYLE, layout=_WIDE), f"{PREFIX}-scenario")
        self.policy = _classed(widgets.Dropdown(
            options=[(_(SCENARIO_POLICY), SCENARIO_POLICY), *((p, p) for p in POLICIES)], value=policy,
            description=_("error policy"), style=_STYLE, layout=_MENU), f"{PREFIX}-policy")
        self.fault = _classed(widgets.Dropdown(
            options=[(_("{name} — {note}").format(name=k, note=_(v.note)) if v else _("none"), k)
                     for k, v in FAULT_CHOICES.items()], value=fault,
            description=_("inject a fault"), style=_STYLE, layout=_WIDE), f"{PREFIX}-fault")
        self.budgets: dict[str, widgets.IntSlider] = {}
        for name, (low, high, step) in SLIDER_BUDGETS.items():
            self.budgets[name] = _classed(widgets.IntSlider(
                min=low, max=high, step=step, value=low, description=_("budget: {name}").format(name=name),
                style=_STYLE, continuous_update=False, layout=widgets.Layout(width="460px")),
                f"{PREFIX}-budget", f"{PREFIX}-budget-{name.replace('_', '-')}")
        self.status = _classed(widgets.HTML(), f"{PREFIX}-status")
        self.stop = _classed(widgets.HTML(), f"{PREFIX}-stop")
        self.table = _classed(widgets.HTML(), f"{PREFIX}-table")
        from agentloops.controller.teaching.plots import LiveRunChart

        self._chart = LiveRunChart()
        self._runs = _Lru()
        self.chart = _chart_image(self._chart)
        self.note = _classed(widgets.HTML(), f"{PREFIX}-note")
        self._wire([self.policy, self.fault, *self.budgets.values()])
        self.scenario.observe(self._on_scenario, names="value")
        super().__init__([self.scenario, self.policy, self.fault, *self.budgets.values(), self.note, self.status,
                          self.chart, self.stop, self.table])
        self.add_class(f"{PREFIX}-explorer")
        self._load_budgets(scenario, budget)
        self.refresh()

    def _load_budgets(self, scenario: str, values: Mapping[str, float] | None = None) -> None:
        task = load_controller_scenario(scenario).build_task()
        with self._sync():
            for name, slider in self.budgets.items():
                value = (values or {}).get(name, task.budget.limit(name))  # type: ignore[arg-type]
                slider.value = int(min(slider.max, max(slider.min, value if value is not None else slider.max)))

    def _on_scenario(self, change: Mapping[str, Any]) -> None:
        if self._syncing:
            return
        self._load_budgets(change["new"])
        self.refresh()

    def refresh(self) -> ControllerExplorerState:
        """Run the scenario with the chosen policy, fault and budgets; redraw everything."""
        budget = {name: slider.value for name, slider in self.budgets.items()}
        key = (self.scenario.value, self.policy.value, self.fault.value, *budget.values())
        try:
            faults, run = self._runs.get(key, lambda: self._run(budget))
        except ConfigError as exc:  # a combination the controls allowed but the controller refuses: say so
            self.note.value = _error_html(exc)
            if self._state is None:
                raise
            return self._state
        self.note.value = ""
        state = ControllerExplorerState(self.scenario.value, run.policy.name, self.fault.value, budget, faults, run)
        self._state = state
        self.status.value = (f"<div style='font-size:16px'>{_badge(run.status)} <code>{html.escape(run.code)}"
                             f"</code> — {html.escape(run.stop.reason)}</div>"
                             f"<div style='font-size:14px'>{html.escape(run.headline())}</div>")
        self.stop.value = stop_html(run)
        self.table.value = turns_html(run)
        self.chart.value = self._chart.update(run)
        return state

    def _run(self, budget: Mapping[str, float]) -> tuple[tuple[Fault, ...], ControllerRun]:
        """The faults and the run for the current controls (cached by :meth:`refresh`)."""
        loaded = load_controller_scenario(self.scenario.value)
        task = loaded.build_task().with_budget(**budget)
        faults = inject(task, self.fault.value) + tuple(loaded.faults)
        policy = None if self.policy.value == SCENARIO_POLICY else self.policy.value
        return faults, build_controller(loaded, policy=policy, faults=faults, budget=task.budget).run()

    @property
    def run(self) -> ControllerRun:
        """The run on screen."""
        assert self._state is not None
        return self._state.run


def controller_explorer(scenario: str = "weather-normal", policy: str = SCENARIO_POLICY, fault: str = "none",
                        **budget: float) -> ControllerExplorer:
    """Build the controller explorer (see :class:`ControllerExplorer`); it draws once before it is returned.

    Example:
        >>> ex = controller_explorer("weather-normal", fault="timeout always")  # doctest: +SKIP
        >>> ex.state.run.status  # doctest: +SKIP
        'budget_exhausted'
    """
    return ControllerExplorer(scenario, policy, fault, budget or None)


# =========================================================================== 10: what the loop updates


@dataclass(frozen=True)
class StateExplorerState:
    """The state explorer's runs: the configured one, and the reference with task state.

    Attributes:
        send_state: whether the TASK STATE block was sent (and read).
        window: messages of the transcript the model can see (``None``: all).
        cities: how many cities the task compares.
        detect_repeats: whether the fingerprint check was on.
        run: the configured run.
        reference: the same task with task state and a full view.
    """

    send_state: bool
    window: int | None
    cities: int
    detect_repeats: bool
    run: ControllerRun
    reference: ControllerRun

    def text(self) -> str:
        """Everything on screen as text."""
        view = (_("all messages") if self.window is None
                else _("the last {n} message(s)").format(n=self.window))
        sent = _("sent") if self.send_state else _("not sent")
        check = _("on") if self.detect_repeats else _("off")
        head = _("State explorer — TASK STATE {sent} · the model sees {view} · {cities} cities · fingerprint check "
                 "{check}").format(sent=sent, view=view, cities=self.cities, check=check)
        runs = _("this run: {run}\nreference (with state): {reference}").format(
            run=self.run.headline(), reference=self.reference.headline())
        return f"{head}\n{runs}\n\n{turns_text(self.run)}"


CITY_ORDER: tuple[str, ...] = ("Shanghai", "Beijing", "Guangzhou", "Chengdu")


def state_run(send_state: bool = True, window: int | None = None, cities: int = 2, detect_repeats: bool = True,
              label: str | None = None) -> ControllerRun:
    """The weather task over ``cities`` cities, with or without task state, with a limited view or not."""
    task = make_task("weather_compare", cities=list(CITY_ORDER[:cities]))
    model = TaskPlanner(task, use_state=send_state, window=window)
    policy = {"name": "default" if detect_repeats else "no-fingerprints", "detect_repeats": detect_repeats}
    name = label or f"{'with' if send_state else 'without'} state"
    return Controller(task, model, send_state=send_state, policy=policy, trace_id=name, label=name).run()


class StateExplorer(_Panel):
    """Send the task state or not, narrow what the model can see, add cities: does the loop still converge?"""

    def __init__(self, send_state: bool = False, window: int | None = 2, cities: int = 2,
                 detect_repeats: bool = True) -> None:
        self._state: StateExplorerState | None = None
        self.state_block = _classed(widgets.Checkbox(value=send_state, description=_("send the TASK STATE block"),
                                                    style=_STYLE, indent=False), f"{PREFIX}-send-state")
        self.window = _classed(widgets.Dropdown(
            options=[(_("all messages"), None), *((_("last {n}").format(n=n), n) for n in (1, 2, 3, 4, 6))],
            value=window, description=_("model sees"), style=_STYLE), f"{PREFIX}-window")
        self.cities = _classed(widgets.IntSlider(value=cities, min=1, max=len(CITY_ORDER), description=_("cities"),
                                                 style=_STYLE, continuous_update=False), f"{PREFIX}-cities")
        self.detect_repeats = _classed(widgets.Checkbox(value=detect_repeats, description=_("fingerprint check"),
                                                        style=_STYLE, indent=False), f"{PREFIX}-fingerprints")
        from agentloops.controller.teaching.plots import LiveStateChart

        self._chart = LiveStateChart()
        self._runs = _Lru()
        self.chart = _chart_image(self._chart)
        self.table = _classed(widgets.HTML(), f"{PREFIX}-table")
        self.status = _classed(widgets.HTML(), f"{PREFIX}-status")
        self._wire([self.state_block, self.window, self.cities, self.detect_repeats])
        super().__init__([widgets.HBox([self.state_block, self.detect_repeats]), self.window, self.cities,
                          self.status, self.chart, self.table])
        self.add_class(f"{PREFIX}-state-explorer")
        self.refresh()

    def refresh(self) -> StateExplorerState:
        """Run the configured loop and the reference (each once per setting); redraw."""
        key = (self.state_block.value, self.window.value, self.cities.value, self.detect_repeats.value)
        run = self._runs.get(key, lambda: state_run(*key, label="this run"))
        reference = self._runs.get(("reference", self.cities.value), lambda: state_run(
            True, None, self.cities.value, True, label="with state (reference)"))
        self._state = StateExplorerState(self.state_block.value, self.window.value, self.cities.value,
                                         self.detect_repeats.value, run, reference)
        self.status.value = (f"<div style='font-size:15px'>{_badge(run.status)} {html.escape(run.headline())}</div>"
                             f"<div style='font-size:14px'>{_actions_html(run)}</div>")
        self.chart.value = self._chart.update(run, reference)
        self.table.value = turns_html(run)
        return self._state


def state_explorer(send_state: bool = False, window: int | None = 2, cities: int = 2,
                   detect_repeats: bool = True) -> StateExplorer:
    """Build the state explorer (see :class:`StateExplorer`); it opens on the run without state."""
    return StateExplorer(send_state, window, cities, detect_repeats)


# =========================================================================== 11: claims


def claim_counts(p_early_claim: float = 0.3, premature_claims: int = 1, n: int = 60, seed: int = 0
                 ) -> dict[str, Counter[str]]:
    """How ``n`` runs of a model that claims success early end, under the naive and the default policy.

    Each run compares two cities drawn from seed ``seed + i``, with a planner
    that, once it has one city, answers "all done" with probability
    ``p_early_claim`` per turn. No tool fails. A run counts as ``verified``
    when it reported success and the completion condition holds, as
    ``unverified`` when it reported success and the condition does not hold,
    and by its stop status otherwise.

    Args:
        p_early_claim: probability per turn of an early "done".
        premature_claims: how many unfounded "done" replies the default policy answers with what is missing.
        n: runs per policy.
        seed: first seed.
    """
    out: dict[str, Counter[str]] = {"naive": Counter(), "default": Counter()}
    policies = {"naive": resolve_policy("naive"),
                "default": resolve_policy("default").model_copy(update={"premature_claims": premature_claims})}
    for i in range(n):
        case = random_case(seed + i)
        for name, policy in policies.items():
            task = case.task()
            model = TaskPlanner(task, p_early_claim=p_early_claim, seed=seed + i)
            run = Controller(task, model, policy=policy, trace_id=f"claim-{seed + i}", label=name).run()
            if run.status == "succeeded":
                out[name]["verified" if run.stop.verified else "unverified"] += 1
            else:
                out[name][run.status] += 1
    return out


CLAIM_HEADERS: tuple[str, ...] = (N_("policy"), N_("ended as"), N_("runs"))
"""Columns of :meth:`ClaimsState.rows`."""


@dataclass(frozen=True)
class ClaimsState:
    """Counts behind the claims explorer (see :func:`claim_counts`)."""

    p_early_claim: float
    premature_claims: int
    n: int
    counts: Mapping[str, Mapping[str, int]]

    def rows(self) -> list[list[Any]]:
        """One row per policy and outcome."""
        return [[policy, kind, count] for policy, by_kind in self.counts.items() for kind, count in
                sorted(by_kind.items(), key=lambda kv: -kv[1])]

    def text(self) -> str:
        """The counts as a text table."""
        head = _("Claims explorer — {n} runs per policy, early-claim probability {p}, 'not done yet' answers "
                 "allowed: {pushback}").format(n=self.n, p=f"{self.p_early_claim:g}", pushback=self.premature_claims)
        return f"{head}\n" + text_table(_headers(CLAIM_HEADERS), self.rows())


class ClaimsExplorer(_Panel):
    """How often is "done" true? Set how eagerly the model claims, and how often the controller pushes back."""

    def __init__(self, p_early_claim: float = 0.3, premature_claims: int = 1, n: int = 60) -> None:
        self._state: ClaimsState | None = None
        self.n = n
        self.p = _classed(widgets.FloatSlider(value=p_early_claim, min=0.0, max=0.8, step=0.05,
                                              description=_("early 'done' chance"), style=_STYLE,
                                              continuous_update=False), f"{PREFIX}-claim-chance")
        self.pushback = _classed(widgets.IntSlider(value=premature_claims, min=0, max=3,
                                                   description=_("'not done yet' replies"), style=_STYLE,
                                                   continuous_update=False), f"{PREFIX}-pushback")
        from agentloops.controller.teaching.plots import LiveClaimsChart

        self._chart = LiveClaimsChart(("naive", "default"), n)
        self._counts = _Lru()
        self.chart = _chart_image(self._chart)
        self.table = _classed(widgets.HTML(), f"{PREFIX}-table")
        self._wire([self.p, self.pushback])
        super().__init__([self.p, self.pushback, self.chart, self.table])
        self.add_class(f"{PREFIX}-claims-explorer")
        self.refresh()

    def refresh(self) -> ClaimsState:
        """Run the experiment for the current settings (once per setting) and redraw."""
        key = (round(self.p.value, 4), self.pushback.value)
        counts = self._counts.get(key, lambda: {k: dict(v) for k, v in claim_counts(*key, self.n).items()})
        self._state = ClaimsState(self.p.value, self.pushback.value, self.n, counts)
        self.chart.value = self._chart.update(counts)
        self.table.value = html_table(_("How the runs ended"), _headers(CLAIM_HEADERS), self._state.rows())
        return self._state


def claims_explorer(p_early_claim: float = 0.3, premature_claims: int = 1, n: int = 60) -> ClaimsExplorer:
    """Build the claims explorer (see :class:`ClaimsExplorer`)."""
    return ClaimsExplorer(p_early_claim, premature_claims, n)


# =========================================================================== 12: the retry storm


def fallback_chain(tools: int) -> Toolbox:
    """The weather tools with a chain of ``tools`` fallback providers (each on its own backend).

    ``get_weather`` falls back to ``weather_backup``, which falls back to
    ``weather_backup_2``, and so on: the routing layer a team grows one
    incident at a time.
    """
    if tools < 1:
        raise ConfigError(_("a fallback chain needs at least 1 tool; got {tools}").format(tools=tools))
    names = ["weather_backup", *(f"weather_backup_{i}" for i in range(2, tools + 1))]
    specs = [dc_replace(TOOLS["get_weather"], fallback=names[0])]
    for i, name in enumerate(names):
        specs.append(dc_replace(TOOLS["weather_backup"], name=name, fallback=names[i + 1] if i + 1 < len(names)
                                else None, backend=f"provider-{i + 1}"))
    return Toolbox.of(specs)


def storm_runs(tools: int = 2, retries: int = 3) -> dict[str, ControllerRun]:
    """Beijing's weather with every tool of a ``tools``-long fallback chain timing out, under both retry scopes.

    Only the retry budget is under study: the tool-call and wall-time budgets
    are switched off so that they do not stop the per-tool run first.
    """
    task = make_task("weather_compare", budget={"retries": retries, "tool_calls": None, "wall_time_s": None})
    box = fallback_chain(tools)
    faults = [Fault(tool=name, kind="timeout", match={"city": "Beijing"}) for name in box.names()]
    out = {}
    for scope, label in zip(("shared", "per_tool"), STORM_LABELS, strict=True):
        policy = {"name": f"{scope.replace('_', '-')} retries", "retry_scope": scope}
        out[label] = Controller(task, TaskPlanner(task), tools=box, policy=policy, faults=faults,
                                trace_id=f"storm-{scope}", label=label).run()
    return out


def storm_rows(max_tools: int = 4, retries: int = 3) -> list[dict[str, Any]]:
    """Tool attempts per run, for chains of 1 … ``max_tools`` tools and both scopes (for :func:`storm_chart`)."""
    rows = []
    for tools in range(1, max_tools + 1):
        for label, run in storm_runs(tools, retries).items():
            rows.append({"tools": tools, "scope": "shared" if label.startswith("one") else "per_tool",
                         "attempts": int(run.usage["tool_calls"]), "retries": int(run.usage["retries"]),
                         "status": run.status, "code": run.code})
    return rows


STORM_HEADERS: tuple[str, ...] = (N_("retry budget"), N_("tool attempts"), N_("retries"), N_("simulated s"),
                                  N_("stop"))
"""Columns of :meth:`StormState.rows` (shown translated)."""

STORM_LABELS: tuple[str, ...] = (N_("one shared budget"), N_("a budget per tool"))
"""The two retry scopes' labels (the keys of :func:`storm_runs`; shown translated)."""


@dataclass(frozen=True)
class StormState:
    """The two runs of the retry-storm explorer."""

    tools: int
    retries: int
    runs: Mapping[str, ControllerRun]

    def rows(self) -> list[list[Any]]:
        """One row per run: attempts, retries, stop."""
        return [[_(label), int(r.usage["tool_calls"]), int(r.usage["retries"]), f"{r.usage['wall_time_s']:g}",
                 f"{r.status} ({r.code})"] for label, r in self.runs.items()]

    def text(self) -> str:
        """The runs as a text table."""
        head = _("Retry storm — {n} tool(s) in the fallback chain, retry budget {retries}").format(
            n=self.tools, retries=self.retries)
        return f"{head}\n" + text_table(_headers(STORM_HEADERS), self.rows())


class StormExplorer(_Panel):
    """Grow the fallback chain and the retry budget; compare one shared budget with a budget per tool."""

    def __init__(self, tools: int = 2, retries: int = 3) -> None:
        self._state: StormState | None = None
        self.tools = _classed(widgets.IntSlider(value=tools, min=1, max=5, description=_("fallback tools"),
                                                style=_STYLE, continuous_update=False), f"{PREFIX}-chain")
        self.retries = _classed(widgets.IntSlider(value=retries, min=0, max=6, description=_("retry budget"),
                                                  style=_STYLE, continuous_update=False), f"{PREFIX}-retries")
        from agentloops.controller.teaching.plots import LiveStormChart

        self._chart = LiveStormChart(max_tools=self.tools.max + 1)
        self._runs = _Lru()
        self.chart = _chart_image(self._chart)
        self.table = _classed(widgets.HTML(), f"{PREFIX}-table")
        self._wire([self.tools, self.retries])
        super().__init__([self.tools, self.retries, self.chart, self.table])
        self.add_class(f"{PREFIX}-storm-explorer")
        self.refresh()

    def refresh(self) -> StormState:
        """Run both scopes (once per setting) and redraw."""
        key = (self.tools.value, self.retries.value)
        runs = self._runs.get(key, lambda: storm_runs(*key))
        self._state = StormState(self.tools.value, self.retries.value, runs)
        self.chart.value = self._chart.update(runs, self.retries.value)
        self.table.value = html_table(_("Both scopes, same faults"), _headers(STORM_HEADERS), self._state.rows())
        return self._state


def storm_explorer(tools: int = 2, retries: int = 3) -> StormExplorer:
    """Build the retry-storm explorer (see :class:`StormExplorer`)."""
    return StormExplorer(tools, retries)


# =========================================================================== 13: budgets over many runs


def budget_comparison(n: int = 100, seed: int = 0, *, cap: int | None = None,
                      between: Callable[[], None] | None = None, **budget: float | None) -> LoopComparison:
    """:func:`~agentloops.controller.teaching.experiments.compare_loops`, with the controller's budgets overridden.

    The cap-only loop gets ``cap`` (default: the ``steps`` budget, so both
    loops may take the same number of turns).

    Args:
        n: random cases.
        seed: first seed.
        cap: the cap-only loop's ``max_steps``.
        between: called before each case (the budget explorer's worker waits there while the learner is
            answered).
        budget: budget values for the controller (``steps``, ``retries``, …; ``None`` switches one off).
    """
    rows = []
    steps = budget.get("steps")
    cap = int(cap if cap is not None else (steps if steps is not None else 8))
    for i in range(n):
        if between is not None:
            between()
        case = random_case(seed + i)
        task = case.task()
        limits = task.budget.with_values(**budget) if budget else task.budget
        baseline = run_cap_only(task, case.model(task), case.faults, max_steps=cap)
        run = run_case(case, budget=limits)
        rows.append({
            "seed": case.seed, "case": case.describe(),
            "cap_outcome": baseline.outcome, "cap_steps": baseline.steps, "cap_tool_calls": baseline.tool_calls,
            "ctl_status": run.status, "ctl_code": run.code, "ctl_steps": run.steps,
            "ctl_tool_calls": int(run.usage["tool_calls"]), "ctl_retries": int(run.usage["retries"]),
            "ctl_wall_s": run.usage["wall_time_s"], "ctl_verified": run.stop.verified,
            "ctl_within_budget": all(run.within_budget.values()),
            **{f"ctl_used_{name}": run.usage[name] for name in BUDGET_NAMES},
        })
    return LoopComparison(cap, "default", tuple(rows))


@dataclass(frozen=True)
class BudgetState:
    """The budget explorer's settings and the comparison they produced."""

    budget: Mapping[str, float]
    comparison: LoopComparison

    def text(self) -> str:
        """The counts as text."""
        budget = ", ".join(f"{k}={v:g}" for k, v in self.budget.items())
        head = _("Budget explorer — controller budgets {budgets}; cap-only cap = steps").format(budgets=budget)
        return f"{head}\n{self.comparison}"


class BudgetExplorer(_Panel):
    """Choose the weather task's budgets; see how 100 randomized runs end, against a cap-only loop.

    A setting never shown before costs 2 × ``n`` runs (about half a second), so the settings a learner is
    likely to pick next are computed ahead, runs and chart, while the page is read
    (:mod:`~agentloops.controller.teaching.prewarm`; ``prewarm=False`` computes only what is shown).
    """

    def __init__(self, n: int = 100, seed: int = 0, *, prewarm: bool = True, **budget: int) -> None:
        from agentloops.controller.teaching.plots import LiveBudgetChart
        from agentloops.controller.teaching.prewarm import Prewarm

        self._state: BudgetState | None = None
        self.n, self.seed, self.prewarm = n, seed, prewarm
        defaults = make_task("weather_compare").budget
        self.sliders: dict[str, widgets.IntSlider] = {}
        for name, (low, high, step) in SLIDER_BUDGETS.items():
            value = budget.get(name, defaults.limit(name))  # type: ignore[arg-type]
            start = int(value if value is not None else high)
            self.sliders[name] = _classed(widgets.IntSlider(
                value=start, min=low, max=high, step=step, description=_("budget: {name}").format(name=name),
                style=_STYLE,
                continuous_update=False, layout=widgets.Layout(width="460px")),
                f"{PREFIX}-budget", f"{PREFIX}-budget-{name.replace('_', '-')}")
        self._chart = LiveBudgetChart(n, max_steps=self.sliders["steps"].max)
        self._settings = Prewarm(self._compute)
        self._moved: tuple[int, int] | None = None
        self.chart = _chart_image(self._chart)
        self.table = _classed(widgets.HTML(), f"{PREFIX}-table")
        self._wire(list(self.sliders.values()))
        super().__init__([*self.sliders.values(), self.chart, self.table])
        self.add_class(f"{PREFIX}-budget-explorer")
        self.refresh()

    def _compute(self, key: Hashable) -> tuple[LoopComparison, bytes, str]:
        """One setting's comparison, chart and table (in the kernel's thread, or ahead in the worker)."""
        from agentloops.controller.teaching.prewarm import RENDER_LOCK

        budget = dict(zip(self.sliders, key, strict=True))  # type: ignore[call-overload]
        comparison = budget_comparison(self.n, self.seed, between=self._settings.checkpoint, **budget)
        with RENDER_LOCK:
            png = self._chart.update(comparison)
        return comparison, png, comparison.counts()._repr_html_()

    def _on_change(self, change: Mapping[str, Any]) -> None:
        for index, slider in enumerate(self.sliders.values()):  # which slider moved, and which way: go on so
            if slider is change.get("owner"):
                self._moved = (index, 1 if change["new"] >= change["old"] else -1)
        super()._on_change(change)

    def refresh(self) -> BudgetState:
        """Show the comparison for the slider values (computed once per setting), then work ahead."""
        from agentloops.controller.teaching.prewarm import neighbours

        budget = {name: slider.value for name, slider in self.sliders.items()}
        key = tuple(budget.values())
        comparison, png, table = self._settings.get(key)
        self._state = BudgetState(budget, comparison)
        self.chart.value = png
        self.table.value = table
        if self.prewarm:
            sliders = list(self.sliders.values())
            moved, direction = self._moved if self._moved is not None else (None, 1)
            self._settings.ahead(neighbours(key, [s.step for s in sliders], [s.min for s in sliders],
                                            [s.max for s in sliders], moved, direction))
        return self._state


def budget_explorer(n: int = 100, seed: int = 0, *, prewarm: bool = True, **budget: int) -> BudgetExplorer:
    """Build the budget explorer (see :class:`BudgetExplorer`)."""
    return BudgetExplorer(n, seed, prewarm=prewarm, **budget)


# =========================================================================== 14: replay


@dataclass(frozen=True)
class ReplayState:
    """A recorded run and its replay under another policy."""

    scenario: str
    recorded_policy: str
    replay_policy: str
    recorded: ControllerRun
    replay: Replay

    def text(self) -> str:
        """The replay and its diff as text."""
        head = _("Replay explorer — {scenario}: recorded under {recorded}, replayed under {replayed}").format(
            scenario=self.scenario, recorded=self.recorded_policy, replayed=self.replay_policy)
        return f"{head}\n{self.replay}"


class ReplayExplorer(_Panel):
    """Record a scenario under one policy, replay the same trace under another, and diff the trajectories."""

    def __init__(self, scenario: str = "weather-timeout-always", recorded: str = "default",
                 replayed: str = "degrade") -> None:
        names = controller_scenario_names()
        _check("scenario", scenario, names)
        _check("recorded policy", recorded, list(POLICIES))
        _check("replay policy", replayed, list(POLICIES))
        self._state: ReplayState | None = None
        self.scenario = _classed(widgets.Dropdown(options=names, value=scenario, description=_("scenario"),
                                                  style=_STYLE, layout=_WIDE), f"{PREFIX}-scenario")
        self.recorded = _classed(widgets.ToggleButtons(options=list(POLICIES), value=recorded,
                                                       description=_("recorded under"), style=_STYLE),
                                 f"{PREFIX}-recorded-policy")
        self.replayed = _classed(widgets.ToggleButtons(options=list(POLICIES), value=replayed,
                                                       description=_("replayed under"), style=_STYLE),
                                 f"{PREFIX}-policy")
        self.status = _classed(widgets.HTML(), f"{PREFIX}-status")
        from agentloops.controller.teaching.plots import LiveDiffChart

        self._chart = LiveDiffChart()
        self._replays = _Lru()
        self.chart = _chart_image(self._chart)
        self.table = _classed(widgets.HTML(), f"{PREFIX}-table")
        self._wire([self.scenario, self.recorded, self.replayed])
        super().__init__([self.scenario, self.recorded, self.replayed, self.status, self.chart, self.table])
        self.add_class(f"{PREFIX}-replay-explorer")
        self.refresh()

    def refresh(self) -> ReplayState:
        """Record, replay, diff (once per setting); redraw."""
        recorded = self._replays.get((self.scenario.value, self.recorded.value), lambda: build_controller(
            self.scenario.value, policy=self.recorded.value).run())
        result = self._replays.get((self.scenario.value, self.recorded.value, self.replayed.value),
                                   lambda: replay(recorded, policy=self.replayed.value))
        self._state = ReplayState(self.scenario.value, self.recorded.value, self.replayed.value, recorded, result)
        served = _("{served} tool result(s) served from the recording, {live} ran live").format(
            served=result.served, live=result.diff.unrecorded)
        self.status.value = (f"<div style='font-size:15px'>{_badge(recorded.status)} → {_badge(result.run.status)}"
                             f" — {html.escape(result.diff.summary())}; {html.escape(served)}</div>")
        self.chart.value = self._chart.update(result)
        self.table.value = result.diff._repr_html_()
        return self._state


def replay_explorer(scenario: str = "weather-timeout-always", recorded: str = "default",
                    replayed: str = "degrade") -> ReplayExplorer:
    """Build the replay explorer (see :class:`ReplayExplorer`)."""
    return ReplayExplorer(scenario, recorded, replayed)


# =========================================================================== 15: parallel calls


def parallel_run(minimum: int = 2, s3_latency: float = 2.5, s4_latency: float = 12.0,
                 cancel_at_s: float | None = None, join_timeout_s: float = 10.0) -> ControllerRun:
    """The research-parallel scenario with its join rule, latencies and cancellation changed.

    Four sources are fetched at once: s1 is delivered twice, s2 fails, s3 and
    s4 take the given latencies. ``minimum`` successes satisfy the join (1:
    any, 4: all).
    """
    base = load_controller_scenario("research-parallel")
    task = make_task("research", minimum=minimum, join_timeout_s=join_timeout_s)
    faults = []
    for fault in base.faults:
        source = fault.match.get("source_id")
        if fault.kind == "slow" and source in ("s3", "s4"):
            fault = fault.model_copy(update={"latency_s": s3_latency if source == "s3" else s4_latency})
        faults.append(fault)
    controls = Controls(cancel_at_s=cancel_at_s) if cancel_at_s else None
    return Controller(task, TaskPlanner(task, parallel=True), faults=faults, controls=controls,
                      trace_id="parallel", label="research-parallel").run()


def calls_text(run: ControllerRun) -> str:
    """The calls of a run as text: id, tool, arguments, kind, start, end, arrival, state."""
    rows = [[c.call_id.rsplit("-", 1)[-1], c.tool, c.args, c.kind, f"{c.started_at:g}",
             "" if c.ended_at is None else f"{c.ended_at:g}", "" if c.arrived_at is None else f"{c.arrived_at:g}",
             c.state, c.deliveries] for c in run.calls]
    events = "".join("\n  " + _("{verdict} at {at} s: {call} — {note}").format(
        verdict=e.verdict, at=f"{e.at_s:g}", call=e.call_id.rsplit("-", 1)[-1], note=e.note) for e in run.events)
    refused = "\n" + _("refused deliveries:") + events if events else ""
    return text_table(_headers(CALL_HEADERS), rows) + refused


CALL_HEADERS: tuple[str, ...] = (N_("call"), N_("tool"), N_("args"), N_("kind"), N_("start s"), N_("end s"),
                                 N_("arrived s"), N_("state"), N_("deliveries"))
"""Columns of :func:`calls_text`."""


@dataclass(frozen=True)
class ParallelState:
    """The parallel explorer's settings and run."""

    minimum: int
    s3_latency: float
    s4_latency: float
    cancel_at_s: float | None
    run: ControllerRun

    def text(self) -> str:
        """The run as text."""
        cancel = _("never") if self.cancel_at_s is None else _("at {at} s").format(at=f"{self.cancel_at_s:g}")
        head = _("Parallel explorer — join needs {n} success(es); s3 takes {s3} s, s4 {s4} s; user cancels "
                 "{cancel}").format(n=self.minimum, s3=f"{self.s3_latency:g}", s4=f"{self.s4_latency:g}",
                                    cancel=cancel)
        return f"{head}\n{self.run.headline()}\n{calls_text(self.run)}"


class ParallelExplorer(_Panel):
    """Change the join rule, two latencies and a cancellation time; watch the timeline of parallel calls."""

    def __init__(self, minimum: int = 2, s3_latency: float = 2.5, s4_latency: float = 12.0,
                 cancel_at_s: float = 0.0) -> None:
        self._state: ParallelState | None = None
        self.minimum = _classed(widgets.IntSlider(value=minimum, min=1, max=4, description=_("successes needed"),
                                                  style=_STYLE, continuous_update=False), f"{PREFIX}-join")
        self.s3 = _classed(widgets.FloatSlider(value=s3_latency, min=0.5, max=14.0, step=0.5,
                                               description=_("s3 takes (s)"), style=_STYLE, continuous_update=False),
                           f"{PREFIX}-latency")
        self.s4 = _classed(widgets.FloatSlider(value=s4_latency, min=0.5, max=14.0, step=0.5,
                                               description=_("s4 takes (s)"), style=_STYLE, continuous_update=False),
                           f"{PREFIX}-latency")
        self.cancel = _classed(widgets.FloatSlider(value=cancel_at_s, min=0.0, max=12.0, step=0.5,
                                                   description=_("user cancels at (s; 0 = never)"), style=_STYLE,
                                                   continuous_update=False), f"{PREFIX}-cancel")
        self.status = _classed(widgets.HTML(), f"{PREFIX}-status")
        from agentloops.controller.teaching.plots import LiveGanttChart

        self._chart = LiveGanttChart(max_seconds=self.s4.max + 2)
        self._runs = _Lru()
        self.chart = _chart_image(self._chart)
        self.table = _classed(widgets.HTML(), f"{PREFIX}-table")
        self._wire([self.minimum, self.s3, self.s4, self.cancel])
        super().__init__([self.minimum, self.s3, self.s4, self.cancel, self.status, self.chart, self.table])
        self.add_class(f"{PREFIX}-parallel-explorer")
        self.refresh()

    def refresh(self) -> ParallelState:
        """Run (once per setting) and redraw."""
        cancel = self.cancel.value or None
        key = (self.minimum.value, self.s3.value, self.s4.value, cancel)
        run = self._runs.get(key, lambda: parallel_run(*key))
        self._state = ParallelState(self.minimum.value, self.s3.value, self.s4.value, cancel, run)
        self.status.value = f"<div style='font-size:15px'>{_badge(run.status)} {html.escape(run.headline())}</div>"
        self.chart.value = self._chart.update(run)
        self.table.value = f"<pre>{html.escape(calls_text(run))}</pre>"
        return self._state


def parallel_explorer(minimum: int = 2, s3_latency: float = 2.5, s4_latency: float = 12.0,
                      cancel_at_s: float = 0.0) -> ParallelExplorer:
    """Build the parallel-calls explorer (see :class:`ParallelExplorer`); ``cancel_at_s=0`` means never."""
    return ParallelExplorer(minimum, s3_latency, s4_latency, cancel_at_s)


# =========================================================================== 16: context


RESEARCH_BUDGET: dict[str, Any] = {"steps": 10, "model_calls": 10, "tool_calls": 10, "wall_time_s": 100,
                                   "tokens": 30000}
"""The budgets of the compaction scenarios: six reads in a row fit, and the context budget stays the task's."""


def context_run(offload_over_tokens: int | None = 150, compact_over_tokens: int | None = None,
                keep_recent_turns: int = 1, compactor: str = "state", check_compaction: bool = True,
                send_state: bool = False, label: str | None = None) -> ControllerRun:
    """Read six sources one at a time, with the given context controls.

    The planner plans from what it can see (``use_state`` follows
    ``send_state``), so a memory that drops finished work sends it back to
    work it has done.

    Args:
        offload_over_tokens: store tool outputs larger than this outside the context (``None``: never).
        compact_over_tokens: compact requests larger than this (``None``: never).
        keep_recent_turns: turns a compaction keeps verbatim.
        compactor: ``state`` (the memory written from task state) or ``careless``.
        check_compaction: check every memory against the state and refuse one that drops something.
        send_state: send the TASK STATE block every turn.
        label: the run's label.
    """
    if compactor not in ("state", "careless"):
        raise ConfigError(_("unknown compactor {compactor!r}; expected one of: state, careless").format(
            compactor=compactor))
    task = make_task("research", sources=["s1", "s2", "s3", "s4", "s5", "s6"], minimum=6, budget=RESEARCH_BUDGET)
    context = ContextPolicy(offload_over_tokens=offload_over_tokens, compact_over_tokens=compact_over_tokens,
                            keep_recent_turns=keep_recent_turns, check_compaction=check_compaction)
    name = label or "this configuration"
    return Controller(task, TaskPlanner(task, use_state=send_state), context=context, send_state=send_state,
                      compactor=careless_compactor if compactor == "careless" else memory_from_state,
                      trace_id=name, label=name).run()


CONTEXT_HEADERS: tuple[str, ...] = (N_("turn"), N_("request tokens"), N_("compaction"), N_("action"),
                                    N_("state delta"))
"""Columns of :meth:`ContextState.rows`."""


@dataclass(frozen=True)
class ContextState:
    """The context explorer's run and the uncontrolled baseline."""

    settings: Mapping[str, Any]
    run: ControllerRun
    baseline: ControllerRun

    def rows(self) -> list[list[Any]]:
        """One row per turn: request size, compaction, action."""
        out = []
        for t in self.run.turns:
            comp = t.compaction
            note = "" if not comp else (
                _("compacted {turns} turn(s), {before}→{after} tokens, {used}").format(
                    turns=comp["turns_compacted"], before=comp["tokens_before"], after=comp["tokens_after"],
                    used=comp["used"])
                + ("" if comp["ok"] else _("; dropped {n} item(s)").format(n=len(comp["dropped"]))))
            out.append([t.turn, t.context_tokens, note, clip(t.action, 40), clip(t.delta_text(), 50)])
        return out

    def text(self) -> str:
        """The run as text."""
        settings = ", ".join(f"{k}={v}" for k, v in self.settings.items())
        head = _("Context explorer — {settings}\nthis configuration: {run}\nbaseline (no storage, no compaction): "
                 "{baseline}").format(settings=settings, run=self.run.headline(), baseline=self.baseline.headline())
        return f"{head}\n" + text_table(_headers(CONTEXT_HEADERS), self.rows())


class ContextExplorer(_Panel):
    """Store big outputs outside the context, compact, check the memory: watch the request size and the path."""

    def __init__(self, offload_over_tokens: int | None = 150, compact_over_tokens: int | None = 300,
                 keep_recent_turns: int = 1, compactor: str = "careless", check_compaction: bool = False,
                 send_state: bool = False) -> None:
        self._state: ContextState | None = None
        def over(n: int) -> tuple[str, int]:
            return _("> {n} tokens").format(n=n), n

        self.offload = _classed(widgets.Dropdown(options=[(_("never"), None), over(150), over(400)],
                                                 value=offload_over_tokens, description=_("store outside"),
                                                 style=_STYLE), f"{PREFIX}-offload")
        self.compact = _classed(widgets.Dropdown(options=[(_("never"), None), over(300), over(600), over(1000)],
                                                 value=compact_over_tokens, description=_("compact when"),
                                                 style=_STYLE), f"{PREFIX}-compact")
        self.keep = _classed(widgets.IntSlider(value=keep_recent_turns, min=0, max=3,
                                               description=_("keep recent turns"), style=_STYLE,
                                               continuous_update=False), f"{PREFIX}-keep")
        self.compactor = _classed(widgets.ToggleButtons(options=["state", "careless"], value=compactor,
                                                        description=_("compactor"), style=_STYLE),
                                  f"{PREFIX}-compactor")
        self.check = _classed(widgets.Checkbox(value=check_compaction, description=_("check each memory"),
                                               style=_STYLE, indent=False), f"{PREFIX}-check")
        self.state_block = _classed(widgets.Checkbox(value=send_state, description=_("send the TASK STATE block"),
                                                    style=_STYLE, indent=False), f"{PREFIX}-send-state")
        self.status = _classed(widgets.HTML(), f"{PREFIX}-status")
        from agentloops.controller.teaching.plots import LiveContextChart

        self._chart = LiveContextChart(max_turns=int(RESEARCH_BUDGET["steps"]))
        self._runs = _Lru()
        self.chart = _chart_image(self._chart)
        self.table = _classed(widgets.HTML(), f"{PREFIX}-table")
        self._wire([self.offload, self.compact, self.keep, self.compactor, self.check, self.state_block])
        super().__init__([self.offload, self.compact, self.keep, self.compactor,
                          widgets.HBox([self.check, self.state_block]), self.status, self.chart, self.table])
        self.add_class(f"{PREFIX}-context-explorer")
        self.refresh()

    def refresh(self) -> ContextState:
        """Run (once per setting; the baseline once per TASK STATE setting) and redraw."""
        settings = {"offload_over_tokens": self.offload.value, "compact_over_tokens": self.compact.value,
                    "keep_recent_turns": self.keep.value, "compactor": self.compactor.value,
                    "check_compaction": self.check.value, "send_state": self.state_block.value}
        run = self._runs.get(tuple(settings.values()), lambda: context_run(**settings))
        send = bool(self.state_block.value)
        baseline = self._runs.get(("baseline", send), lambda: context_run(None, None, send_state=send,
                                                                          label="no storage, no compaction"))
        self._state = ContextState(settings, run, baseline)
        limit = run.task.budget.limit("context_tokens")
        self.status.value = (f"<div style='font-size:15px'>{_badge(run.status)} {html.escape(run.headline())}</div>"
                             f"<div style='font-size:14px'>{_actions_html(run)}</div>")
        self.chart.value = self._chart.update(run, baseline, limit)
        self.table.value = html_table(_("Turn by turn"), _headers(CONTEXT_HEADERS), self._state.rows())
        return self._state


def context_explorer(offload_over_tokens: int | None = 150, compact_over_tokens: int | None = 300,
                     keep_recent_turns: int = 1, compactor: str = "careless", check_compaction: bool = False,
                     send_state: bool = False) -> ContextExplorer:
    """Build the context explorer (see :class:`ContextExplorer`); it opens on the careless, unchecked compaction."""
    return ContextExplorer(offload_over_tokens, compact_over_tokens, keep_recent_turns, compactor, check_compaction,
                           send_state)


# =========================================================================== checks


def _check(name: str, value: object, allowed: Sequence[Any]) -> None:
    if value not in allowed:
        raise ConfigError(_("unknown {name} {value!r}; expected one of: {names}").format(
            name=name, value=value, names=", ".join(map(str, allowed))))


BUILDERS: dict[str, Callable[[], _Panel]] = {  # every one has a live chart, at .chart and ._chart
    "controller_explorer": controller_explorer,
    "state_explorer": state_explorer,
    "claims_explorer": claims_explorer,
    "storm_explorer": storm_explorer,
    "budget_explorer": budget_explorer,
    "replay_explorer": replay_explorer,
    "parallel_explorer": parallel_explorer,
    "context_explorer": context_explorer,
}
"""Every widget builder by name (tests and the benchmark iterate over them)."""

__all__ = [
    "BUILDERS",
    "FAULT_CHOICES",
    "SIX_FAULTS",
    "STORM_HEADERS",
    "BudgetExplorer",
    "ClaimsExplorer",
    "ContextExplorer",
    "ControllerExplorer",
    "ControllerExplorerState",
    "FaultChoice",
    "ParallelExplorer",
    "ReplayExplorer",
    "StateExplorer",
    "StormExplorer",
    "StormState",
    "budget_comparison",
    "budget_explorer",
    "calls_text",
    "claim_counts",
    "claims_explorer",
    "context_explorer",
    "context_run",
    "controller_explorer",
    "fallback_chain",
    "fault_target",
    "inject",
    "parallel_explorer",
    "parallel_run",
    "replay_explorer",
    "route_row",
    "routes",
    "state_explorer",
    "state_run",
    "stop_html",
    "stop_text",
    "storm_explorer",
    "storm_rows",
    "storm_runs",
    "turn_rows",
    "turns_html",
    "turns_text",
]

