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

The log is streamed: one line (or one open trace) at a time, each message of a
run converted once, so memory does not grow with the file and time grows with
its length. A log that breaks off is diagnosed as far as it goes, and the
report says where and why it stopped. Lines of other kinds mixed in (a hook's
own events) are skipped, counted and named in the report; attempts that failed
at the transport (``"response": null`` with an ``error``) are listed, not refused.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentloops.diagnose.detectors import KIND_TITLES, Finding, Kind, find
from agentloops.diagnose.model import FailedAttempt, LogError, Run, TooDeep, log_error
from agentloops.diagnose.otel import read_otel
from agentloops.diagnose.pairs import read_pairs
from agentloops.diagnose.recordings import read_records, read_scenarios
from agentloops.diagnose.report import Report, Skipped
from agentloops.diagnose.source import Item, iter_items
from agentloops.i18n import N_, Phrase, language, speaking
from agentloops.providers import FORMATS as PROVIDER_FORMATS

if TYPE_CHECKING:
    import pandas as pd

LOG_FORMATS: tuple[str, ...] = ("record", "scenario", "otel", "pairs", *PROVIDER_FORMATS)
"""Every format :func:`diagnose` reads (``"auto"`` picks one from the first entry)."""


def sniff(where: str, first: dict[str, Any]) -> str:
    """The log format of a file, told by its first entry of a kind diagnose reads."""
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
    raise _not_a_log(where)


def _not_a_log(where: str) -> LogError:
    return log_error(N_("{where}: not a log diagnose reads: expected a run record (rounds, outcome), a scenario file "
                        "(responses), a request/response pair (request, response) or OTLP spans (resourceSpans)"),
                     where=where)


_KEYS: dict[str, tuple[str, ...]] = {"otel": ("resourceSpans",), "record": ("rounds", "outcome"),
                                     "scenario": ("responses",)}
"""The keys an entry of each format has (one of them); the provider formats' entries have request or response."""


PAIR_KEYS = ("request", "response")
"""The keys of a request/response line (of ``pairs`` and of each provider format)."""


def keys_of(format: str) -> tuple[str, ...]:
    """The keys that make an entry one of ``format``'s."""
    return _KEYS.get(format, PAIR_KEYS)


def is_entry(entry: dict[str, Any], keys: tuple[str, ...]) -> bool:
    """``entry`` has one of ``keys``; a request/response line has a request body or a response body (an object, or
    null for a failed attempt): a hook's own event that carries a ``request`` or ``response`` text
    (``{"event": "llm_end", "response": "…"}``) is another kind of line, skipped, not a damaged pair."""
    if keys is PAIR_KEYS:
        response = entry.get("response", "")
        return isinstance(entry.get("request"), dict) or isinstance(response, dict) or response is None
    return not entry.keys().isdisjoint(keys)


class Reading:
    """Where reading is, and the entries skipped because they are not of the log's format.

    Hooks and proxies write other lines between the model calls (a run started,
    a tool's timing); those are skipped, counted, and the first few named, so a
    mixed file is read to its end and the report says what it left out and why.
    """

    SHOWN = 3
    """How many skipped places a report names."""

    def __init__(self) -> None:
        self.where = ""
        self.skipped = 0
        self.skipped_at: list[str] = []
        self.keys: tuple[str, ...] = ()

    def skip(self, where: str) -> None:
        """Count the entry at ``where`` as skipped."""
        self.skipped += 1
        if len(self.skipped_at) < self.SHOWN:
            self.skipped_at.append(where)

    def entries(self, items: Iterator[Item]) -> Iterator[Item]:
        """The entries that have one of :attr:`keys`; the others are skipped."""
        keys = self.keys
        for where, entry in items:
            self.where = where
            if is_entry(entry, keys):
                yield where, entry
            else:
                self.skip(where)


def check_format(format: str) -> None:
    """Refuse a format name :func:`diagnose` does not read."""
    if format != "auto" and format not in LOG_FORMATS:
        raise log_error(N_("unknown log format {format}; expected auto or one of: {names}"), format=repr(format),
                        names=", ".join(LOG_FORMATS))


def _first_entry(items: Iterator[Item], reading: Reading) -> tuple[Item, str]:
    """The first entry of a kind diagnose reads and the format it tells; entries before it are skipped."""
    first: str | None = None
    for where, entry in items:
        first = first or where
        reading.where = where
        if any(is_entry(entry, keys) for keys in (*_KEYS.values(), PAIR_KEYS)):
            return (where, entry), sniff(where, entry)
        reading.skip(where)
    raise _not_a_log(first or "?")  # iter_items refuses an empty log, so first is set


