"""A provider explorer: pick a provider and a scenario, see the normalised rounds and every criterion's result.

:func:`provider_explorer` returns an ipywidgets box that draws itself once
with its defaults (no click needed) and redraws on every change. Its plain-text
form is the same report as a text table, so a notebook executed headless
(nbclient, CI, ``jupyter nbconvert --to markdown``) shows the tables instead
of an empty widget placeholder. Without ipywidgets installed it returns the
text report object.

The table builders (:func:`rounds_rows`, :func:`criteria_rows`) are plain
functions, testable without a front-end.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Any

from agentloops.comparison import compare
from agentloops.criteria import CRITERION_NAMES
from agentloops.providers import FORMAT_TITLES, FORMATS
from agentloops.response import show_content
from agentloops.scenario import Scenario, list_scenarios, load_scenario
from agentloops.tables import text_table

ROUND_HEADERS = ("round", "raw stop value", "normalised", "content", "tool calls")
CRITERIA_HEADERS = ("criterion", "steps", "tools run", "how it ended")


def provider_scenarios(format: str) -> list[Scenario]:
    """The shipped scenarios in ``format``, in file order."""
    return [s for s in list_scenarios(["provider"]) if s.format == format]


def rounds_rows(scenario: Scenario) -> list[list[str]]:
    """One row per scripted round: the raw stop value next to what the adapter made of it."""
    rows = []
    for i, response in enumerate(scenario.responses, start=1):
        calls = ", ".join(f"{c.name}({c.arguments})" for c in response.tool_calls) or "—"
        raw = response.raw_finish_reason if response.raw_finish_reason is not None else "(absent)"
        rows.append([str(i), raw, response.finish_reason, show_content(response.content, 36), calls])
    return rows


def criteria_rows(scenario: Scenario, max_steps: int = 8) -> list[list[str]]:
    """One row per criterion: steps, tools run, and how the run ended."""
    table = compare([scenario], CRITERION_NAMES, max_steps)
    rows = []
    for record in table.records:
        steps = f"{record.steps}" + (" (cap)" if record.hit_cap else "")
        ending = f"raises {record.error}" if record.error else record.outcome.replace("_", " ")
        rows.append([record.criterion, steps, " ".join(record.tools_executed) or "—", ending])
    return rows


def report_text(scenario: Scenario, max_steps: int = 8) -> str:
    """The explorer's content as text tables."""
    head = f"{scenario.name} ({scenario.format}): {scenario.title}"
    return "\n\n".join([
        head,
        text_table(ROUND_HEADERS, rounds_rows(scenario)),
        text_table(CRITERIA_HEADERS, criteria_rows(scenario, max_steps)),
    ])


