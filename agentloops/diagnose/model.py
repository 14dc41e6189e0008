"""What every log reader turns a log into: runs of turns, in one shape whatever the format.

A *turn* is one model call: what the request added since the previous call,
the tool results it carried, and the response. A *run* is the turns of one
task plus how the caller ended it, when the log says. The detectors in
:mod:`agentloops.diagnose.detectors` read only these values, so one detector
serves the package's recordings, provider request/response logs and
OpenTelemetry spans alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, NamedTuple

from agentloops.errors import UsageError
from agentloops.i18n import N_, Phrase, shown
from agentloops.providers._common import json_encoder
from agentloops.providers.reply import Reply


class LogError(UsageError, ValueError):
    """A log file cannot be read as far as this point; the message names the file, the line and the field.

    The exception's text is in the language in use (what a learner reads); :attr:`english` keeps the same
    message in English, as a :class:`~agentloops.i18n.Phrase` where it was built from one (what a
    report keeps: ``report.stopped``, the JSON of ``agentloops diagnose --json``).
    """

    def __init__(self, message: str) -> None:
        super().__init__(shown(message))
        self.english = message


def log_error(template: str, /, **fields: object) -> LogError:
    """A :class:`LogError` worded by ``template`` (an ``N_()`` text, English) and its fields."""
    return LogError(Phrase(template, **fields))


def field_path(where: str, key: str) -> str:
    """``key`` inside ``where``: ``log:3: key`` at the top of an entry, ``log:3: rounds[2].key`` below it."""
    return f"{where}.{key}" if where.endswith("]") and ": " in where else f"{where}: {key}"


Role = Literal["system", "user", "assistant", "tool"]


class Msg(NamedTuple):
    """One message of a request, reduced to what the detectors compare.

    A named tuple, as :class:`Turn` is: a log holds a few of them a line, and a tuple is built
    several times faster than a frozen dataclass (which sets each field through ``object.__setattr__``).

    Attributes:
        role: ``system``, ``user``, ``assistant`` or ``tool`` (a tool result).
        text: the text (a tool result's output); ``None`` when there was none or it is unknown.
        calls: an assistant message's tool calls as ``(name, canonical arguments)``.
        call_id: for a tool result, the call it answers (``None`` when the format has no ids).
        name: for a tool result, the tool's name when the format says.
        is_error: the format marks this tool result as a failure.
    """

    role: Role
    text: str | None = None
    calls: tuple[tuple[str, str], ...] = ()
    call_id: str | None = None
    name: str | None = None
    is_error: bool = False


class Turn(NamedTuple):
    """One model call as the detectors see it (a named tuple: one is built a line).

    Attributes:
        call: 1-based call number within its run.
        where: where it is in the file (``line 12``, ``span 5f3a…``).
        reply: what came back, as read (:class:`~agentloops.providers.reply.Reply`: the detectors judge it as it
            is; its ``response``, the package's :class:`~agentloops.response.Response`, is built only when asked for).
        fresh: the request sent something besides the previous request and the model's own
            last reply; ``None`` when the log does not show the request.
        user_spoke: the request added a user message (the caller had returned, and the conversation went on).
        results: tool results this request sent for the first time, in order.
        tokens: prompt plus completion tokens of the call, when reported.
        signatures: the canonical arguments of each of the response's tool calls, when the reader
            computed them (it does, so a detector never parses arguments again).
    """

    call: int
    where: str
    reply: Reply
    fresh: bool | None
    user_spoke: bool
    results: tuple[Msg, ...]
    tokens: int | None
    signatures: tuple[str, ...] = ()

    def signature(self, index: int) -> str:
        """The canonical arguments of tool call ``index`` of the response."""
        if index < len(self.signatures):
            return self.signatures[index]
        return canonical_arguments(self.reply.tool_calls[index].arguments)


How = Literal["returned", "raised", "unknown"]


@dataclass(frozen=True, slots=True)
class Ending:
    """How the caller ended a run, as far as the log says.

    Attributes:
        how: ``returned`` (the caller got text back), ``raised``, or ``unknown`` (request logs do not say).
        error: what was raised, when it was.
        hit_cap: the run stopped at its step cap; ``None`` when the log does not say.
    """

    how: How = "unknown"
    error: str | None = None
    hit_cap: bool | None = None


@dataclass(frozen=True, slots=True)
class FailedAttempt:
    """An HTTP attempt that got no answer: the transport failed (a timeout, a refused connection), or the API
    answered with an error status (a rate limit, an overloaded server) and its error body.

    The OpenAI SDK logs a transport failure with ``"response": null`` and retries the
    same request (twice by default, 429 and 5xx too); it is part of an ordinary log, not damage.

    Attributes:
        where: where it is in the file.
        error: what failed, as ``type: message`` (``APITimeoutError: Request timed out.``).
    """

    where: str
    error: str


@dataclass(frozen=True, slots=True)
class Run:
    """The turns of one task and how it ended.

    Attributes:
        name: the run's id in the log (a trace id, a ``run`` field, or its ordinal).
        where: where it starts in the file.
        turns: its model calls, in order.
        ending: how the caller ended it.
        tail_results: results of the last turn's tool calls, when the log shows tools that ran
            after the last model call (an execute-tool span with no model call after it).
        complete: ``False`` when the log stopped inside the run, so how it ended is not known.
        failed_attempts: HTTP attempts of the run that got no answer (retried or not).
    """

    name: str
    where: str
    turns: tuple[Turn, ...]
    ending: Ending
    tail_results: tuple[Msg, ...] = ()
    complete: bool = True
    failed_attempts: tuple[FailedAttempt, ...] = ()


class TooDeep(UsageError, ValueError):
    """A value nested too deeply to be compared (the readers add where it is)."""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


WHOLE = 2**53
"""Largest whole number a JSON writer in JavaScript (or any double) writes exactly."""


def _number(text: str) -> float | int:
    """A JSON number written with a fraction or an exponent; a whole one (``1.0``, ``2e1``) is read as the int
    another writer would have written (``1``, ``20``), so the two compare equal, as the parsed values do."""
    value = float(text)
    return int(value) if value.is_integer() and abs(value) < WHOLE else value


STRICT = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_number)
"""How diagnose reads JSON: no ``NaN`` or ``Infinity`` (not JSON), and a whole number the same however written."""

CACHED = 64
"""Texts whose canonical form is kept: a call's arguments come back in the next request, a result is compared
twice (is it new? is it a repeat?), so a small cache spares most second parses while memory stays bounded."""


_SORTED = json_encoder(sort_keys=True, separators=(",", ":"))
_COMPACT = json_encoder(separators=(",", ":"))
"""The encoders of :func:`canonical_json`, built once (``json.dumps`` with options builds one a call)."""


def canonical_json(value: object) -> str:
    """``value`` as sorted, compact JSON: two writings of the same value give the same text."""
    try:
        return _SORTED(value)
    except RecursionError:
        raise TooDeep(Phrase(N_("nested too deeply to be read"))) from None
    except (TypeError, ValueError):  # keys of mixed types cannot be sorted: keep the given order
        return _COMPACT(value)


def canonical_text(text: str | None) -> str | None:
    """A tool result as compared: its JSON in canonical form when it is JSON, else the text as it is.

    Frameworks write the same result compact in one place and spaced in another
    (Pydantic AI's spans do), so raw text would call one result two.
    """
    return None if text is None else _canonical_text(text)


@lru_cache(maxsize=CACHED)
def _canonical_text(text: str) -> str:
    try:
        return canonical_json(STRICT.decode(text))
    except (ValueError, RecursionError):
        return text


@lru_cache(maxsize=CACHED)
def _canonical_arguments_text(arguments: str) -> str:
    if not arguments.strip():
        return "{}"
    try:
        value = STRICT.decode(arguments)
    except RecursionError:
        raise TooDeep(Phrase(N_("nested too deeply to be read"))) from None
    except ValueError:
        return arguments
    return canonical_json(value)


def canonical_arguments(arguments: object) -> str:
    """Arguments as sorted, compact JSON, so the same call compares equal across formats.

    Text that is not JSON (a call cut off mid-generation) stays as it is;
    arguments nested past what can be parsed raise :class:`TooDeep`.
    """
    if isinstance(arguments, str):
        return _canonical_arguments_text(arguments)
    return canonical_json(arguments)


class PrefixMemo:
    """The messages of a log's requests, each converted once per run of unchanged prefixes.

    Each request of an agent run repeats the whole conversation so far. The raw
    entries of a request are compared with the previous request's in one C-level
    list comparison; the unchanged prefix reuses the previous conversion (the very
    same :class:`Msg` objects, so comparing two requests is cheap too) and only the
    new entries are converted. Memory: one request.
    """

    def __init__(self) -> None:
        self._raw: list[Any] = []
        self._messages: list[Msg] = []
        self._ends: list[int] = []
        """How many messages the entries up to each one make (where a changed entry's messages start)."""

    def read(self, entries: list[Any], convert: Callable[[int, Any], Sequence[Msg]]) -> tuple[Msg, ...]:
        """All messages of ``entries``; ``convert(i, entry)`` turns entry ``i`` into its messages."""
        previous = self._raw
        keep = len(previous)
        if keep > len(entries) or entries[:keep] != previous:
            keep = next((i for i, (a, b) in enumerate(zip(entries, previous)) if a != b), min(keep, len(entries)))
        messages, ends = self._messages, self._ends
        if keep < len(ends):  # entries from ``keep`` on changed: their messages go
            del messages[ends[keep - 1] if keep else 0:], ends[keep:]
        for i in range(keep, len(entries)):
            messages += convert(i, entries[i])
            ends.append(len(messages))
        self._raw = entries
        return tuple(messages)


class TurnBuilder:
    """Turns requests (as :class:`Msg` lists) and responses into :class:`Turn` values, one call at a time.

    It keeps the previous request and what the run has already been told, so
    memory stays the size of one run. Like the package's own loop, a message
    is new information once: a tool result counts as new only the first time
    that call (tool and arguments) returns that text. A request that does not
    start with the previous one (the caller compacted or rewrote its history)
    is compared message by message against what was seen; an incremental
    request (the Responses API's ``previous_response_id``) sends only new items.
    """

    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self._previous: tuple[Msg, ...] | None = None
        self._seen: set[tuple[object, ...]] = set()

    def extends(self, request: tuple[Msg, ...]) -> bool:
        """True when ``request`` starts with the previous request: the same conversation going on."""
        previous = self._previous
        return previous is not None and request[: len(previous)] == previous

    def add(self, where: str, request: tuple[Msg, ...] | None, reply: Reply, tokens: int | None,
            *, incremental: bool = False) -> Turn:
        """Append the turn of one call and return it."""
        previous = self._previous
        added = request  # a first, an incremental or an unknown request: all of it is added
        if request is not None and not incremental and previous is not None:
            keep = len(previous)
            if request[:keep] == previous:
                added = request[keep:]
        fresh: bool | None = None
        results: list[Msg] = []
        user_spoke = False
        if added is not None:
            seen = self._seen
            fresh = False
            for message in added:  # one pass: what is new, the tool results, whether the user spoke
                role = message.role
                if role == "assistant":
                    continue
                if role == "tool":
                    results.append(message)
                elif role == "user":
                    user_spoke = True
                key = self._key(message)
                if key not in seen:
                    fresh = True
                    seen.add(key)
        turns = self.turns
        calls = reply.tool_calls
        signatures = tuple([canonical_arguments(c.arguments) for c in calls]) if calls else ()
        turn = Turn(len(turns) + 1, where, reply, fresh, user_spoke and bool(turns), tuple(results), tokens,
                    signatures)
        turns.append(turn)
        if request is not None and not incremental:
            self._previous = request
        return turn

    def _key(self, message: Msg) -> tuple[object, ...]:
        """What makes a message new information: a tool result once per (tool, arguments, text)."""
        if message.role != "tool":
            return (message.role, message.text)
        last = self.turns[-1] if self.turns else None
        if last is not None:
            for index, call in enumerate(last.reply.tool_calls):
                if call.id == message.call_id:
                    return ("tool", call.name, last.signature(index), canonical_text(message.text))
        return ("tool", message.name, None, canonical_text(message.text))


def results_for(turn_calls: int, results: Iterable[Msg], call_ids: tuple[str, ...]) -> list[Msg | None]:
    """The result of each of a turn's calls: matched by call id where both have one, else by position."""
    pool = list(results)
    by_id = {m.call_id: m for m in pool if m.call_id}
    if not by_id:  # no result names its call: by position
        return [pool[i] if i < len(pool) else None for i in range(turn_calls)]
    return [by_id.get(call_ids[i]) if i < len(call_ids) else None for i in range(turn_calls)]
