"""What every controller widget shares: CSS classes and widths, the LRU of computed states, the chart image,
the turn and stop tables, the panel that wires controls to a redraw, and argument checks."""


from __future__ import annotations

import html
import json
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import ipywidgets as widgets

from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.vocabulary.errors import ConfigError
from agentloops.controller.vocabulary.render import clip, html_table
from agentloops.i18n import N_, _
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


def _check(name: str, value: object, allowed: Sequence[Any]) -> None:
    if value not in allowed:
        raise ConfigError(_("unknown {name} {value!r}; expected one of: {names}").format(
            name=name, value=value, names=", ".join(map(str, allowed))))
