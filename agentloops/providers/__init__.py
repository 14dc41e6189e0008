"""Real providers' response bodies, converted to the package's :class:`~agentloops.response.Response`.

One module per wire format, each citing the documentation and SDK types it
follows:

============================  ==========================================================
format                        module and API
============================  ==========================================================
``openai-chat``               :mod:`.openai_chat` — Chat Completions, and every
                              OpenAI-compatible server (vLLM, llama.cpp, LM Studio,
                              SGLang, DeepSeek, Ollama's ``/v1``, Gemini's compatibility
                              endpoint…)
``openai-responses``          :mod:`.openai_responses` — the Responses API
``anthropic``                 :mod:`.anthropic` — the Messages API
``gemini``                    :mod:`.gemini` — ``generateContent``
``ollama``                    :mod:`.ollama` — Ollama's native ``/api/chat``
============================  ==========================================================

Two rules hold for every adapter:

1. **The normalised ``finish_reason`` translates the provider's stop value and
   nothing else.** It is never inferred from the presence of tool calls. Gemini
   and Ollama end a round of tool calls with their plain "stop" value, the
   Responses API with ``completed``: the normalised value is ``stop`` there,
   because that is what a loop reading the field sees. Deciding whether to go on
   is the tool calls' job (see :func:`agentloops.criteria.correct`), and these
   rounds are where a loop that watches the stop value breaks.
2. **The raw value is always kept** in ``raw_finish_reason``. The mapping is
   one table for all five formats, :data:`agentloops.stops.STOP_VALUES`, each
   row with its source. A provider's failure end (a ``failed`` or unfinished
   response, Gemini's ``OTHER``, Ollama's ``load``…) becomes ``provider_error``;
   a value the table does not know becomes ``unknown``. Both are abnormal: the
   correct loop raises before any tool call of the round runs, whatever the
   tool calls look like — never a silent success, never a tool run on a turn
   the provider disowned.

:data:`STOP_TABLE` lists every documented value of every format, its kind of
end and what the correct loop does with it, computed by running
:func:`~agentloops.criteria.correct` on a minimal body of each value, converted
by the adapter, with and without a tool call (so the table cannot drift from
the code).

Real agents mostly stream: a scenario response may also be ``{"stream": [chunk,
...]}`` in its format's streaming shape, which :mod:`.streaming` assembles into
the round the whole body gives (each format module knows its own stream); a
broken stream is a ``provider_error`` round, never a crash. :mod:`.field` holds
the catalogue of abnormal rounds real servers have sent (``data/field/``).

Importing this package loads no SDK; :mod:`.record` (the ``agentloops[record]``
extra) is the only module that does, and only when it is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any, Literal

import agentloops.stops as stops
from agentloops.criteria import Abort, Continue, Decision, Finish, correct
from agentloops.errors import UsageError
from agentloops.i18n import N_, Phrase, _, shown
from agentloops.providers import streaming
from agentloops.providers._common import RawBodyError
from agentloops.providers.examples import example_for
from agentloops.providers.reply import Reply
from agentloops.response import FinishReason, Response
from agentloops.stops import FORMATS, ProviderFormat, StopKind, StopValue
from agentloops.tables import markdown_table, text_table

FORMAT_TITLES: dict[ProviderFormat, str] = {
    "openai-chat": "OpenAI Chat Completions (and compatible servers)",
    "openai-responses": "OpenAI Responses",
    "anthropic": "Anthropic Messages",
    "gemini": "Google Gemini generateContent",
    "ollama": "Ollama /api/chat",
}
"""A readable name per format, for tables and widgets."""

_MODULES: dict[str, str] = {
    "openai-chat": "openai_chat",
    "openai-responses": "openai_responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "ollama": "ollama",
}


class UnknownFormatError(UsageError, ValueError):
    """A provider format name that is not one of :data:`FORMATS`."""


@cache
def module(format: str) -> ModuleType:
    """The adapter module of ``format`` (imported on first use; kept, as a log reader asks once a line)."""
    if format not in _MODULES:
        raise UnknownFormatError(f"unknown provider format {format!r}; expected one of: {', '.join(FORMATS)}")
    return importlib.import_module(f"agentloops.providers.{_MODULES[format]}")


def adapt(format: str, raw: object, where: str = "response") -> Response:
    """Convert one raw response of ``format`` into a :class:`Response`: a whole body, or ``{"stream": [...]}``.

    Args:
        format: one of :data:`FORMATS`.
        raw: the JSON body exactly as the API returned it (a dict), or its stream
            (see :mod:`.streaming`: a broken stream is a ``provider_error`` round).
        where: the path of ``raw`` in error messages (``responses[2]`` in a scenario file).

    Raises:
        UnknownFormatError: ``format`` is not a provider format.
        RawBodyError: the body lacks a field the adapter needs; the message names it.
    """
    return read(format, raw, where).response


def read(format: str, raw: object, where: str = "response") -> Reply:
    """:func:`adapt`'s reading, as a :class:`~agentloops.providers.reply.Reply`: the same values, the
    :class:`Response` built only when asked for (a log reader reads a body a line)."""
    return reader(format)(raw, where)


@cache
def reader(format: str) -> Callable[[object, str], Reply]:
    """:func:`read` of one format, its adapter looked up once (a log reader reads a body a line).

    A body the format's adapter reads directly is handed to it at once; a stream (``{"stream": [...]}``) is
    assembled first.
    """
    adapter = module(format)
    adapt_body: Callable[[object, str], Reply] = adapter.adapt

    def read_body(raw: object, where: str = "response") -> Reply:
        if type(raw) is dict and len(raw) != 1:  # a parsed body of more than one key is never a stream
            return adapt_body(raw, where)
        if streaming.is_stream(raw):
            return Reply.of(streaming.assemble(adapter, raw, where))
        return adapt_body(raw, where)

    return read_body


def stream_of(format: str, body: Mapping[str, Any], seed: int | None = None) -> dict[str, list[Any]]:
    """``body`` (a whole response of ``format``) as the ``{"stream": [...]}`` a server sends, cut at ``seed``'s points.

    Without ``seed`` every text arrives in one piece.
    """
    return streaming.stream_of(module(format), body, seed)


def stop_values(format: str) -> tuple[StopValue, ...]:
    """Every documented stop signal of ``format`` and its normalised reason (rows of :data:`stops.STOP_VALUES`)."""
    module(format)  # an unknown format is a UsageError here too
    return stops.stop_values(format)


@dataclass(frozen=True, slots=True)
class StopRow:
    """One row of the stop-value table: a provider's value and what the correct loop does with it.

    Attributes:
        format: the provider format.
        field: where the value lives in the raw body.
        value: the value as the provider sends it.
        finish_reason: the normalised reason.
        kind: the kind of end (``go_on``, ``finished``, ``abnormal``).
        without_tools: what the correct loop does when the round has no tool call.
        with_tools: what it does when the round carries one well-formed tool call.
        meaning: the provider's documented meaning, in one line (a phrase: it shows itself in the learner's language).
        source: where that is documented.
    """

    format: str
    field: str
    value: str
    finish_reason: FinishReason
    kind: StopKind
    without_tools: str
    with_tools: str
    meaning: str
    source: str

    def cells(self) -> list[str]:
        """The row as table cells (the source is left to the docstrings: it would double the width)."""
        return [self.format, f"{self.field} = {self.value}", self.finish_reason, self.kind.replace("_", " "),
                shown(self.without_tools), shown(self.with_tools), _(self.meaning)]


STOP_TABLE_HEADERS: tuple[str, ...] = (
    "format", "stop value", "normalised", "kind", "no tool calls", "with tool calls", "documented meaning")


def describe(decision: Decision, with_tools: bool) -> str:
    """A decision in the table's words: finished, go on (with tools / call again), abnormal (code)."""
    if isinstance(decision, Abort):
        return Phrase(N_("abnormal ({code})"), code=decision.code)
    if isinstance(decision, Finish):
        return Phrase(N_("finished (the fields disagree)") if decision.fields_disagree else N_("finished"))
    assert isinstance(decision, Continue)
    return Phrase(N_("go on with tools") if with_tools else N_("go on (call again, no tools)"))


