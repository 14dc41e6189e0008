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

from agentloops.comparison import compact
from agentloops.errors import UsageError, describe_validation_error
from agentloops.frameworks.script import Got, Outcome
from agentloops.i18n import N_, Phrase, _, ngettext
from agentloops.resources import data_dir
from agentloops.scenario import Scenario, load_scenario
from agentloops.tables import markdown_table, text_table

if TYPE_CHECKING:
    import pandas as pd

SCENARIOS: tuple[str, ...] = ("normal", "truncated", "talk-and-call", "content-filter", "cut-off-arguments",
                              "tool-call-with-stop", "truncated-partial", "content-filter-partial", "repeat-forever")
"""The scenarios of the table: a normal run for reference, the five that split naive loops, then the field's
commonest cut (partial text cut by the limit), partial text a filter stopped, and a model that repeats one call
forever (only a cap stops it)."""

FRAMEWORK_SCENARIOS: tuple[str, ...] = ("content-filter-partial", "repeat-forever")
"""The table's scenarios that are not shipped scenarios: their files live in ``data/frameworks/scenarios/``."""

RUNNERS: dict[str, str] = {
    "LangGraph": "agentloops.frameworks.run_langgraph",
    "LangGraph prebuilt agent": "agentloops.frameworks.run_langgraph_prebuilt",
    "LangChain create_agent": "agentloops.frameworks.run_langchain",
    "OpenAI Agents SDK": "agentloops.frameworks.run_openai_agents",
    "Pydantic AI": "agentloops.frameworks.run_pydantic_ai",
}
"""Framework name → the module whose ``run(scenario, limit)`` drives it (and whose ``LIMIT`` and ``SMALL`` name
its cap and the small value the table also runs)."""

REFERENCE = "agentloops correct loop"
"""The reference row: the package's own correct loop on the same scenarios."""

FRAMEWORK_PACKAGES: dict[str, str] = {"LangGraph": "langgraph", "LangGraph prebuilt agent": "langgraph",
                                      "LangChain create_agent": "langchain", "OpenAI Agents SDK": "openai-agents",
                                      "Pydantic AI": "pydantic-ai-slim", REFERENCE: "agentloops"}

SLOW: frozenset[tuple[str, str]] = frozenset({("LangGraph", "repeat-forever"),
                                             ("LangGraph prebuilt agent", "repeat-forever"),
                                             ("LangChain create_agent", "repeat-forever")})
"""(framework, scenario) pairs whose default-cap run is slow: LangGraph's default ``recursion_limit`` (10007 in the
version named) lets an endless repeat make 5004 model calls, several minutes per run. They are computed with
``--full`` only; a table computed without it keeps the shipped cells for them (see :func:`merge_slow`)."""

CAP_SWEEP_FRAMEWORK = "LangGraph prebuilt agent"
CAP_SWEEP_SCENARIO = "repeat-forever"
CAP_SWEEP_LIMITS: tuple[int, ...] = tuple(range(4, 13))
"""The prebuilt agent on the endless repeat at each of these ``recursion_limit`` values: where its cap raises and
where it returns a canned answer."""


class FrameworksError(UsageError, ValueError):
    """The shipped or given results file is malformed, or a framework cannot be run."""


class FrameworkTable(BaseModel):
    """Outcomes of every framework on every scenario of :data:`SCENARIOS`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scenarios: tuple[str, ...]
    outcomes: tuple[Outcome, ...]
    cap_sweep: tuple[Outcome, ...] = ()

    def frameworks(self) -> list[str]:
        """The frameworks in the table, in row order."""
        return list(dict.fromkeys(o.framework for o in self.outcomes))

    def setups(self) -> list[tuple[str, str]]:
        """Every (framework, limit) pair of the table, in row order."""
        return list(dict.fromkeys((o.framework, o.limit) for o in self.outcomes))

    def get(self, framework: str, scenario: str, limit: str = "default") -> Outcome | None:
        """One cell's outcome, or ``None`` when it was not computed."""
        return next((o for o in self.outcomes
                     if o.framework == framework and o.scenario == scenario and o.limit == limit), None)

    def limits(self, framework: str) -> list[str]:
        """The caps ``framework`` was run with (``"default"`` first)."""
        return [limit for name, limit in self.setups() if name == framework]

    def rows(self) -> list[list[str]]:
        """One row per framework and cap (named with its version), one cell per scenario, in the language in use."""
        rows = []
        for name, limit in self.setups():
            first = next(o for o in self.outcomes if o.framework == name)
            label = f"{name} {first.version}" + ("" if limit == "default" else f" [{limit}]")
            rows.append([label] + [cell(self.get(name, s, limit)) for s in self.scenarios])
        return rows

    def render(self, fmt: Literal["text", "markdown", "json"] = "text") -> str:
        """The table as aligned text or Markdown in the language in use, or JSON (always English: it is data)."""
        if fmt == "json":
            return self.model_dump_json(indent=2)
        headers = [_("framework"), *self.scenarios]
        return markdown_table(headers, self.rows()) if fmt == "markdown" else text_table(headers, self.rows())

    def to_frame(self) -> pd.DataFrame:
        """One row per (framework, scenario); ``got`` as a phrase (:func:`~agentloops.i18n.shown_frame` shows it in
        the learner's language, the frame compares it as the English value)."""
        import pandas as pd

        return pd.DataFrame([{**o.model_dump(), "got": Phrase(GOT_WORDS[o.got])} for o in self.outcomes])

    def __str__(self) -> str:
        return self.render()


