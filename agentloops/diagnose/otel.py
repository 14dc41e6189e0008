"""OpenTelemetry GenAI spans, exported as OTLP JSON, as runs.

Follows the GenAI semantic conventions: a model call is a span with
``gen_ai.operation.name = "chat"`` carrying ``gen_ai.input.messages`` and
``gen_ai.output.messages`` (JSON: ``role`` plus ``parts`` of type ``text``,
``tool_call`` and ``tool_call_response``), ``gen_ai.response.finish_reasons``
and ``gen_ai.usage.input_tokens`` / ``output_tokens``; a tool run is an
``execute_tool`` span (``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
``gen_ai.tool.call.result``); an agent run is the trace's root span, whose
error status means the caller got an exception. A chat span with an error
status and no output messages got no answer (a timeout, an overloaded API):
it is a failed attempt of its run, as a ``"response": null`` line is in a
request log, not a model call.

Each line (or the document) is one OTLP ``ExportTraceServiceRequest``
(``resourceSpans`` → ``scopeSpans`` → ``spans``), as the collector's file
exporter writes. Spans are kept per trace until the trace's root span
arrives (exporters send a parent after its children), so memory holds the
open traces only; traces still open when the log ends are incomplete runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, get_args

from pydantic import ValidationError

from agentloops.diagnose.model import (
    STRICT,
    Ending,
    FailedAttempt,
    Msg,
    PrefixMemo,
    Run,
    TooDeep,
    TurnBuilder,
    canonical_arguments,
    canonical_json,
    field_path,
    log_error,
)
from agentloops.diagnose.source import one_line
from agentloops.errors import UsageError
from agentloops.i18n import N_
from agentloops.providers import FORMATS, Reply, stop_values
from agentloops.response import FinishReason, Response, ToolCall, Usage

ERROR_STATUS = 2
"""``STATUS_CODE_ERROR`` in OTLP's ``Status.code``."""

_FAILED = "provider_error" if "provider_error" in get_args(FinishReason) else "unknown"
_SEMCONV_STOPS = {"tool_call": "tool_calls", "tool_calls": "tool_calls", "error": _FAILED}
"""The conventions' own finish reasons (``error``: the provider says the turn failed)."""


@cache
def stop_vocabulary() -> dict[str, str]:
    """Raw stop value (lower-cased) → normalised reason: the semantic conventions' values and every provider's.

    A value two providers map differently is left out (it then reads as ``unknown``).
    """
    merged: dict[str, str] = {}
    clashes: set[str] = set()
    for fmt in FORMATS:
        for value in stop_values(fmt):
            key = value.value.lower()
            if key.startswith("("):
                continue
            if merged.get(key, value.finish_reason) != value.finish_reason:
                clashes.add(key)
            merged[key] = value.finish_reason
    for key in clashes:
        merged.pop(key)
    merged.update(_SEMCONV_STOPS)
    return merged


@dataclass(frozen=True, slots=True)
class Span:
    """The parts of an OTLP span the reader uses."""

    where: str
    trace: str
    parent: str | None
    name: str
    start: int
    attributes: dict[str, Any]
    failed: bool
    status_message: str


READ = frozenset({"gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.input.messages", "gen_ai.output.messages",
                  "gen_ai.response.finish_reasons", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens",
                  "gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.tool.call.result"})
"""The span attributes the reader uses; the others (a framework's span carries a dozen more) are not converted."""


def _value(raw: object) -> Any:
    """An OTLP ``AnyValue`` as a Python value.

    The GenAI conventions let ``gen_ai.input.messages`` be a structured value rather than JSON text, so an
    exporter may write the messages as an ``arrayValue`` of ``kvlistValue`` objects: they read as the same list.
    """
    if not isinstance(raw, (dict, Mapping)):  # dict first, here and below: a parsed log's objects skip the ABC
        return None
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in raw:
            return raw[key]
    if "intValue" in raw:
        try:
            return int(raw["intValue"])
        except (TypeError, ValueError):
            return None
    if "arrayValue" in raw:
        values = raw["arrayValue"].get("values", []) if isinstance(raw["arrayValue"], (dict, Mapping)) else []
        return [_value(v) for v in values] if isinstance(values, list) else None
    if "kvlistValue" in raw:
        pairs = raw["kvlistValue"].get("values", []) if isinstance(raw["kvlistValue"], (dict, Mapping)) else []
        if not isinstance(pairs, list):
            return None
        return {p["key"]: _value(p.get("value")) for p in pairs
                if isinstance(p, (dict, Mapping)) and isinstance(p.get("key"), str)}
    return None


def _spans(where: str, export: dict[str, Any]) -> Iterator[Span]:
    if "resourceSpans" not in export:
        raise log_error(N_("{where}: resourceSpans: missing; expected an OTLP JSON trace export"), where=where)
    for i, resource in enumerate(_list(export, "resourceSpans", where)):
        at = f"{where}: resourceSpans[{i}]"
        for j, scope in enumerate(_list(_object(resource, at), "scopeSpans", at)):
            scope_at = f"{at}.scopeSpans[{j}]"
            for k, raw in enumerate(_list(_object(scope, scope_at), "spans", scope_at)):
                yield _span(f"{scope_at}.spans[{k}]", _object(raw, f"{scope_at}.spans[{k}]"))


