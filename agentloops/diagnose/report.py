"""The result of diagnosing one log: findings, counts, and where reading stopped — as text, JSON, pandas or HTML.

The HTML report is one self-contained page: a summary, the findings table and
a bar chart of the findings (matplotlib, inlined as SVG). The same renders in
a notebook (``_repr_html_``), and ``str()`` is what a terminal shows.
"""

from __future__ import annotations

import html
import io
from collections import Counter
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, get_args

from agentloops.diagnose.detectors import KIND_TITLES, Finding, Kind
from agentloops.diagnose.model import FailedAttempt
from agentloops.i18n import N_, Said, _, ngettext
from agentloops.tables import text_table

if TYPE_CHECKING:
    import pandas as pd

COLUMNS: tuple[str, ...] = ("kind", "run", "where", "calls", "count", "tokens", "detail")
"""The columns of the findings table, in order (the DataFrame's and the JSON's names: code, never translated)."""

COLUMN_TITLES: dict[str, str] = {
    "kind": N_("kind"), "run": N_("run"), "where": N_("where"), "calls": N_("calls"), "count": N_("count"),
    "tokens": N_("tokens"), "detail": N_("detail"),
}
"""The HTML table's header per column (English here, the column names themselves; shown through ``_()``)."""

_TEXT_HEADERS: tuple[str, ...] = (N_("kind"), N_("run"), N_("calls"), N_("count"), N_("tokens"), N_("what was seen"))


@dataclass(frozen=True, slots=True)
class Skipped:
    """Entries left out because they are not of the log's format (other lines a hook wrote in between).

    Attributes:
        count: how many.
        first: where the first few are.
        keys: the keys an entry of the format has (one of them), which the skipped ones lack.
    """

    count: int
    first: tuple[str, ...]
    keys: tuple[str, ...]

    def __str__(self) -> str:
        if self.keys == ("request", "response"):
            return ngettext("skipped {n} entry with neither a request nor a response body (another line, not a "
                            "model call of this log), at: {first}", "skipped {n} entries with neither a request nor "
                            "a response body (other lines, not model calls of this log), first at: {first}",
                            self.count).format(n=self.count, first=", ".join(self.first))
        return ngettext("skipped {n} entry that has none of the keys {keys} (another line, not a model call of this "
                        "log), at: {first}", "skipped {n} entries that have none of the keys {keys} (other lines, not "
                        "model calls of this log), first at: {first}", self.count).format(
            n=self.count, keys=", ".join(self.keys), first=", ".join(self.first))


ATTEMPTS_SHOWN = 3
"""How many failed attempts the text report names (the JSON lists them all)."""


