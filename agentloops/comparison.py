"""Every scenario under every criterion: the article's table, computed by running the loop."""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from agentloops.criteria import CRITERION_NAMES, resolve_criterion
from agentloops.errors import UsageError
from agentloops.i18n import N_, _, ngettext, shown
from agentloops.loop import DEFAULT_MAX_STEPS, CriterionLike, run
from agentloops.record import RunRecord
from agentloops.scenario import Scenario, ScenarioLike, list_scenarios, load_scenario
from agentloops.tables import markdown_table, text_table

if TYPE_CHECKING:
    import pandas as pd

Format = Literal["text", "markdown", "csv", "json"]


OUTCOME_WORDS: dict[str, str] = {
    "answer": N_("answer"), "empty_answer": N_("empty answer"), "premature_answer": N_("premature answer"),
    "abnormal_answer": N_("abnormal answer"), "hit_cap": N_("hit cap"), "raised": N_("raised"),
}
"""An outcome in two or three words, as table cells show it (English here; see :func:`outcome_words`)."""


def outcome_words(outcome: str) -> str:
    """``premature_answer`` → ``premature answer``, in the language in use."""
    words = OUTCOME_WORDS.get(outcome)
    return _(words) if words is not None else outcome.replace("_", " ")


def cell(record: RunRecord) -> str:
    """One table cell in the article's style: steps, cap marker, tools executed, and how it ended.

    In the language in use; in English always the same text (the README's table is checked against it).
    """
    steps = ngettext("{n} step", "{n} steps", record.steps).format(n=record.steps)
    if record.hit_cap:
        steps = _("{steps} (cap)").format(steps=steps)
    parts = [steps, _("tools[{tools}]").format(tools=compact(record.tools_executed))]
    if record.wasted_calls:
        parts.append(ngettext("{n} wasted call", "{n} wasted calls", record.wasted_calls).format(
            n=record.wasted_calls))
    if record.error:
        parts.append(_("raises {error}").format(error=record.error) if record.hit_cap
                     else _("raises {error} at call {step}").format(error=record.error, step=record.steps))
    elif record.outcome not in ("answer", "hit_cap"):
        parts.append(outcome_words(record.outcome))
    return "  ".join(parts)


def compact(names: Sequence[str]) -> str:
    """Tool names in order, runs of one name folded: ``read_page×8``."""
    folded: list[str] = []
    i = 0
    while i < len(names):
        j = i
        while j < len(names) and names[j] == names[i]:
            j += 1
        folded.append(names[i] if j - i == 1 else f"{names[i]}×{j - i}")
        i = j
    return " ".join(folded)


@dataclass(frozen=True)
class Comparison:
    """Records of every (scenario, criterion) pair, with the table views people read.

    Attributes:
        scenarios: the scenarios, in row order.
        criteria: criterion names, in column order.
        records: one record per pair, scenario-major.
    """

    scenarios: tuple[Scenario, ...]
    criteria: tuple[str, ...]
    records: tuple[RunRecord, ...]

    def get(self, scenario: str, criterion: str) -> RunRecord:
        """The record of one pair."""
        for record in self.records:
            if record.scenario == scenario and record.criterion == criterion:
                return record
        raise KeyError((scenario, criterion))

    def rows(self) -> list[list[str]]:
        """The wide table: one row per scenario, one cell per criterion."""
        width = len(self.criteria)
        return [
            [_(s.title)] + [cell(r) for r in self.records[i * width : (i + 1) * width]]
            for i, s in enumerate(self.scenarios)
        ]

    def headers(self) -> list[str]:
        """Column headers of :meth:`rows`."""
        return [_("scenario"), *(_("by {criterion}").format(criterion=c) if c != "correct" else _("correct loop")
                                 for c in self.criteria)]

    def to_frame(self) -> pd.DataFrame:
        """Long form: one row per run, the numbers of every record (imports pandas)."""
        from agentloops.frames import shown_frame

        rows = [r.to_dict(rounds=False) for r in self.records]
        return shown_frame(rows, [{**row, "answer": shown(row["answer"]) if row.get("answer") else row.get("answer")}
                                  for row in rows])

    def table(self) -> pd.DataFrame:
        """Wide form, as in the article: scenarios down, criteria across (imports pandas)."""
        import pandas as pd

        headers = self.headers()
        return pd.DataFrame(self.rows(), columns=headers).set_index(headers[0])

    def render(self, fmt: Format = "text") -> str:
        """The comparison as text, Markdown, CSV or JSON (a list of run records)."""
        if fmt == "text":
            return text_table(self.headers(), self.rows())
        if fmt == "markdown":
            return markdown_table(self.headers(), self.rows())
        if fmt == "csv":
            out = io.StringIO()
            rows = [r.to_dict(rounds=False) for r in self.records]
            writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows({k: json.dumps(v) if isinstance(v, list) else v for k, v in row.items()} for row in rows)
            return out.getvalue().rstrip("\n")
        if fmt == "json":
            return json.dumps([r.to_dict() for r in self.records], ensure_ascii=False, indent=2)
        raise ValueError(f"unknown format {fmt!r}; expected text, markdown, csv or json")

    def __str__(self) -> str:
        return self.render("text")

    def __repr__(self) -> str:
        return self.render("text")

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.headers())
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in row) + "</tr>" for row in self.rows()
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def compare(
    scenarios: Sequence[ScenarioLike] | None = None,
    criteria: Sequence[CriterionLike] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> Comparison:
    """Run every scenario under every criterion.

    Args:
        scenarios: names, paths or scenarios; default: the article's four and the extra ones.
        criteria: names or functions; default: the three naive criteria and the correct loop.
        max_steps: the cap for every run.
    """
    loaded = tuple(load_scenario(s) for s in scenarios) if scenarios is not None else tuple(
        list_scenarios(["article", "extra"])
    )
    rules = [resolve_criterion(c) for c in (criteria if criteria is not None else CRITERION_NAMES)]
    if not loaded:
        raise UsageError("compare needs at least one scenario; got none")
    if not rules:
        raise UsageError("compare needs at least one criterion; got none")
    records = tuple(run(s, rule, max_steps) for s in loaded for rule in rules)
    return Comparison(loaded, tuple(rule.name for rule in rules), records)