def _span(where: str, raw: Mapping[str, Any]) -> Span:
    trace = raw.get("traceId")
    if not isinstance(trace, str) or not trace:
        raise log_error(N_("{where}.traceId: expected the trace id as a hex string; got {kind}"), where=where,
                        kind=type(trace).__name__)
    attributes: dict[str, Any] = {}
    for attribute in _list(raw, "attributes", where):
        key = attribute.get("key") if isinstance(attribute, (dict, Mapping)) else None
        if isinstance(key, str) and key in READ:
            attributes[key] = _value(attribute.get("value"))
    status: Mapping[str, Any] = raw["status"] if isinstance(raw.get("status"), (dict, Mapping)) else {}
    try:
        start = int(raw.get("startTimeUnixNano") or 0)
    except (TypeError, ValueError):
        raise log_error(N_("{where}.startTimeUnixNano: expected nanoseconds as a number or a string of digits"),
                        where=where) from None
    return Span(f"{where} ({raw.get('name')})", trace, raw.get("parentSpanId") or None, str(raw.get("name")), start,
                attributes, status.get("code") in (ERROR_STATUS, "STATUS_CODE_ERROR"), str(status.get("message", "")))


def _object(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, (dict, Mapping)):
        raise log_error(N_("{where}: expected a JSON object; got {kind}"), where=where, kind=type(value).__name__)
    return value