@dataclass(frozen=True, slots=True, repr=False)
class Report:
    """What diagnose found in one log.

    Attributes:
        source: the file read.
        format: the log format it was read as.
        runs: runs read (incomplete ones included).
        calls: model calls read.
        findings: every finding, in file order.
        stopped: the one-line error where reading stopped, or ``None`` when the whole file was read.
        incomplete: runs the log stopped inside (their ending is not judged).
        failed_attempts: HTTP attempts that got no answer (a timeout, a refused connection, an error status);
            they are part of the log, not findings.
        skipped: the entries left out as not of the format, or ``None`` when every entry was read.
    """

    source: str
    format: str
    runs: int
    calls: int
    findings: tuple[Finding, ...]
    stopped: str | None = None
    incomplete: int = 0
    failed_attempts: tuple[FailedAttempt, ...] = ()
    skipped: Skipped | None = None

    @property
    def healthy(self) -> bool:
        """No finding, and the whole file was read."""
        return not self.findings and self.stopped is None

    def counts(self) -> dict[Kind, int]:
        """Findings per kind, every kind listed (zero included)."""
        seen = Counter(f.kind for f in self.findings)
        return {kind: seen.get(kind, 0) for kind in get_args(Kind)}

    def summary(self) -> str:
        """One line: what was read and what was found."""
        found = ngettext("{n} finding", "{n} findings", len(self.findings)).format(n=len(self.findings)) \
            if self.findings else _("no stop bug found")
        if self.incomplete:
            return _("{source} ({format}): {runs} run(s), {calls} model call(s), {found}; {incomplete} run(s) cut off "
                     "by the end of the log").format(source=self.source, format=self.format, runs=self.runs,
                                                     calls=self.calls, found=found, incomplete=self.incomplete)
        return _("{source} ({format}): {runs} run(s), {calls} model call(s), {found}").format(
            source=self.source, format=self.format, runs=self.runs, calls=self.calls, found=found)

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract of ``agentloops diagnose --json``."""
        return {"source": self.source, "format": self.format, "runs": self.runs, "calls": self.calls,
                "incomplete_runs": self.incomplete, "stopped": self.stopped, "counts": self.counts(),
                "findings": [_fields(f) for f in self.findings],
                "failed_attempts": [{"where": a.where, "error": a.error} for a in self.failed_attempts],
                "skipped": None if self.skipped is None else {"count": self.skipped.count,
                                                              "first": list(self.skipped.first),
                                                              "keys": list(self.skipped.keys)}}

    def to_frame(self) -> pd.DataFrame:
        """One row per finding, columns :data:`COLUMNS` (imports pandas on first use); each ``detail`` is the English
        sentence, which :func:`~agentloops.i18n.shown_frame` shows as the report does."""
        import pandas as pd

        rows = [{**_fields(f), "detail": Said(f.detail, f.text)} for f in self.findings]
        return pd.DataFrame(rows, columns=list(COLUMNS))

    def __repr__(self) -> str:
        return str(self)  # what a terminal, a test log and a notebook's text/plain show

    def __str__(self) -> str:
        lines = [self.summary()]
        if self.findings:
            rows = [[f.kind, f.run, f.calls, f.count, "" if f.tokens is None else f.tokens, f.text]
                    for f in self.findings]
            lines.append(text_table([_(h) for h in _TEXT_HEADERS], rows))
        lines.extend(self.notes())
        if self.stopped:
            lines.append(_("stopped reading at: {where}").format(where=self.stopped))
        return "\n".join(lines)

    def notes(self) -> list[str]:
        """What was read besides the findings: attempts that got no answer, entries skipped."""
        notes = []
        if self.failed_attempts:
            shown = "; ".join(f"{a.where} ({a.error})" for a in self.failed_attempts[:ATTEMPTS_SHOWN])
            more = len(self.failed_attempts) - ATTEMPTS_SHOWN
            notes.append(ngettext("{n} HTTP attempt failed: no response, or an error status (the SDK retries it, "
                                  "or the run raised): {shown}", "{n} HTTP attempts failed: no response, or an error "
                                  "status (the SDK retries them, or the run raised): {shown}",
                                  len(self.failed_attempts))
                         .format(n=len(self.failed_attempts), shown=shown) + (f"; … (+{more})" if more > 0 else ""))
        if self.skipped is not None:
            notes.append(str(self.skipped))
        return notes

    def chart_svg(self) -> str:
        """The findings per kind as an SVG bar chart (matplotlib, no pyplot state; the package's fonts, CJK too)."""
        import matplotlib

        from agentloops.plots import chart_style

        with matplotlib.rc_context({"font.family": chart_style()["font.family"]}):
            return self._chart_svg()

    def _chart_svg(self) -> str:
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator

        counts = self.counts()
        kinds = list(counts)
        fig = Figure(figsize=(7.5, 3.2))
        ax = fig.subplots()
        bars = ax.barh([_(KIND_TITLES[k]) for k in kinds], [counts[k] for k in kinds],
                       color=["#c0392b" if counts[k] else "#bbbbbb" for k in kinds])
        tokens = {k: sum(f.tokens or 0 for f in self.findings if f.kind == k) for k in kinds}
        for bar, kind in zip(bars, kinds):
            if tokens[kind]:
                ax.annotate(_("{n} tokens").format(n=tokens[kind]),
                            (bar.get_width(), bar.get_y() + bar.get_height() / 2), xytext=(4, 0),
                            textcoords="offset points", va="center", fontsize=8)
        ax.set_xlim(0, max(1, *counts.values()) * 1.4)  # room for the token labels
        ax.invert_yaxis()
        ax.set_xlabel(_("findings"))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(_("{n} finding(s) in {runs} run(s)").format(n=len(self.findings), runs=self.runs), fontsize=10)
        fig.tight_layout()
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg")
        svg = buffer.getvalue()
        return svg[svg.index("<svg"):]

    def _table_html(self) -> str:
        head = "".join(f"<th>{html.escape(_(COLUMN_TITLES[c]))}</th>" for c in COLUMNS)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v if v is not None else ''))}</td>"
                                        for v in _row(f)) + "</tr>" for f in self.findings)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>" if self.findings else ""

    def _repr_html_(self, chart: bool | None = None) -> str:
        """Summary, findings and (when there are findings, or when asked) their chart."""
        label = html.escape(_("stopped reading at:"))
        stopped = "".join(f"<p>{html.escape(note)}</p>" for note in self.notes())
        stopped += f"<p><b>{label}</b> {html.escape(self.stopped)}</p>" if self.stopped else ""
        figure = f"<figure>{self.chart_svg()}</figure>" if (bool(self.findings) if chart is None else chart) else ""
        return f"<div><p>{html.escape(self.summary())}</p>{stopped}{self._table_html()}{figure}</div>"

    def to_html(self) -> str:
        """A self-contained HTML page: summary, findings and their chart."""
        return ("<!doctype html><html><head><meta charset='utf-8'><title>agentloops diagnose</title>"
                "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto}"
                "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}"
                "table{border-collapse:collapse}</style></head><body>"
                f"<h1>agentloops diagnose</h1>{self._repr_html_(chart=True)}"
                "</body></html>\n")


def _fields(finding: Finding) -> dict[str, Any]:
    """A finding's :data:`COLUMNS` (the English sentence as ``detail``): the JSON and the DataFrame."""
    data = asdict(finding)
    return {column: data[column] for column in COLUMNS}


def _row(finding: Finding) -> list[Any]:
    """A finding's cells in the HTML table: the :data:`COLUMNS`, the sentence in the report's language."""
    data = {**_fields(finding), "detail": finding.text}
    return [data[column] for column in COLUMNS]
