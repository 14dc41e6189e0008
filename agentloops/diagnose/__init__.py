"""Point the package at your own agent's log: find the stop bugs it teaches.

    from agentloops.diagnose import diagnose
    report = diagnose("agent.jsonl")      # or findings_frame(...) for a DataFrame
    print(report)

Three kinds of log are read (``format="auto"`` tells them apart by the first entry):

==================  =======================================================================
format              what it is
==================  =======================================================================
``record``          ``agentloops run … --json`` output (one record, a list, or JSON Lines)
``scenario``        a provider scenario file saved by :func:`agentloops.providers.record.record`
``otel``            OpenTelemetry GenAI spans as OTLP JSON (:mod:`.otel`)
``pairs``           JSON Lines of request/response pairs (:mod:`.pairs`), each line's provider
                    told by its ``format`` field or the response's shape
a provider format   the same, every line in that format: ``openai-chat``, ``openai-responses``,
                    ``anthropic``, ``gemini``, ``ollama``
==================  =======================================================================

The log is streamed: one line (or one open trace) at a time, so memory does not
grow with the file. A log that breaks off is diagnosed as far as it goes, and
the report says where and why it stopped.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentloops.diagnose.detectors import KIND_TITLES, Finding, Kind, find
from agentloops.diagnose.model import LogError, Run, log_error
from agentloops.diagnose.otel import read_otel
from agentloops.diagnose.pairs import read_pairs
from agentloops.diagnose.recordings import read_records, read_scenarios
from agentloops.diagnose.report import Report
from agentloops.diagnose.source import Item, iter_items
from agentloops.i18n import N_
from agentloops.providers import FORMATS as PROVIDER_FORMATS

if TYPE_CHECKING:
    import argparse

    import pandas as pd

LOG_FORMATS: tuple[str, ...] = ("record", "scenario", "otel", "pairs", *PROVIDER_FORMATS)
"""Every format :func:`diagnose` reads (``"auto"`` picks one from the first entry)."""


def sniff(where: str, first: dict[str, Any]) -> str:
    """The log format of a file, told by its first entry."""
    if "resourceSpans" in first:
        return "otel"
    if "rounds" in first and "outcome" in first:
        return "record"
    if "responses" in first:
        return "scenario"
    if "request" in first or "response" in first:
        named = first.get("format")
        if named is not None and named not in PROVIDER_FORMATS:
            raise log_error(N_("{where}: format: expected one of {names}; got {value}"), where=where,
                            names=", ".join(PROVIDER_FORMATS), value=f"{named!r:.60}")
        return str(named or "pairs")
    raise log_error(N_("{where}: not a log diagnose reads: expected a run record (rounds, outcome), a scenario file "
                       "(responses), a request/response pair (request, response) or OTLP spans (resourceSpans)"),
                    where=where)


def check_format(format: str) -> None:
    """Refuse a format name :func:`diagnose` does not read."""
    if format != "auto" and format not in LOG_FORMATS:
        raise log_error(N_("unknown log format {format}; expected auto or one of: {names}"), format=repr(format),
                        names=", ".join(LOG_FORMATS))


def iter_runs(path: str | Path, format: str = "auto") -> Iterator[Run]:
    """Every run in the log, read lazily; raises :class:`LogError` where the log stops being readable."""
    check_format(format)
    items = iter_items(path)
    first = next(items)
    chosen = sniff(*first) if format == "auto" else format
    entries: Iterator[Item] = itertools.chain([first], items)
    if chosen == "otel":
        return read_otel(entries)
    if chosen == "record":
        return read_records(entries)
    if chosen == "scenario":
        return read_scenarios(entries)
    return read_pairs(entries, None if chosen == "pairs" else chosen)


def detected_format(path: str | Path, format: str = "auto") -> str:
    """The format ``path`` is read as."""
    check_format(format)
    if format != "auto":
        return format
    where, first = next(iter_items(path))
    return sniff(where, first)


def iter_findings(path: str | Path, format: str = "auto", max_steps: int | None = None) -> Iterator[Finding]:
    """Findings as each run is read (nothing is kept); raises :class:`LogError` where reading stops."""
    for run in iter_runs(path, format):
        yield from find(run, max_steps)


def diagnose(path: str | Path, format: str = "auto", *, max_steps: int | None = None,
             partial: bool = True) -> Report:
    """Diagnose a log file and return a :class:`Report`.

    Args:
        path: the log.
        format: ``"auto"`` or one of :data:`LOG_FORMATS`.
        max_steps: the agent's step cap, when known: a run that used all of them
            without an answer then counts as having hit the cap.
        partial: a log that breaks off after its first run is reported as far as it goes
            (``report.stopped`` says where); with ``False`` it raises instead.

    Raises:
        LogError: the file cannot be read at all, its first run is unreadable, or
            (``partial=False``) it stops being readable.
    """
    chosen = detected_format(path, format)
    findings: list[Finding] = []
    runs = calls = incomplete = 0
    stopped: str | None = None
    try:
        for run in iter_runs(path, chosen):
            runs += 1
            calls += len(run.turns)
            incomplete += not run.complete
            findings.extend(find(run, max_steps))
    except LogError as exc:
        if not partial or not runs:
            raise  # nothing was read: there is no partial report to give
        stopped = exc.english  # English, as data (the JSON); a Phrase, shown in the learner's language
    return Report(str(path), chosen, runs, calls, tuple(findings), stopped, incomplete)


def findings_frame(path: str | Path, format: str = "auto", *, max_steps: int | None = None) -> pd.DataFrame:
    """The findings of :func:`diagnose` as a DataFrame, one row per finding."""
    return diagnose(path, format, max_steps=max_steps).to_frame()


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``agentloops diagnose`` (see :mod:`agentloops.diagnose.cli`)."""
    from agentloops.diagnose.cli import add_commands as add

    add(sub)


__all__ = [
    "KIND_TITLES",
    "LOG_FORMATS",
    "Finding",
    "Kind",
    "LogError",
    "Report",
    "Run",
    "add_commands",
    "detected_format",
    "diagnose",
    "findings_frame",
    "iter_findings",
    "iter_runs",
]