GOT_LABELS: dict[Got, str] = {"answer": N_("answer"), "empty answer": N_("empty answer")}
"""What the caller got, in words (English here, shown through ``_()``); an exception is named by its type."""

GOT_WORDS: dict[Got, str] = {**GOT_LABELS, "exception": N_("exception")}
"""Every value of ``got`` as a word (a frame's cell), the exception too."""

FRAME_TITLES: tuple[str, ...] = (N_("framework"), N_("scenario"), N_("limit"), N_("got"), N_("detail"))
"""The frame's column names a notebook shows (translated where shown, by :func:`~agentloops.i18n.shown_frame`)."""


def cell(outcome: Outcome | None) -> str:
    """One cell in the language in use: model calls, tools run, and what the caller got (the exception's type)."""
    if outcome is None:
        return _("(not computed)")
    calls = ngettext("{n} call", "{n} calls", outcome.model_calls).format(n=outcome.model_calls)
    got = (_("raises {error}").format(error=outcome.detail.split(":")[0]) if outcome.got == "exception"
           else _(GOT_LABELS[outcome.got]))
    return _("{calls}  tools[{tools}]  {got}").format(calls=calls, tools=compact(outcome.tools_run), got=got)


def installed(framework: str) -> str | None:
    """The installed version of ``framework``'s package, or ``None``."""
    try:
        return version(FRAMEWORK_PACKAGES[framework])
    except PackageNotFoundError:
        return None


def framework_scenario(name: str) -> Scenario:
    """A scenario of the table: a shipped one, or one of :data:`FRAMEWORK_SCENARIOS`."""
    if name in FRAMEWORK_SCENARIOS:
        return load_scenario(data_dir() / "frameworks" / "scenarios" / f"{name}.json")
    return load_scenario(name)


def reference_outcome(scenario: str) -> Outcome:
    """The package's correct loop on ``scenario``, as a table row."""
    from agentloops import run

    record = run(framework_scenario(scenario), criterion="correct")
    got: Got = "exception" if record.error else "answer" if record.answer else "empty answer"
    detail = f"{record.error}: {record.error_message}" if record.error else repr(record.answer or "")
    return Outcome(framework=REFERENCE, version=installed(REFERENCE) or "0", scenario=scenario,
                   model_calls=record.steps, tools_run=record.tools_executed, got=got, detail=detail[:120])


def compute_table(frameworks: Sequence[str] | None = None, scenarios: Sequence[str] = SCENARIOS, *,
                  full: bool = False) -> FrameworkTable:
    """Run every installed framework (or those named) on ``scenarios``, at its default cap and its small one.

    The reference row always comes first; with the prebuilt LangGraph agent
    among the frameworks, its cap sweep (:data:`CAP_SWEEP_LIMITS`) is run too.
    Without ``full`` the :data:`SLOW` default-cap runs are left out.

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
    loaded = {s: framework_scenario(s) for s in scenarios}
    for name in names:
        runner = importlib.import_module(RUNNERS[name])
        outcomes += [runner.run(loaded[s]) for s in scenarios if full or (name, s) not in SLOW]
        outcomes += [runner.run(loaded[s], runner.SMALL) for s in scenarios]
    sweep: list[Outcome] = []
    if CAP_SWEEP_FRAMEWORK in names:
        runner = importlib.import_module(RUNNERS[CAP_SWEEP_FRAMEWORK])
        sweep = [runner.run(framework_scenario(CAP_SWEEP_SCENARIO), n) for n in CAP_SWEEP_LIMITS]
    return FrameworkTable(scenarios=tuple(scenarios), outcomes=tuple(outcomes), cap_sweep=tuple(sweep))


def merge_slow(fresh: FrameworkTable, shipped: FrameworkTable) -> FrameworkTable:
    """``fresh`` with the shipped cells of the :data:`SLOW` runs it left out, each in its row's place."""
    have = {(o.framework, o.scenario, o.limit) for o in fresh.outcomes}
    kept = [o for o in shipped.outcomes if (o.framework, o.scenario) in SLOW and o.limit == "default"
            and (o.framework, o.scenario, o.limit) not in have]
    order = {key: i for i, key in enumerate((o.framework, o.limit, o.scenario) for o in shipped.outcomes)}
    merged = sorted([*fresh.outcomes, *kept], key=lambda o: order.get((o.framework, o.limit, o.scenario), len(order)))
    return fresh.model_copy(update={"outcomes": tuple(merged)})


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
