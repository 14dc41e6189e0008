"""JSON Lines of request/response pairs in the five provider shapes, as SDK hooks and proxies write them.

One line per model call::

    {"request": {...the body sent...}, "response": {...the body returned...}}

with three optional fields: ``"format"`` (one of
:data:`agentloops.providers.FORMATS`; otherwise ``--format`` or the shape of
the response decides), ``"run"`` (an id; lines of one run must be
contiguous) and ``"error"`` (what the caller raised after this call, as a
failure hook logs it). Without ``"run"``, a new run starts whenever a request
does not continue the previous one.

An HTTP attempt that failed at the transport is a line with ``"response": null``
and an ``"error"`` saying what failed (the OpenAI SDK's shape: it retries a
timed-out request twice by default); one the API refused has the API's error
body as its response (``{"error": {...}}``: a rate limit, an overloaded or
failing server, which the SDKs retry too). Either is kept as a failed attempt
of its run and shown in the report, not read as a damaged line.

Each request repeats the conversation so far; its messages are converted once
(:class:`~agentloops.diagnose.model.PrefixMemo`), so reading stays linear in the log.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from agentloops.diagnose.model import Ending, FailedAttempt, Run, TooDeep, TurnBuilder, canonical_json, log_error
from agentloops.diagnose.requests import RequestReader
from agentloops.diagnose.source import one_line
from agentloops.errors import UsageError
from agentloops.i18n import N_, Phrase
from agentloops.providers import FORMATS, Reply

_MISSING = Phrase(N_("missing"))


def sniff_format(body: object, where: str) -> str:
    """The provider format a response body is written in, told by its top-level keys."""
    if isinstance(body, dict):
        if "choices" in body:
            return "openai-chat"
        if body.get("object") == "response" or "output" in body:
            return "openai-responses"
        if body.get("type") == "message" or "stop_reason" in body:
            return "anthropic"
        if "candidates" in body or "promptFeedback" in body:
            return "gemini"
        if "done" in body or "done_reason" in body:
            return "ollama"
    raise log_error(N_("{where}: response: cannot tell the provider format from its keys; pass --format or add "
                       "\"format\" ({names})"), where=where, names=", ".join(FORMATS))


_UNKNOWN = Ending()
"""How a run of request/response lines ended when no error is logged: unknown (the log does not say)."""


class _Open:
    """The run being read: its builder, where it began, its id and its failed attempts."""

    def __init__(self, name: str | None, where: str, ordinal: int) -> None:
        self.named = name is not None
        self.name = name if name is not None else f"run {ordinal}"
        self.where = where
        self.builder = TurnBuilder()
        self.error: str | None = None
        self.attempts: list[FailedAttempt] = []

    def close(self, complete: bool = True, tail: list[FailedAttempt] | None = None) -> Run:
        """The run; ``tail``: attempts that failed after its last response (the caller then got their error)."""
        attempts = [*self.attempts, *(tail or ())]
        error = tail[-1].error if tail else self.error
        ending = Ending("raised", error) if error else _UNKNOWN
        return Run(self.name, self.where, tuple(self.builder.turns), ending, complete=complete,
                   failed_attempts=tuple(attempts))


class _Line(NamedTuple):
    """One request/response line, read: ``response`` is ``None`` for an attempt that got no answer."""

    run: str | None
    request: Any
    incremental: bool
    response: Reply | None
    tokens: int | None
    error: str | None


def read_pairs(items: Iterator[tuple[str, dict[str, Any]]], format: str | None = None) -> Iterator[Run]:
    """Runs from request/response lines; the run being read when the log stops is yielded as incomplete.

    An attempt that got no answer (``"response": null`` with an ``error``, or an error body)
    joins the run of the next response (the SDK's retry of the same request); attempts
    after a run's last response end that run: the caller got their error.
    """
    current: _Open | None = None
    pending: list[FailedAttempt] = []
    readers: dict[str, RequestReader] = {}
    count = 0
    try:
        for where, line in items:
            run, request, incremental, response, tokens, error = _line(where, line, format, readers)  # unpacked once
            if response is None:
                if current is not None and run is not None and current.named and run != current.name:
                    yield current.close(tail=pending)
                    pending, current = [], None
                if current is None:
                    count += 1
                    current = _Open(run, where, count)
                pending.append(FailedAttempt(where, error or "?"))
                continue
            if _starts(current, run, request, incremental):
                if current is not None and (current.builder.turns or current.attempts):
                    yield current.close()
                count += 1
                current = _Open(run, where, count)
            assert current is not None
            if pending:
                current.attempts.extend(pending)
                pending = []
            try:
                current.builder.add(where, request, response, tokens, incremental=incremental)
            except TooDeep:
                raise log_error(N_("{where}: nested too deeply to be a log entry"), where=where) from None
            current.error = error
    except UsageError:
        if current is not None and (current.builder.turns or current.attempts or pending):
            yield current.close(complete=False, tail=pending)
        raise
    if current is not None:
        yield current.close(tail=pending)


def _starts(current: _Open | None, name: str | None, request: Any, incremental: bool) -> bool:
    """A line begins a new run: the first line, after a raise, a new run id, or a request that does not continue."""
    if current is None or current.error is not None:
        return True
    if name is not None or current.named:
        return name != current.name
    if not current.builder.turns:
        return False  # the run so far is attempts that failed: this response is their retry
    return not incremental and not current.builder.extends(request)


def transport_error(where: str, error: object) -> str:
    """What failed in an attempt with no response, as ``type: message``.

    The OpenAI SDK raises ``APITimeoutError`` ("Request timed out.") or
    ``APIConnectionError`` after httpx's ``ReadTimeout`` / ``ConnectError``;
    loggers write it as an object (``type``, ``message``) or as text. An API's
    error body names its kind as ``type`` (OpenAI, Anthropic) or ``status`` (Gemini).
    """
    if isinstance(error, str):
        return one_line(error, 200)
    if isinstance(error, dict):
        kind = error.get("type") or error.get("name") or error.get("status") or error.get("code")
        message = error.get("message")
        parts = [str(v) for v in (kind, message) if isinstance(v, (str, int, float)) and str(v)]
        return one_line(": ".join(parts) if parts else canonical_json(error), 200)
    got = _MISSING if error is None else Phrase(N_("got {kind}"), kind=type(error).__name__)
    raise log_error(N_("{where}: error: a line without a response is an attempt that failed and must say why "
                       "(an object with type and message, or text); {got}"), where=where, got=got)


_ANSWERED = frozenset({"choices", "output", "content", "candidates", "message", "stop_reason", "done", "done_reason"})
"""Keys of a body that carries an answer, in one of the five formats (an error body has none of them)."""


def error_body(response: object) -> bool:
    """``response`` is an API's error body (HTTP 429 or 5xx): an ``error`` that is set, and no answer.

    OpenAI, Gemini and Ollama write ``{"error": ...}``, Anthropic ``{"type": "error", "error": {...}}``;
    a Responses body always has an ``error`` key, null unless it failed, and an ``output`` beside it.
    """
    return isinstance(response, dict) and response.get("error") not in (None, "", {}) \
        and _ANSWERED.isdisjoint(response)


def _line(where: str, line: dict[str, Any], format: str | None, readers: dict[str, RequestReader]) -> _Line:
    request, response = line.get("request"), line.get("response", 0)  # absent is not null: no failed attempt
    if not isinstance(request, dict):
        raise _not_a_body(where, line, "request")
    refused = error_body(response)
    failed = refused or response is None
    if not failed and not isinstance(response, dict):
        raise _not_a_body(where, line, "response")
    fmt = line.get("format", format) or ("openai-chat" if failed else sniff_format(response, where))
    if fmt not in FORMATS:
        raise log_error(N_("{where}: format: expected one of {names}; got {value}"), where=where,
                        names=", ".join(FORMATS), value=one_line(repr(fmt), 80))
    run = line.get("run")
    if run is not None and type(run) is not str:  # a string, the common case, is the run's name as it is
        if not isinstance(run, (str, int)) or isinstance(run, bool):
            raise log_error(N_("{where}: run: expected a string or a number naming the run; got {kind}"),
                            where=where, kind=type(run).__name__)
        run = str(run)
    if failed:
        return _Line(run, None, False, None, None,
                     transport_error(where, response["error"] if refused else line.get("error")))
    error = line.get("error")
    if error is not None and not isinstance(error, str):
        raise log_error(N_("{where}: error: expected what the caller raised, as a string; got {kind}"), where=where,
                        kind=type(error).__name__)
    reader = readers.get(fmt) or readers.setdefault(fmt, RequestReader(fmt))
    try:
        messages, incremental = reader.read(request)
        reply = reader.reply(response, "response")
    except UsageError as exc:
        problem = exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], Phrase) else str(exc)
        raise log_error(N_("{where}: {problem}"), where=where, problem=problem) from None
    except RecursionError:
        raise log_error(N_("{where}: nested too deeply to be a log entry"), where=where) from None
    return _Line(run, messages, incremental, reply, reply.tokens, error)


def _not_a_body(where: str, line: dict[str, Any], key: str) -> UsageError:
    """The error for a line whose ``key`` (request or response) is missing or not an object."""
    got = _MISSING if key not in line else Phrase(N_("got {kind}"), kind=type(line[key]).__name__)
    return log_error(N_("{where}: {key}: expected the {key} body as a JSON object; {got}"), where=where, key=key,
                     got=got)
