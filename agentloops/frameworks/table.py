"""The framework table: every framework's own loop on the package's abnormal scenarios, computed or shipped.

:func:`compute_table` runs each framework that is installed (the optional
``agentloops[frameworks]`` extra) plus the package's own correct loop as the
reference row; :func:`shipped_table` reads the same table from
``data/frameworks/results.json``, written by :func:`compute_table` and
:func:`save_table`, so the notebook and ``agentloops frameworks`` render it
without the extra. Every row names the version it was computed with.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from agentloops.errors import UsageError, describe_validation_error
from agentloops.frameworks.script import Got, Outcome
from agentloops.i18n import N_, _, ngettext
from agentloops.resources import data_dir
from agentloops.scenario import load_scenario
from agentloops.tables import markdown_table, text_table

if TYPE_CHECKING:
    import pandas as pd

SCENARIOS: tuple[str, ...] = ("normal", "truncated", "talk-and-call", "content-filter", "cut-off-arguments",
                              "tool-call-with-stop")
"""The scenarios of the table: a normal run for reference, then the five that split naive loops."""

RUNNERS: dict[str, str] = {
    "LangGraph": "agentloops.frameworks.run_langgraph",
    "OpenAI Agents SDK": "agentloops.frameworks.run_openai_agents",
    "Pydantic AI": "agentloops.frameworks.run_pydantic_ai",
}
"""Framework name → the module whose ``run(scenario)`` drives it."""

REFERENCE = "agentloops correct loop"
"""The reference row: the package's own correct loop on the same scenarios."""

FRAMEWORK_PACKAGES: dict[str, str] = {"LangGraph": "langgraph", "OpenAI Agents SDK": "openai-agents",
                                      "Pydantic AI": "pydantic-ai-slim", REFERENCE: "agentloops"}


class FrameworksError(UsageError, ValueError):
    """The shipped or given results file is malformed, or a framework cannot be run."""


class FrameworkTable(BaseModel):
    """Outcomes of every framework on every scenario of :data:`SCENARIOS`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scenarios: tuple[str, ...]
    outcomes: tuple[Outcome, ...]

    def frameworks(self) -> list[str]:
        """The frameworks in the table, in row order."""
        return list(dict.fromkeys(o.framework for o in self.outcomes))

    def get(self, framework: str, scenario: str) -> Outcome | None:
        """One cell's outcome, or ``None`` when it was not computed."""
        return next((o for o in self.outcomes if o.framework == framework and o.scenario == scenario), None)

    def rows(self) -> list[list[str]]:
        """One row per framework (named with its version), one cell per scenario, in the language in use."""
        rows = []
        for name in self.frameworks():
            first = next(o for o in self.outcomes if o.framework == name)
            rows.append([f"{name} {first.version}"] + [cell(self.get(name, s)) for s in self.scenarios])
        return rows

    def render(self, fmt: Literal["text", "markdown", "json"] = "text") -> str:
        """The table as aligned text or Markdown in the language in use, or JSON (always English: it is data)."""
        if fmt == "json":
            return self.model_dump_json(indent=2)
        headers = [_("framework"), *self.scenarios]
        return markdown_table(headers, self.rows()) if fmt == "markdown" else text_table(headers, self.rows())

    def to_frame(self) -> pd.DataFrame:
        """One row per (framework, scenario)."""
        import pandas as pd

        return pd.DataFrame([o.model_dump() for o in self.outcomes])

    def __str__(self) -> str:
        return self.render()


GOT_LABELS: dict[Got, str] = {"answer": N_("answer"), "empty answer": N_("empty answer")}
"""What the caller got, in words (English here, shown through ``_()``); an exception is named by its type."""


def cell(outcome: Outcome | None) -> str:
    """One cell in the language in use: model calls, tools run, and what the caller got (the exception's type)."""
    if outcome is None:
        return _("(not computed)")
    calls = ngettext("{n} call", "{n} calls", outcome.model_calls).format(n=outcome.model_calls)
    got = (_("raises {error}").format(error=outcome.detail.split(":")[0]) if outcome.got == "exception"
           else _(GOT_LABELS[outcome.got]))
    return _("{calls}  tools[{tools}]  {got}").format(calls=calls, tools=" ".join(outcome.tools_run), got=got)


def installed(framework: str) -> str | None:
    """The installed version of ``framework``'s package, or ``None``."""
    try:
        return version(FRAMEWORK_PACKAGES[framework])
    except PackageNotFoundError:
        return None


def reference_outcome(scenario: str) -> Outcome:
    """The package's correct loop on ``scenario``, as a table row."""
    from agentloops import run

    record = run(scenario, criterion="correct")
    got: Got = "exception" if record.error else "answer" if record.answer else "empty answer"
    detail = f"{record.error}: {record.error_message}" if record.error else repr(record.answer or "")
    return Outcome(framework=REFERENCE, version=installed(REFERENCE) or "0", scenario=scenario,
                   model_calls=record.steps, tools_run=record.tools_executed, got=got, detail=detail[:120])


def compute_table(frameworks: Sequence[str] | None = None, scenarios: Sequence[str] = SCENARIOS) -> FrameworkTable:
    """Run every installed framework (or those named) on ``scenarios``; the reference row always comes first.

    Raises:
        FrameworksError: a named framework is unknown or not installed.
    """
    names = list(frameworks) if frameworks is not None else [n for n in RUNNERS if installed(n)]
    for name in names:
        if name not in RUNNERS:
            raise FrameworksError(_("unknown framework {name}; expected one of: {names}").format(
                name=repr(name), names=", ".join(RUNNERS)))
        if not installed(name):
            raise FrameworksError(_("{name} is not installed; pip install 'agentloops[frameworks]'").format(name=name))
    outcomes = [reference_outcome(s) for s in scenarios]
    for name in names:
        runner = importlib.import_module(RUNNERS[name])
        outcomes += [runner.run(load_scenario(s)) for s in scenarios]
    return FrameworkTable(scenarios=tuple(scenarios), outcomes=tuple(outcomes))


def results_path() -> Path:
    """Where the shipped results live."""
    return data_dir() / "frameworks" / "results.json"


def shipped_table(path: str | Path | None = None) -> FrameworkTable:
    """The table as shipped (written by ``agentloops frameworks --recompute --save``), readable without the extra."""
    target = Path(path) if path is not None else results_path()
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FrameworksError(_("{path}: cannot read the framework results: {reason}").format(
            path=target, reason=exc.strerror or exc)) from None
    except ValueError as exc:
        raise FrameworksError(_("{path}: not valid JSON: {reason}").format(path=target, reason=exc)) from None
    try:
        return FrameworkTable.model_validate(data)
    except ValidationError as exc:
        raise FrameworksError(f"{target}: {describe_validation_error(exc)}") from None


def save_table(table: FrameworkTable, path: str | Path | None = None) -> Path:
    """Write ``table`` as the shipped results file."""
    target = Path(path) if path is not None else results_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(table.model_dump_json(indent=1) + "\n", encoding="utf-8")
    return target