def _list(body: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = body.get(key) or []
    if not isinstance(value, list):
        raise log_error(N_("{where}: expected a list; got {kind}"), where=field_path(where, key),
                        kind=type(value).__name__)
    return value


def _messages(span: Span, key: str) -> list[Any] | None:
    raw = span.attributes.get(key)
    if raw is None:
        return None
    try:
        value = STRICT.decode(raw) if isinstance(raw, str) else raw
    except RecursionError:
        raise TooDeep(key) from None
    except ValueError:
        raise log_error(N_("{where}: {key}: expected a JSON list of messages; the text is not valid JSON"),
                        where=span.where, key=key) from None
    if not isinstance(value, list):
        raise log_error(N_("{where}: {key}: expected a JSON list of messages; got {kind}"), where=span.where, key=key,
                        kind=type(value).__name__)
    return value


def _parts(message: object, where: str) -> list[Mapping[str, Any]]:
    parts = _object(message, where).get("parts") or []
    if not isinstance(parts, list):
        raise log_error(N_("{where}.parts: expected a list of parts"), where=where)
    return [p for p in parts if isinstance(p, (dict, Mapping))]


def _text_of(value: object) -> str:
    return value if isinstance(value, str) else canonical_json(value)


def _string(entry: Mapping[str, Any], key: str, where: str) -> str | None:
    """An id or a name a result is matched by: a string, or absent."""
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        raise log_error(N_("{where}: {key}: expected a string; got {kind}"), where=where, key=key,
                        kind=type(value).__name__)
    return value


def request_of(span: Span, memo: PrefixMemo | None = None) -> tuple[Msg, ...] | None:
    """``gen_ai.input.messages`` as :class:`Msg` values (``None`` when content was not captured).

    ``memo``: the trace's, so the conversation each span repeats is converted once.
    """
    messages = _messages(span, "gen_ai.input.messages")
    if messages is None:
        return None
    return (memo or PrefixMemo()).read(messages, lambda i, message: _input_message(span, i, message))


def _input_message(span: Span, i: int, message: object) -> list[Msg]:
    """One input message: its tool results, then the message itself."""
    out: list[Msg] = []
    at = f"{span.where}: gen_ai.input.messages[{i}]"
    role = _object(message, at).get("role")
    texts: list[str] = []
    calls: list[tuple[str, str]] = []
    for part in _parts(message, at):
        kind = part.get("type")
        if kind == "tool_call_response":
            result = part.get("response", part.get("result"))
            out.append(Msg("tool", _text_of(result), call_id=_string(part, "id", at),
                           name=_string(part, "name", at)))
        elif kind == "tool_call":
            calls.append((str(part.get("name")), canonical_arguments(part.get("arguments") or {})))
        elif kind == "text" and isinstance(part.get("content"), str):
            texts.append(part["content"])
    text = "".join(texts) if texts else None
    if role == "assistant":
        out.append(Msg("assistant", text, tuple(calls)))
    elif text is not None:
        out.append(Msg("system" if role == "system" else "user", text))
    return out


def response_of(span: Span) -> Response:
    """``gen_ai.output.messages`` and the finish reason as a :class:`Response`."""
    messages = _messages(span, "gen_ai.output.messages") or []
    texts: list[str] = []
    calls: list[ToolCall] = []
    finish: object = None
    for i, message in enumerate(messages):
        at = f"{span.where}: gen_ai.output.messages[{i}]"
        finish = finish or _object(message, at).get("finish_reason")
        for part in _parts(message, at):
            if part.get("type") == "text" and isinstance(part.get("content"), str):
                texts.append(part["content"])
            elif part.get("type") == "tool_call":
                arguments = part.get("arguments")
                calls.append(ToolCall(id=str(part.get("id") or f"call_{len(calls) + 1}"),
                                      name=str(part.get("name") or "?"),
                                      arguments=arguments if isinstance(arguments, str) else
                                      json.dumps(arguments or {}, ensure_ascii=False)))
    reasons = span.attributes.get("gen_ai.response.finish_reasons")
    raw = reasons[0] if isinstance(reasons, list) and reasons else finish
    if isinstance(raw, str) and not raw.strip():
        key = "gen_ai.response.finish_reasons" if isinstance(reasons, list) and reasons else "finish_reason"
        raise log_error(N_("{where}: {key}: expected a finish reason; got an empty string"), where=span.where,
                        key=key)
    raw_text = str(raw) if raw is not None else "(none)"
    reason = stop_vocabulary().get(raw_text.lower(), "unknown")
    inputs = span.attributes.get("gen_ai.usage.input_tokens")
    outputs = span.attributes.get("gen_ai.usage.output_tokens")
    usage = Usage(prompt_tokens=inputs if isinstance(inputs, int) and inputs >= 0 else None,
                  completion_tokens=outputs if isinstance(outputs, int) and outputs >= 0 else None)
    return Response.model_validate({"content": "".join(texts) if texts else None, "tool_calls": calls,
                                    "finish_reason": reason, "raw_finish_reason": raw_text, "usage": usage})


def tool_result_of(span: Span) -> Msg:
    """An ``execute_tool`` span as a tool result (an error status marks a failure)."""
    result = span.attributes.get("gen_ai.tool.call.result")
    text = _text_of(result) if result is not None else span.status_message or None
    return Msg("tool", text, call_id=_string(span.attributes, "gen_ai.tool.call.id", span.where),
               name=_string(span.attributes, "gen_ai.tool.name", span.where), is_error=span.failed)


def trace_run(trace: str, spans: list[Span], complete: bool) -> Run:
    """The chat and tool spans of one trace as a run; the root span says how it ended."""
    ordered = sorted(spans, key=lambda s: s.start)
    builder = TurnBuilder()
    memo = PrefixMemo()
    tools: list[Msg] = []
    attempts: list[FailedAttempt] = []
    for span in ordered:
        operation = span.attributes.get("gen_ai.operation.name")
        try:
            if operation == "chat" and span.failed and "gen_ai.output.messages" not in span.attributes:
                # the model call got no answer (a timeout, an error status): a failed attempt, as in a request log
                attempts.append(FailedAttempt(span.where, one_line(span.status_message or "error", 200)))
            elif operation == "chat":
                response = response_of(span)
                usage = response.usage
                tokens = None if usage is None or usage.prompt_tokens is None else \
                    usage.prompt_tokens + (usage.completion_tokens or 0)
                builder.add(span.where, request_of(span, memo), Reply.of(response), tokens)
                tools = []
            elif operation == "execute_tool":
                tools.append(tool_result_of(span))
        except (TooDeep, RecursionError):
            raise log_error(N_("{where}: nested too deeply to be a log entry"), where=span.where) from None
        except ValidationError as exc:  # a value the response model refuses (a negative count, an odd type)
            raise log_error(N_("{where}: {problem}"), where=span.where,
                            problem=one_line(str(exc.errors()[0].get("msg", exc)), 200)) from None
    root = next((s for s in spans if s.parent is None), None)
    ending = Ending()
    name = trace
    if root is not None:
        ending = Ending("raised", root.status_message or "error") if root.failed else Ending("returned")
        agent = root.attributes.get("gen_ai.agent.name")
        name = f"{agent} (trace {trace[:8]})" if isinstance(agent, str) and agent else trace
    return Run(name, ordered[0].where if ordered else trace, tuple(builder.turns), ending, tuple(tools),
               complete=complete, failed_attempts=tuple(attempts))


def read_otel(items: Iterator[tuple[str, dict[str, Any]]]) -> Iterator[Run]:
    """Runs from OTLP JSON exports, one per trace that has a model call (answered or failed), as each trace's root
    arrives."""
    open_traces: dict[str, list[Span]] = {}
    try:
        for where, export in items:
            for span in _spans(where, export):
                open_traces.setdefault(span.trace, []).append(span)
                if span.parent is None:
                    run = trace_run(span.trace, open_traces.pop(span.trace), complete=True)
                    if run.turns or run.failed_attempts:
                        yield run
    except UsageError:
        yield from _leftovers(open_traces)
        raise
    yield from _leftovers(open_traces)


def _leftovers(open_traces: dict[str, list[Span]]) -> Iterator[Run]:
    for trace, spans in open_traces.items():
        run = trace_run(trace, spans, complete=False)
        if run.turns or run.failed_attempts:
            yield run
    open_traces.clear()
