"""diagnose reads each message of a run once: counted, not timed, on a run and on one twice as long.

Each request of an agent run repeats the whole conversation so far, so a reader
that converted every request's messages again would do 1 + 2 + … + n
conversions for a run of n calls: doubling the run would quadruple the work.
These tests count the conversions (and the responses adapted) through the whole
of :func:`agentloops.diagnose.diagnose`, so a return to quadratic reading fails
here whatever the machine's speed (``benchmarks/bench_diagnose.py`` times it).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import agentloops.diagnose.otel as otel
import agentloops.diagnose.requests as requests
from agentloops.diagnose import diagnose
from agentloops.diagnose.model import TurnBuilder

CALLS = 20
"""Model calls in the shorter run (the longer one has twice as many)."""


def counting(counter: Counter[str], name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, counting its calls under ``name``."""
    def counted(*args: Any, **kwargs: Any) -> Any:
        counter[name] += 1
        return function(*args, **kwargs)
    return counted


def chat_run(calls: int) -> list[dict[str, Any]]:
    """One openai-chat run of ``calls`` calls as request/response lines, each request repeating the conversation."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Read every page."}]
    rows = []
    for n in range(calls):
        if n == calls - 1:
            message: dict[str, Any] = {"role": "assistant", "content": "Done."}
            finish = "stop"
        else:
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{n}", "type": "function", "function": {"name": "read", "arguments": f'{{"page": {n}}}'}}]}
            finish = "tool_calls"
        rows.append({"request": {"messages": list(messages)},
                     "response": {"choices": [{"message": message, "finish_reason": finish}],
                                  "usage": {"prompt_tokens": 10 * n, "completion_tokens": 5}}})
        messages += [message, {"role": "tool", "tool_call_id": f"call_{n}", "content": f'{{"page": {n}, "text": "…"}}'}]
    return rows


def _attributes(values: dict[str, str]) -> list[dict[str, Any]]:
    return [{"key": key, "value": {"stringValue": value}} for key, value in values.items()]


def otel_run(calls: int) -> dict[str, Any]:
    """One trace of ``calls`` chat spans (GenAI conventions), each span's input repeating the conversation."""
    messages: list[dict[str, Any]] = [{"role": "user", "parts": [{"type": "text", "content": "Read every page."}]}]
    spans = [{"traceId": "ab" * 16, "spanId": "root", "name": "agent run", "startTimeUnixNano": "1",
              "attributes": _attributes({"gen_ai.agent.name": "reader"})}]
    for n in range(calls):
        last = n == calls - 1
        part = ({"type": "text", "content": "Done."} if last else
                {"type": "tool_call", "id": f"call_{n}", "name": "read", "arguments": {"page": n}})
        output = {"role": "assistant", "parts": [part], "finish_reason": "stop" if last else "tool_call"}
        spans.append({"traceId": "ab" * 16, "spanId": f"chat{n}", "parentSpanId": "root", "name": "chat",
                      "startTimeUnixNano": str(10 + n), "attributes": _attributes({
                          "gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(messages),
                          "gen_ai.output.messages": json.dumps([output])})})
        messages += [{"role": "assistant", "parts": [part]},
                     {"role": "user", "parts": [{"type": "tool_call_response", "id": f"call_{n}",
                                                 "response": {"page": n}}]}]
    spans.append(spans.pop(0))  # exporters send the root after its children
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def pairs_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, calls: int) -> Counter[str]:
    """What diagnosing one chat run of ``calls`` calls did: messages converted, responses adapted, messages keyed."""
    counter: Counter[str] = Counter()
    key, convert = requests._SHAPES["openai-chat"]
    with monkeypatch.context() as patch:
        patch.setitem(requests._SHAPES, "openai-chat", (key, counting(counter, "converted", convert)))
        each_format = requests.reader  # a request reader takes its format's response reader from it
        patch.setattr(requests, "reader", lambda fmt: counting(counter, "adapted", each_format(fmt)))
        patch.setattr(TurnBuilder, "_key", counting(counter, "keyed", TurnBuilder._key))
        log = tmp_path / f"chat-{calls}.jsonl"
        log.write_text("".join(json.dumps(row) + "\n" for row in chat_run(calls)), encoding="utf-8")
        report = diagnose(log)
    assert (report.runs, report.calls) == (1, calls)
    return counter


def otel_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, calls: int) -> Counter[str]:
    """What diagnosing one trace of ``calls`` chat spans did: input messages converted, responses read."""
    counter: Counter[str] = Counter()
    with monkeypatch.context() as patch:
        patch.setattr(otel, "_input_message", counting(counter, "converted", otel._input_message))
        patch.setattr(otel, "response_of", counting(counter, "adapted", otel.response_of))
        patch.setattr(TurnBuilder, "_key", counting(counter, "keyed", TurnBuilder._key))
        log = tmp_path / f"otel-{calls}.jsonl"
        log.write_text(json.dumps(otel_run(calls)) + "\n", encoding="utf-8")
        report = diagnose(log)
    assert (report.format, report.runs, report.calls) == ("otel", 1, calls)
    return counter


@pytest.mark.parametrize("counts", [pairs_counts, otel_counts], ids=["pairs", "otel"])
def test_each_message_of_a_run_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counts: Any) -> None:
    short = counts(tmp_path, monkeypatch, CALLS)
    long = counts(tmp_path, monkeypatch, 2 * CALLS)
    for calls, counted in ((CALLS, short), (2 * CALLS, long)):
        messages = 1 + 2 * (calls - 1)  # the user's task, then a call and its result per call but the last
        assert counted["converted"] == messages  # each message once, not once per request that repeats it
        assert counted["adapted"] == calls
        assert counted["keyed"] <= messages
    assert long["converted"] == 2 * short["converted"] + 1  # twice the run, twice the work (not four times)
