"""JSON Lines of request/response pairs in the five provider shapes, as SDK hooks and proxies write them.

One line per model call::

    {"request": {...the body sent...}, "response": {...the body returned...}}

with three optional fields: ``"format"`` (one of
:data:`agentloops.providers.FORMATS`; otherwise ``--format`` or the shape of
the response decides), ``"run"`` (an id; lines of one run must be
contiguous) and ``"error"`` (what the caller raised after this call, as a
failure hook logs it). Without ``"run"``, a new run starts whenever a request
does not continue the previous one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agentloops.diagnose.model import Ending, Run, TurnBuilder, log_error
from agentloops.diagnose.requests import read_request
from agentloops.errors import UsageError
from agentloops.i18n import N_, Phrase
from agentloops.providers import FORMATS, adapt

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


class _Open:
    """The run being read: its builder, where it began and its id."""

    def __init__(self, name: str | None, where: str, ordinal: int) -> None:
        self.named = name is not None
        self.name = name if name is not None else f"run {ordinal}"
        self.where = where
        self.builder = TurnBuilder()
        self.error: str | None = None

    def close(self, complete: bool = True) -> Run:
        ending = Ending("raised", self.error) if self.error else Ending()
        return Run(self.name, self.where, tuple(self.builder.turns), ending, complete=complete)


def read_pairs(items: Iterator[tuple[str, dict[str, Any]]], format: str | None = None) -> Iterator[Run]:
    """Runs from request/response lines; the run being read when the log stops is yielded as incomplete."""
    current: _Open | None = None
    count = 0
    try:
        for where, line in items:
            name, request, incremental, response, tokens, error = _line(where, line, format)
            if _starts(current, name, request, incremental):
                if current is not None:
                    yield current.close()
                count += 1
                current = _Open(name, where, count)
            assert current is not None
            current.builder.add(where, request, response, tokens, incremental=incremental)
            current.error = error
    except UsageError:
        if current is not None and current.builder.turns:
            yield current.close(complete=False)
        raise
    if current is not None:
        yield current.close()


def _starts(current: _Open | None, name: str | None, request: Any, incremental: bool) -> bool:
    """A line begins a new run: the first line, after a raise, a new run id, or a request that does not continue."""
    if current is None or current.error is not None:
        return True
    if name is not None or current.named:
        return name != current.name
    return not incremental and not current.builder.extends(request)


def _line(where: str, line: dict[str, Any], format: str | None) -> tuple[Any, ...]:
    for key in ("request", "response"):
        if not isinstance(line.get(key), dict):
            got = _MISSING if key not in line else Phrase(N_("got {kind}"), kind=type(line[key]).__name__)
            raise log_error(N_("{where}: {key}: expected the {key} body as a JSON object; {got}"), where=where, key=key,
                            got=got)
    fmt = line.get("format", format) or sniff_format(line["response"], where)
    if fmt not in FORMATS:
        raise log_error(N_("{where}: format: expected one of {names}; got {value}"), where=where,
                        names=", ".join(FORMATS), value=repr(fmt))
    run = line.get("run")
    if run is not None and not isinstance(run, (str, int)):
        raise log_error(N_("{where}: run: expected a string or a number naming the run; got {kind}"), where=where,
                        kind=type(run).__name__)
    error = line.get("error")
    if error is not None and not isinstance(error, str):
        raise log_error(N_("{where}: error: expected what the caller raised, as a string; got {kind}"), where=where,
                        kind=type(error).__name__)
    try:
        request, incremental = read_request(fmt, line["request"])
        response = adapt(fmt, line["response"])
    except UsageError as exc:
        problem = exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], Phrase) else str(exc)
        raise log_error(N_("{where}: {problem}"), where=where, problem=problem) from None
    usage = response.usage
    tokens = None if usage is None else (usage.prompt_tokens or 0) + (usage.completion_tokens or 0)
    return (None if run is None else str(run)), request, incremental, response, tokens, error