def decide(response: Response) -> Decision:
    """What the correct loop decides on ``response`` (a thin name for the table's purpose)."""
    return correct(response)


@cache
def _rows(formats: tuple[str, ...]) -> tuple[StopRow, ...]:
    rows = []
    for name in formats:
        for value in stop_values(name):
            plain = adapt(name, example_for(name, value))
            calling = adapt(name, example_for(name, value, with_tool_call=True))
            with_tools = describe(decide(calling), True) if calling.tool_calls else \
                Phrase(N_("(no round to carry a call)"))
            rows.append(StopRow(name, value.field, value.value, plain.finish_reason, stops.kind_of(plain.finish_reason),
                                describe(decide(plain), False), with_tools, Phrase(value.meaning), value.source))
    return tuple(rows)


def stop_table(formats: Iterable[str] | None = None) -> tuple[StopRow, ...]:
    """Every documented stop value of ``formats`` (default: all) and what the correct loop does with it."""
    return _rows(tuple(formats) if formats is not None else FORMATS)


def render_stop_table(formats: Iterable[str] | None = None, fmt: Literal["text", "markdown"] = "text") -> str:
    """:func:`stop_table` as aligned text or Markdown."""
    rows = [row.cells() for row in stop_table(formats)]
    if fmt == "markdown":
        return markdown_table(STOP_TABLE_HEADERS, rows)
    return text_table(STOP_TABLE_HEADERS, rows)


def adapt_all(format: str, bodies: Sequence[object], where: str = "responses") -> tuple[Response, ...]:
    """Convert a list of raw bodies; errors name ``where[i]`` and the field inside."""
    return tuple(adapt(format, body, f"{where}[{i}]") for i, body in enumerate(bodies))


def is_provider_format(value: object) -> bool:
    """True when ``value`` names a provider format."""
    return isinstance(value, str) and value in _MODULES


def as_plain(raw: object) -> Any:
    """A JSON-ready copy of ``raw`` (mappings and sequences rebuilt as dicts and lists)."""
    if isinstance(raw, Mapping):
        return {str(k): as_plain(v) for k, v in raw.items()}
    if isinstance(raw, (list, tuple)):
        return [as_plain(v) for v in raw]
    return raw


STOP_TABLE: tuple[StopRow, ...]
"""Every documented stop value of every format (computed on first access, see :func:`stop_table`)."""


def __getattr__(name: str) -> Any:
    if name == "STOP_TABLE":
        return stop_table()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FORMATS",
    "FORMAT_TITLES",
    "STOP_TABLE",
    "STOP_TABLE_HEADERS",
    "ProviderFormat",
    "RawBodyError",
    "Reply",
    "StopRow",
    "StopValue",
    "UnknownFormatError",
    "adapt",
    "adapt_all",
    "decide",
    "describe",
    "is_provider_format",
    "module",
    "read",
    "reader",
    "render_stop_table",
    "stop_table",
    "stop_values",
    "stream_of",
]