def iter_runs(path: str | Path, format: str = "auto", *, reading: Reading | None = None) -> Iterator[Run]:
    """Every run in the log, read lazily; raises :class:`LogError` where the log stops being readable.

    ``reading``: pass one to learn afterwards which entries were skipped (not of the format).
    """
    check_format(format)
    reading = reading if reading is not None else Reading()
    items = iter_items(path)
    if format == "auto":
        first, chosen = _first_entry(items, reading)
        items = itertools.chain([first], items)
    else:
        chosen = format
    reading.keys = keys_of(chosen)
    entries = reading.entries(items)
    if chosen == "otel":
        runs = read_otel(entries)
    elif chosen == "record":
        runs = read_records(entries)
    elif chosen == "scenario":
        runs = read_scenarios(entries)
    else:
        runs = read_pairs(entries, None if chosen == "pairs" else chosen)
    return _guarded(runs, reading)


def _guarded(runs: Iterator[Run], reading: Reading) -> Iterator[Run]:
    """``runs``, with a value nested past what Python can walk turned into the one-line error naming its entry."""
    try:
        yield from runs
    except (RecursionError, TooDeep):
        raise log_error(N_("{where}: nested too deeply to be a log entry"), where=reading.where) from None


def detected_format(path: str | Path, format: str = "auto") -> str:
    """The format ``path`` is read as."""
    check_format(format)
    if format != "auto":
        return format
    return _first_entry(iter_items(path), Reading())[1]


def iter_findings(path: str | Path, format: str = "auto", max_steps: int | None = None) -> Iterator[Finding]:
    """Findings as each run is read (nothing is kept); raises :class:`LogError` where reading stops."""
    lang = language()
    for run in iter_runs(path, format):
        yield from _find(run, max_steps, lang)


def _find(run: Run, max_steps: int | None, lang: str) -> list[Finding]:
    """:func:`find` in ``lang``, with arguments nested past what Python can walk named by their run.

    ``lang``: the language in use, looked up once a log: looking it up reads the environment, and a
    finding's sentences would look it up several times each.
    """
    try:
        with speaking(lang):
            return find(run, max_steps)
    except (RecursionError, TooDeep):
        raise log_error(N_("{where}: nested too deeply to be a log entry"), where=run.where) from None


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
        LogError: the file cannot be read at all, its first run is unreadable, no entry is of
            the format, or (``partial=False``) it stops being readable.
    """
    chosen = detected_format(path, format)
    findings: list[Finding] = []
    attempts: list[FailedAttempt] = []
    runs = calls = incomplete = 0
    stopped: str | None = None
    reading = Reading()
    lang = language()
    try:
        for run in iter_runs(path, chosen, reading=reading):
            runs += 1
            calls += len(run.turns)
            incomplete += not run.complete
            attempts.extend(run.failed_attempts)
            findings.extend(_find(run, max_steps, lang))
    except LogError as exc:
        if not partial or not runs:
            raise  # nothing was read: there is no partial report to give
        stopped = exc.english  # English, as data (the JSON); a Phrase, shown in the learner's language
    if not runs and stopped is None and reading.skipped:
        needs = (Phrase(N_("a request or a response body, as a JSON object")) if reading.keys is PAIR_KEYS else
                 Phrase(N_("one of: {keys}"), keys=", ".join(reading.keys)))
        raise log_error(N_("{path}: no entry is in the {format} format (each needs {needs}); {n} skipped, the first at "
                           "{first}"), path=str(path), format=chosen, needs=needs, n=reading.skipped,
                        first=reading.skipped_at[0])
    skipped = Skipped(reading.skipped, tuple(reading.skipped_at), reading.keys) if reading.skipped else None
    return Report(str(path), chosen, runs, calls, tuple(findings), stopped, incomplete, tuple(attempts), skipped)


def findings_frame(path: str | Path, format: str = "auto", *, max_steps: int | None = None) -> pd.DataFrame:
    """The findings of :func:`diagnose` as a DataFrame, one row per finding."""
    return diagnose(path, format, max_steps=max_steps).to_frame()


__all__ = [
    "KIND_TITLES",
    "LOG_FORMATS",
    "FailedAttempt",
    "Finding",
    "Kind",
    "LogError",
    "Reading",
    "Report",
    "Run",
    "Skipped",
    "detected_format",
    "diagnose",
    "findings_frame",
    "iter_findings",
    "iter_runs",
]
