"""What every controller widget shares: CSS classes and widths, the chart image, the turn and stop tables, the
panel that wires controls to a redraw (and computes what is shown ahead of the learner), and argument checks."""


from __future__ import annotations

import html
import json
import math
from collections.abc import Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as widgets

from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.teaching.prewarm import (
    RENDER_LOCK,
    WHOLE_GRID,
    Prewarm,
    neighbours,
    one_move,
    whole_grid,
)
from agentloops.controller.vocabulary.errors import ConfigError
from agentloops.controller.vocabulary.readback import read_back
from agentloops.controller.vocabulary.render import clip, html_table
from agentloops.i18n import N_, _, language, shown
from agentloops.tables import text_table

PREFIX = "agentloops-ctl"
"""CSS class prefix of the controller widgets."""

_STYLE = {"description_width": "150px"}
_WIDE = widgets.Layout(width="560px")
_MENU = widgets.Layout(width="440px")
"""A menu of short labels: room after the 150 px description for "as the scenario says" (and its Chinese)."""


def _classed(widget: Any, *classes: str) -> Any:
    for name in classes:
        widget.add_class(name)
    return widget


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
    return [[t.turn, f"v{t.state_version}→v{t.state_version_after}", t.pending_goal, clip(read_back(t.action), width),
             clip(t.tool_status, 40), clip(t.delta_shown(), width), clip(read_back(t.decision), 50)]
            for t in run.turns]


def turns_html(run: ControllerRun) -> str:
    """The per-turn table as HTML; turns that changed the state are highlighted."""
    changed = [t.state_version_after != t.state_version for t in run.turns]
    return html_table(_("{label}: one row per turn (highlighted: the state changed)").format(label=shown(run.label)),
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
            f"<code>{html.escape(json.dumps(record, ensure_ascii=False, indent=1))}</code></pre></div></div>")


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
    """One table row about a run's routing: tool statuses, routes, how it ended, retries spent (keyed in the
    language in use: the row is for display)."""
    taken = routes(run)
    return {_("tool statuses"): " → ".join(s for _label, s, _route in taken),
            _("routes"): " → ".join(r for _label, _status, r in taken),
            _("ends as"): f"{run.status} ({run.code})", _("retries"): int(run.usage["retries"])}


PREWARM = True
"""Whether a widget built from now on works ahead (:class:`_Panel`); tests that read a chart's artists switch it
off, since with it the figure holds whatever the worker drew last."""

VIEWS = 96
"""Views a widget keeps at least (each: the state, one PNG of about 40 kB and its HTML), least recently used
dropped; a widget keeps twice what it works ahead (:meth:`_Panel._ahead_count`), so nothing it computed ahead
is dropped before the learner can pick it."""


@dataclass(frozen=True)
class _View:
    """Everything one setting of the controls shows, computed once: the state, the chart's PNG, and the HTML
    of the widget's other outputs (attribute name → value)."""

    state: Any
    png: bytes
    html: Mapping[str, str] = field(default_factory=dict)


def positions(control: widgets.ValueWidget) -> list[Hashable]:
    """Every value ``control`` can take, in order (a slider's on its step; a check box: off, on)."""
    if isinstance(control, widgets.Checkbox):
        return [False, True]
    if isinstance(control, (widgets.IntSlider, widgets.FloatSlider)):
        count = round((control.max - control.min) / control.step) + 1
        return [_keyed(control.min + i * control.step) for i in range(count)]
    return list(getattr(control, "_options_values", (control.value,)))


def _keyed(value: Any) -> Any:
    """A control's value as a cache key: a float rounded, so 0.1 + 0.2 and 0.3 are one setting."""
    return round(value, 6) if isinstance(value, float) else value


def _nearest_first(count: int, at: int) -> list[int]:
    """Positions ``0 … count - 1`` but ``at``, nearest to it first (the lower one first on a tie)."""
    return sorted((j for j in range(count) if j != at), key=lambda j: (abs(j - at), j))