def report_html(scenario: Scenario, max_steps: int = 8) -> str:
    """The explorer's content as HTML tables."""

    def table(headers: tuple[str, ...], rows: list[list[str]]) -> str:
        head = "".join(f"<th style='text-align:left'>{html.escape(h)}</th>" for h in headers)
        body = "".join("<tr>" + "".join(f"<td style='text-align:left'>{html.escape(c)}</td>" for c in row) + "</tr>"
                       for row in rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    return (f"<p><b>{html.escape(scenario.title)}</b> — {html.escape(scenario.teaches)}</p>"
            f"<p><i>Rounds as the adapter normalised them</i></p>{table(ROUND_HEADERS, rounds_rows(scenario))}"
            f"<p><i>Every criterion on these rounds (cap {max_steps})</i></p>"
            f"{table(CRITERIA_HEADERS, criteria_rows(scenario, max_steps))}")


@dataclass(frozen=True)
class ProviderReport:
    """The explorer's output without a widget: text in terminals, HTML in notebooks."""

    scenario: Scenario
    max_steps: int = 8

    def __str__(self) -> str:
        return report_text(self.scenario, self.max_steps)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return report_html(self.scenario, self.max_steps)


def _default_scenario(format: str) -> Scenario:
    found = provider_scenarios(format)
    if not found:
        raise ValueError(f"no shipped scenario in format {format!r}")
    return found[0]


def provider_explorer(format: str = "gemini", scenario: str | Scenario | None = None, max_steps: int = 8) -> Any:
    """Pick a provider and a scenario; see the normalised rounds, a raw body, and every criterion's result.

    Args:
        format: the provider format shown first (one of :data:`~agentloops.providers.FORMATS`).
        scenario: the scenario shown first (default: the format's first shipped scenario).
        max_steps: the cap for every run.

    Returns:
        An ipywidgets ``VBox`` whose plain-text form is the text report, or a
        :class:`ProviderReport` when ipywidgets is not installed.
    """
    if format not in FORMATS:
        raise ValueError(f"unknown provider format {format!r}; expected one of: {', '.join(FORMATS)}")
    chosen = load_scenario(scenario) if scenario is not None else _default_scenario(format)
    try:
        import ipywidgets as widgets
    except ImportError:  # pragma: no cover - ipywidgets is a core dependency
        return ProviderReport(chosen, max_steps)
    return _build(widgets, chosen.format if chosen.format in FORMATS else format, chosen, max_steps)


def _build(widgets: Any, format: str, chosen: Scenario, max_steps: int) -> Any:
    class ProviderExplorer(widgets.VBox):  # type: ignore[misc, name-defined]
        """The explorer box; headless, its text form is the report."""

        def _repr_mimebundle_(self, **kwargs: Any) -> Any:
            data = super()._repr_mimebundle_(**kwargs)
            if data is None:  # a closed widget has no view; the text still stands
                return {"text/plain": report_text(state["scenario"], max_steps)}
            if isinstance(data, tuple):  # (data, metadata)
                data[0]["text/plain"] = report_text(state["scenario"], max_steps)
                return data
            data["text/plain"] = report_text(state["scenario"], max_steps)
            return data

        @property
        def scenario(self) -> Scenario:
            """The scenario on show."""
            return state["scenario"]

        def report(self) -> str:
            """What the explorer shows, as text."""
            return report_text(state["scenario"], max_steps)

    state: dict[str, Scenario] = {"scenario": chosen}
    provider = widgets.Dropdown(options=[(FORMAT_TITLES[f], f) for f in FORMATS], value=format,
                                description="provider")
    picker = widgets.Dropdown(options=[(s.title, s.name) for s in provider_scenarios(format)] or [(chosen.title,
                                                                                                    chosen.name)],
                              value=chosen.name, description="scenario", layout=widgets.Layout(width="40em"))
    round_pick = widgets.Dropdown(description="raw body of", layout=widgets.Layout(width="16em"))
    tables = widgets.HTML()
    raw_view = widgets.HTML()

    def show_raw(*_: Any) -> None:
        scenario = state["scenario"]
        index = round_pick.value or 0
        body = scenario.raw_responses[index] if index < len(scenario.raw_responses) else None
        text = json.dumps(body, ensure_ascii=False, indent=2) if body is not None else "(no raw body)"
        raw_view.value = f"<pre style='max-height:22em;overflow:auto'>{html.escape(text)}</pre>"

    def redraw(*_: Any) -> None:
        scenario = state["scenario"]
        tables.value = report_html(scenario, max_steps)
        round_pick.options = [(f"round {i + 1}", i) for i in range(len(scenario.responses))]
        round_pick.value = 0
        show_raw()

    def on_scenario(change: dict[str, Any]) -> None:
        if change.get("new"):
            state["scenario"] = load_scenario(change["new"])
            redraw()

    def on_provider(change: dict[str, Any]) -> None:
        options = [(s.title, s.name) for s in provider_scenarios(change["new"])]
        picker.options = options
        if options:
            picker.value = options[0][1]

    picker.observe(on_scenario, names="value")
    provider.observe(on_provider, names="value")
    round_pick.observe(show_raw, names="value")
    redraw()
    return ProviderExplorer([widgets.HBox([provider, picker]), tables, round_pick, raw_view])


__all__ = [
    "CRITERIA_HEADERS",
    "ROUND_HEADERS",
    "ProviderReport",
    "criteria_rows",
    "provider_explorer",
    "provider_scenarios",
    "report_html",
    "report_text",
    "rounds_rows",
]