class _Panel(widgets.VBox):
    """Plumbing shared by the widgets: controls → :meth:`refresh` → :attr:`state`, HTML, PNG, text.

    A user feels the time a control takes to answer, and drawing a chart costs more than the 100 ms a
    control may take on a loaded two-core laptop. So what a setting of the controls shows (:class:`_View`:
    the runs, the chart's PNG, the tables) is computed once, by :meth:`_view`, and kept (:attr:`_views`, the
    :data:`VIEWS` last used); while the page is read, a worker thread computes the settings a learner is
    likely to pick next (:mod:`~agentloops.controller.teaching.prewarm`): the control just moved, three
    positions on the same way and one back; every other control one position either way; the rest of the
    moved control's range; every option of every menu; then every position of every control, its ends first
    (a far jump); and, when all the controls together have at most :data:`.prewarm.WHOLE_GRID` settings, every
    one of them. A change to such a setting only swaps in what was computed.
    """

    def _wire(self, controls: Sequence[widgets.ValueWidget], keyed: Sequence[widgets.ValueWidget] | None = None,
              *, prewarm: bool | None = None) -> None:
        """Redraw on a change of ``controls``; a view is keyed by the values of ``keyed`` (default: the same)."""
        self._syncing = False
        self._keyed = list(keyed if keyed is not None else controls)
        self._moved: tuple[int, int] | None = None
        self.prewarm = PREWARM if prewarm is None else prewarm
        self._views = Prewarm(self._locked_view, size=max(VIEWS, 2 * self._ahead_count()))
        for control in controls:
            control.observe(self._on_change, names="value")

    def _on_change(self, change: Mapping[str, Any]) -> None:
        owner = change.get("owner")
        if owner in self._keyed:  # which control moved, and which way: the worker goes on so
            index, options = self._keyed.index(owner), positions(owner)
            old, new = _keyed(change["old"]), _keyed(change["new"])
            if old in options and new in options:
                self._moved = (index, 1 if options.index(new) >= options.index(old) else -1)
        if not self._syncing:
            self.refresh()

    def _key(self) -> tuple[Hashable, ...]:
        """The controls' values, and the language (a view's tables and labels are in it)."""
        return (*(_keyed(c.value) for c in self._keyed), language())

    def _locked_view(self, key: Hashable) -> _View:
        view = self._view(key[:-1])  # type: ignore[index]
        if key[-1] != language():  # type: ignore[index]  # the language changed while it was drawn: not kept
            raise LookupError(key)
        return view

    def _between(self) -> None:
        """A pause point of :meth:`_view`, between its runs: in the worker, the learner's answer goes first (and a
        setting the learner moved away from is dropped here); in the kernel's thread, nothing."""
        self._views.checkpoint()

    def _draw(self, *data: Any) -> bytes:
        """The chart's PNG for ``data``, after a pause point; drawn by one thread at a time (the worker's, or the
        kernel's on a miss), and only the drawing: a learner's pick never waits for the worker's runs."""
        self._between()
        with RENDER_LOCK:
            return bytes(self._chart.update(*data))

    def _view(self, key: tuple[Any, ...]) -> _View:  # pragma: no cover - every subclass defines it
        """What the controls' values ``key`` show (runs, chart, tables); reads no control (the worker calls it).
        It draws with :meth:`_draw`, and calls :meth:`_between` between its runs."""
        raise NotImplementedError

    def refresh(self) -> Any:
        """Show what the controls' current values show (computed now, or taken from what was computed ahead),
        then work ahead."""
        key = self._key()
        view = self._views.get(key)
        with self._views.answering():  # every worker waits until the page has what it shows
            self._state = view.state
            self.chart.value = view.png
            for name, value in view.html.items():
                getattr(self, name).value = value
        if self.prewarm:
            self._views.ahead(self._next_keys(key))
        return self._state

    def _ahead_count(self) -> int:
        """How many settings the widget works ahead: every other one of a small grid, else every one a single
        move away."""
        lengths = [len(positions(c)) for c in self._keyed]
        grid = math.prod(lengths)
        return grid - 1 if grid <= WHOLE_GRID else sum(lengths) - len(lengths)

    def _next_keys(self, key: tuple[Hashable, ...]) -> list[tuple[Hashable, ...]]:
        """The settings likely next, most likely first (see :func:`.prewarm.neighbours`), then every setting one
        move away (:func:`.prewarm.one_move`), then, on a small grid, every other (:func:`.prewarm.whole_grid`)."""
        lines = [positions(c) for c in self._keyed]
        if any(value not in line for value, line in zip(key, lines, strict=False)):
            return []  # a value set from code off the controls' grid: nothing to guess from
        at = tuple(line.index(value) for value, line in zip(key, lines, strict=False))
        moved, direction = self._moved if self._moved is not None else (None, 1)
        reach = max(map(len, lines))  # the control just moved: in the end, all the way either way
        near = neighbours(at, [1] * len(at), [0] * len(at), [len(line) - 1 for line in lines], moved, direction,
                          reach=reach, back=reach)
        menus = [(*at[:i], j, *at[i + 1:]) for i, control in enumerate(self._keyed)  # a menu is read as a whole:
                 if isinstance(control, (widgets.Dropdown, widgets.ToggleButtons))  # any of it may be next
                 for j in _nearest_first(len(lines[i]), at[i])]
        lengths = [len(line) for line in lines]
        rest = whole_grid(at, lengths) if math.prod(lengths) <= WHOLE_GRID else []
        return [(*(line[i] for line, i in zip(lines, found, strict=True)), key[-1])
                for found in dict.fromkeys([*near, *menus, *one_move(at, lengths), *rest])]

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


def _check(name: str, value: object, allowed: Sequence[Any]) -> None:
    if value not in allowed:
        raise ConfigError(_("unknown {name} {value!r}; expected one of: {names}").format(
            name=name, value=value, names=", ".join(map(str, allowed))))
