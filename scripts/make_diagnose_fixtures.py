"""Generate the logs that tests/test_diagnose*.py diagnose, from running code — none is written by hand.

Three parts, each writing under data/diagnose/ and recording what it planted in
data/diagnose/expected.json (file → the finding kinds expected in each run, in
log order; an empty list is a healthy run):

``records``  the package's own loop: ``agentloops.run(...).to_dict()``, as ``agentloops run --json`` prints.
``pairs``    the package's loop over the shipped provider scenarios, logged as request/response
             JSON Lines in all five provider shapes (requests built by the recorder's own
             ``SDKModel.request_body``; Gemini and Ollama requests built here), plus tool-level
             runs (polling, a transient retry, repeats, alternation, a failure streak).
``otel``     Pydantic AI's own agent loop with its ``FunctionModel``, instrumented with
             OpenTelemetry (in-memory exporter), spans serialised as OTLP JSON. Needs the
             frameworks venv: ``pip install pydantic-ai-slim opentelemetry-sdk`` (see --help).
``heldout``  (under ``heldout/``) logs as real code writes them, each with one planted bug and one trait that
             once misled diagnose: Pydantic AI spans of one call repeated eight times whose
             last result is compact JSON and the others spaced; the OpenAI SDK's HTTP
             exchanges (its own client over a scripted transport) with one attempt that timed
             out and was retried; and a hand-written loop over the SDK stopped by its own
             step cap of 10 with a tool call unanswered, the cap stated nowhere in the log.

Usage::

    .venv/bin/python scripts/make_diagnose_fixtures.py records pairs
    /tmp/venv-fw/bin/python scripts/make_diagnose_fixtures.py otel

The otel part imports nothing from agentloops, so it runs in any venv with
Pydantic AI and the OpenTelemetry SDK.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "diagnose"
"""Where the logs go (tests point it at a temporary folder to regenerate them)."""


def save_expected(updates: dict[str, list[list[str]]]) -> None:
    path = OUT / "expected.json"
    expected = json.loads(path.read_text()) if path.exists() else {}
    expected.update(updates)
    path.write_text(json.dumps(dict(sorted(expected.items())), indent=1) + "\n")


def write_lines(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


# --- records: the package's own loop ----------------------------------------------------------------------------

# (scenario, criterion) → what the run should show; the README's table says why
RECORD_PLAN: list[tuple[str, str, list[str]]] = [
    ("normal", "content", []),
    ("normal", "correct", []),
    ("talk-only", "tool_calls", []),
    ("talk-and-call", "content", ["premature_answer"]),
    ("talk-and-call", "correct", []),
    ("truncated", "content", ["reasked", "cap_returned_last"]),
    ("truncated", "tool_calls", ["abnormal_answer"]),
    ("truncated", "correct", []),
    ("content-filter", "finish_reason", ["reasked", "cap_returned_last"]),
    ("content-filter", "tool_calls", ["abnormal_answer"]),
    ("tool-call-with-stop", "finish_reason", ["premature_answer"]),
    ("tool-call-with-stop", "tool_calls", []),
    ("cut-off-arguments", "tool_calls", ["reasked", "cap_returned_last"]),
    ("long-chain", "content", ["cap_returned_last"]),
    ("long-chain", "correct", []),
]


def make_records() -> dict[str, list[list[str]]]:
    from agentloops import run

    rows = [run(scenario, criterion=criterion).to_dict() for scenario, criterion, _ in RECORD_PLAN]
    write_lines(OUT / "recordings" / "runs.jsonl", rows)
    single = OUT / "recordings" / "truncated.content.json"
    single.write_text(json.dumps(run("truncated", criterion="content").to_dict(), indent=2) + "\n")
    return {"recordings/runs.jsonl": [kinds for *_, kinds in RECORD_PLAN],
            "recordings/truncated.content.json": [["reasked", "cap_returned_last"]]}


# --- pairs: request/response JSON Lines in five provider shapes ------------------------------------------------

PAIR_PLAN: list[tuple[str, str, list[str]]] = [
    ("01-normal", "correct", []),
    ("02-talk-and-call", "content", ["premature_answer"]),
    ("01-normal", "tool_calls", []),
    ("03-truncated", "content", ["reasked", "cap_returned_last"]),
    ("03-truncated", "tool_calls", ["abnormal_answer"]),
    ("02-talk-and-call", "correct", []),
]


class _Raw:
    """What an SDK's ``with_raw_response`` returns, for the recorder's reader."""

    def __init__(self, body: dict[str, Any]) -> None:
        self._bytes = json.dumps(body).encode()

    def read(self) -> bytes:
        return self._bytes


def _scripted_sdk_model(fmt: str, bodies: Sequence[dict[str, Any]]) -> Any:
    """The recorder's own SDKModel, its network call replaced by the scenario's raw bodies (last one repeats)."""
    from agentloops.providers.record import SDKModel

    class Replayed(SDKModel):
        def _send(self, body: dict[str, Any]) -> Any:
            return _Raw(bodies[min(len(self.requests), len(bodies)) - 1])

    return Replayed(None, fmt, model="scripted", tools=[])  # type: ignore[arg-type]


class _OwnRequests:
    """Gemini and Ollama are not recorder formats: build their request bodies from the transcript here."""

    def __init__(self, fmt: str, bodies: Sequence[dict[str, Any]]) -> None:
        self.format, self.bodies = fmt, bodies
        self.requests: list[dict[str, Any]] = []
        self.raw_responses: list[dict[str, Any]] = []

    def __call__(self, messages: Sequence[Any]) -> Any:
        from agentloops.providers import adapt

        self.requests.append(self.request_body(messages))
        raw = self.bodies[min(len(self.requests), len(self.bodies)) - 1]
        self.raw_responses.append(raw)
        return adapt(self.format, raw)

    def request_body(self, messages: Sequence[Any]) -> dict[str, Any]:
        replies = iter(self.raw_responses)
        if self.format == "gemini":
            contents = []
            for m in messages:
                if m.role == "assistant":
                    contents.append(next(replies)["candidates"][0]["content"])
                elif m.role == "tool":
                    contents.append({"role": "user", "parts": [
                        {"functionResponse": {"name": m.name, "response": {"result": m.content}}}]})
                else:
                    contents.append({"role": "user", "parts": [{"text": m.content}]})
            return {"contents": contents}
        out = []
        for m in messages:
            if m.role == "assistant":
                out.append(next(replies)["message"])
            elif m.role == "tool":
                out.append({"role": "tool", "content": m.content, "tool_name": m.name})
            else:
                out.append({"role": m.role, "content": m.content})
        return {"model": "scripted", "messages": out}


def _logged_run(fmt: str, scenario_file: Path, criterion: str) -> list[dict[str, Any]]:
    from agentloops.loop import run_loop
    from agentloops.run_errors import RunError
    from agentloops.scenario import read_scenario_file

    scenario = read_scenario_file(scenario_file)
    bodies = scenario.raw_responses
    model = _scripted_sdk_model(fmt, bodies) if fmt in ("openai-chat", "openai-responses", "anthropic") \
        else _OwnRequests(fmt, bodies)
    error = None
    try:
        run_loop(model, scenario.tools, criterion=criterion, prompt=scenario.prompt, label=scenario.name)
    except RunError as exc:
        error = f"{type(exc).__name__}: {exc}"
    rows = [{"format": fmt, "request": req, "response": resp} for req, resp in zip(model.requests, model.raw_responses)]
    if error:
        rows[-1]["error"] = error  # what a failure hook logs: the caller raised after this call
    return rows


def make_pairs() -> dict[str, list[list[str]]]:
    from agentloops.providers import FORMATS

    expected: dict[str, list[list[str]]] = {}
    for fmt in FORMATS:
        rows: list[dict[str, Any]] = []
        for n, (stem, criterion, _) in enumerate(PAIR_PLAN, start=1):
            run = _logged_run(fmt, ROOT / "data" / "scenarios" / "providers" / f"{fmt}-{stem}.json", criterion)
            rows += [{"run": f"{stem}.{criterion}.{n}", **row} for row in run]
        write_lines(OUT / "pairs" / f"{fmt}.jsonl", rows)
        expected[f"pairs/{fmt}.jsonl"] = [kinds for *_, kinds in PAIR_PLAN]
    for name, (rows, kinds) in tool_runs().items():
        write_lines(OUT / "pairs" / f"tools-{name}.jsonl", rows)
        expected[f"pairs/tools-{name}.jsonl"] = [kinds]
    return expected


def _chat_body(response: Any, n: int) -> dict[str, Any]:
    """A Chat Completions body for a Response, as a server would send it."""
    message: dict[str, Any] = {"role": "assistant", "content": response.content}
    if response.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in response.tool_calls]
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "model": "scripted",
            "choices": [{"index": 0, "message": message, "finish_reason": response.finish_reason}],
            "usage": {"prompt_tokens": 40 + 12 * n, "completion_tokens": 12, "total_tokens": 52 + 12 * n}}


def _call(name: str, arguments: dict[str, Any], n: int) -> dict[str, Any]:
    return {"content": None, "tool_calls": [{"id": f"call_{n}", "name": name, "arguments": arguments}],
            "finish_reason": "tool_calls"}


def _script(calls: Sequence[tuple[str, dict[str, Any]]], answer: str) -> Callable[[Sequence[Any]], dict[str, Any]]:
    """A model that makes ``calls`` one per round, then answers."""

    def reply(messages: Sequence[Any]) -> dict[str, Any]:
        n = sum(m.role == "assistant" for m in messages)
        if n < len(calls):
            return _call(*calls[n], n + 1)
        return {"content": answer, "tool_calls": [], "finish_reason": "stop"}

    return reply


def _counter_tool(results: Sequence[str]) -> Callable[[dict[str, Any]], str]:
    calls = itertools.count()
    return lambda arguments: results[min(next(calls), len(results) - 1)]


def _flaky(failures: int) -> Callable[[dict[str, Any]], str]:
    calls = itertools.count()

    def fetch(arguments: dict[str, Any]) -> str:
        if next(calls) < failures:
            raise TimeoutError("the server did not answer within 10 s")
        return "200 OK: 42 lines"

    return fetch


def tool_runs() -> dict[str, tuple[list[dict[str, Any]], list[str]]]:
    """Runs of the package's loop with tools that change, fail or repeat, logged as Chat Completions pairs."""
    notes = {"path": "notes.txt"}
    plans: dict[str, tuple[Any, dict[str, Any], list[str]]] = {
        "healthy-multi-tool": (_script([("read_file", notes), ("count_lines", notes),
                                        ("read_file", {"path": "todo.txt"})], "42 and 7 lines"),
                               {"read_file": "three lines", "count_lines": "42"}, []),
        "polling": (_script([("check_job", {"id": 7})] * 4, "the job is done"),
                    {"check_job": _counter_tool(["queued", "running 40%", "running 90%", "done"])}, []),
        "transient-retry": (_script([("fetch", {"url": "/notes"})] * 3, "42 lines"), {"fetch": _flaky(2)}, []),
        "repeated-call": (_script([("read_file", notes)] * 6, "42 lines"), {"read_file": "three lines"},
                          ["repeated_tool_call"]),
        "ping-pong": (_script([("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"})] * 3, "done"),
                      {"read_file": _counter_tool(["A", "B"] * 3)}, ["ping_pong"]),
        "failure-streak": (_script([("fetch", {"url": "/notes"})] * 5, "I could not fetch it"), {"fetch": _flaky(99)},
                           ["failure_streak"]),
    }
    from agentloops.loop import run_loop
    from agentloops.stubs import FunctionModel, to_response

    out = {}
    for name, (script, tools, kinds) in plans.items():
        model = FunctionModel(script)
        run_loop(model, tools, criterion="correct", max_steps=12, label=name)
        rows = []
        for n, request in enumerate(model.requests):
            reply = model.function(request)  # the script is a pure function of the transcript
            rows.append({"request": {"model": "scripted", "messages": [m.to_dict() for m in request]},
                         "response": _chat_body(to_response(reply, name), n)})
        out[name] = (rows, kinds)
    return out


# --- otel: Pydantic AI's loop, instrumented ---------------------------------------------------------------------

def _otel_plans() -> dict[str, tuple[list[Any], dict[str, Callable[..., str]], list[str], dict[str, Any]]]:
    from pydantic_ai import ModelRetry
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

    def call(name: str, n: int, **arguments: Any) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(name, arguments, tool_call_id=f"call_{n}")], finish_reason="tool_call")

    def answer(text: str) -> ModelResponse:
        return ModelResponse(parts=[TextPart(text)], finish_reason="stop")

    counters: dict[str, Iterator[int]] = {}

    def counted(key: str) -> int:
        return next(counters.setdefault(key, itertools.count()))

    def fetch(url: str) -> str:
        if counted("fetch") < 1:
            raise ModelRetry("timeout: the server did not answer within 10 s")
        return "200 OK: 42 lines"

    def broken(url: str) -> str:
        raise ModelRetry("error: connection refused")

    statuses = ["queued", "running 40%", "running 90%", "done"]
    read = {"notes.txt": "three lines", "a.txt": "A", "b.txt": "B", "todo.txt": "seven lines"}
    tools = {"read_file": lambda path: read.get(path, "no such file"), "count_lines": lambda path: "42",
             "check_job": lambda id: statuses[min(counted("job"), 3)], "fetch": fetch, "broken_fetch": broken}
    return {
        "normal": ([call("read_file", 1, path="notes.txt"), call("count_lines", 2, path="notes.txt"),
                    answer("notes.txt has 42 lines.")], tools, [], {}),
        "talk-and-call": ([ModelResponse(parts=[TextPart("Let me open the file first."), ToolCallPart(
            "read_file", {"path": "notes.txt"}, tool_call_id="call_1")], finish_reason="tool_call"),
            answer("It has 42 lines.")], tools, [], {}),
        "truncated": ([ModelResponse(parts=[], finish_reason="length")], tools, [], {}),
        "content-filter": ([call("read_file", 1, path="notes.txt"),
                            ModelResponse(parts=[], finish_reason="content_filter")], tools, [], {}),
        "repeated-call": ([call("read_file", n, path="notes.txt") for n in range(1, 6)] + [answer("42 lines")],
                          tools, ["repeated_tool_call"], {}),
        "ping-pong": ([call("read_file", n, path="a.txt" if n % 2 else "b.txt") for n in range(1, 7)]
                      + [answer("done")], tools, ["ping_pong"], {}),
        "polling": ([call("check_job", n, id=7) for n in range(1, 5)] + [answer("the job is done")], tools, [], {}),
        "transient-retry": ([call("fetch", 1, url="/notes"), call("fetch", 2, url="/notes"), answer("42 lines")],
                            tools, [], {"retries": 3}),
        "failure-streak": ([call("broken_fetch", n, url="/notes") for n in range(1, 5)]
                           + [answer("I could not fetch it")], tools, ["failure_streak"], {"retries": 6}),
        "healthy-multi-tool": ([call("read_file", 1, path="notes.txt"), call("count_lines", 2, path="notes.txt"),
                                call("read_file", 3, path="todo.txt"), answer("42 and 7 lines")], tools, [], {}),
        "step-cap": ([call("read_file", n, path=f"page{n}.txt") for n in range(1, 20)], tools, [],
                     {"request_limit": 4}),
    }


def _any_value(value: Any) -> dict[str, Any]:
    """An attribute value in OTLP JSON (integers as strings, as the protobuf JSON mapping writes int64)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    return {"stringValue": str(value)}


def otlp_json(spans: Sequence[Any]) -> dict[str, Any]:
    """Finished SDK spans as one OTLP ``ExportTraceServiceRequest`` in its JSON encoding (hex ids)."""
    def one(span: Any) -> dict[str, Any]:
        return {"traceId": format(span.context.trace_id, "032x"), "spanId": format(span.context.span_id, "016x"),
                "parentSpanId": format(span.parent.span_id, "016x") if span.parent else "",
                "name": span.name, "kind": span.kind.value + 1,
                "startTimeUnixNano": str(span.start_time), "endTimeUnixNano": str(span.end_time),
                "attributes": [{"key": k, "value": _any_value(v)} for k, v in span.attributes.items()],
                "events": [{"name": e.name, "timeUnixNano": str(e.timestamp),
                            "attributes": [{"key": k, "value": _any_value(v)} for k, v in e.attributes.items()]}
                           for e in span.events],
                "status": {"code": span.status.status_code.value, "message": span.status.description or ""}}

    scope = spans[0].instrumentation_scope
    resource = [{"key": k, "value": _any_value(v)} for k, v in spans[0].resource.attributes.items()]
    return {"resourceSpans": [{"resource": {"attributes": resource}, "scopeSpans": [
        {"scope": {"name": scope.name, "version": scope.version or ""}, "spans": [one(s) for s in spans]}]}]}


def make_otel() -> dict[str, list[list[str]]]:
    from importlib.metadata import version

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pydantic_ai import Agent, Tool
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.usage import UsageLimits

    expected = {}
    for name, (script, tools, kinds, options) in _otel_plans().items():
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        replies = iter(script)
        model = FunctionModel(lambda messages, info, replies=replies: next(replies))
        agent = Agent(model, name=name, tools=[Tool(f, name=n, max_retries=options.get("retries", 1))
                                               for n, f in tools.items()])
        agent.instrument = InstrumentationSettings(tracer_provider=provider, include_content=True)
        try:
            result = agent.run_sync("How many lines does notes.txt have?",
                                    usage_limits=UsageLimits(request_limit=options.get("request_limit", 50)))
            outcome = f"returned {result.output!r}"
        except Exception as exc:  # the framework's own behaviour is what the fixture records
            outcome = f"raised {type(exc).__name__}: {str(exc).splitlines()[0]}"
        spans = exporter.get_finished_spans()
        path = OUT / "otel" / f"pydantic-ai-{name}.jsonl"
        write_lines(path, [otlp_json(spans)])
        expected[f"otel/pydantic-ai-{name}.jsonl"] = [kinds]
        print(f"  {name}: {len(spans)} spans, {outcome}")
    (OUT / "otel" / "VERSIONS.json").write_text(json.dumps(
        {p: version(p) for p in ("pydantic-ai-slim", "opentelemetry-sdk")}, indent=1) + "\n")
    return expected


# --- heldout: real framework and SDK code, with the traits of logs met in the wild ---------------------------

def _otel_repeated_json() -> list[dict[str, Any]]:
    """Pydantic AI reads the same config eight times; the tool writes its JSON spaced, the last time compact."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    reads = itertools.count(1)
    config = {"max_steps": 10, "model": "gpt-4o", "retries": {"count": 2, "backoff": 0.5}}

    def read_config(path: str) -> str:
        compact = next(reads) == 8  # one writer of the same value: no spaces
        return json.dumps(config, separators=(",", ":")) if compact else json.dumps(config, indent=None)

    script = [ModelResponse(parts=[ToolCallPart("read_config", {"path": "agent.toml"}, tool_call_id=f"call_{n}")],
                            finish_reason="tool_call") for n in range(1, 9)]
    script.append(ModelResponse(parts=[TextPart("max_steps is 10.")], finish_reason="stop"))
    replies = iter(script)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent = Agent(FunctionModel(lambda messages, info: next(replies)), name="repeated-json",
                  tools=[Tool(read_config, name="read_config")])
    agent.instrument = InstrumentationSettings(tracer_provider=provider, include_content=True)
    agent.run_sync("What is the step cap in agent.toml?")
    return [otlp_json(exporter.get_finished_spans())]


def _chat_completion(n: int, content: str | None, calls: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None, "annotations": []}
    if calls:
        message["tool_calls"] = [{"id": f"call_{n}_{i}", "type": "function",
                                  "function": {"name": name, "arguments": json.dumps(args)}}
                                 for i, (name, args) in enumerate(calls)]
    return {"id": f"chatcmpl-{n:04d}", "object": "chat.completion", "created": 1_767_000_000 + n,
            "model": "gpt-4o-2024-08-06", "choices": [{"index": 0, "message": message, "logprobs": None,
                                                        "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 60 + 25 * n, "completion_tokens": 18, "total_tokens": 78 + 25 * n},
            "system_fingerprint": "fp_scripted"}


def _sdk_log(replies: Callable[[dict[str, Any]], dict[str, Any]], loop: Callable[[Any], None],
             time_out: Sequence[int] = ()) -> list[dict[str, Any]]:
    """Run ``loop`` with the OpenAI SDK's own client over a transport that logs every HTTP exchange.

    The transport answers with ``replies(request body)``; the attempts numbered in
    ``time_out`` raise httpx's ``ReadTimeout`` instead, which the SDK retries.
    A failed attempt is logged the way the SDK sees it: no response, and the error.
    """
    import httpx2
    import openai

    log: list[dict[str, Any]] = []

    class Logged(httpx2.BaseTransport):
        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            body = json.loads(request.content)
            if len(log) + 1 in time_out:
                error = httpx2.ReadTimeout("The read operation timed out", request=request)
                log.append({"request": body, "response": None,
                            "error": {"type": type(error).__name__, "message": str(error)}})
                raise error
            reply = replies(body)
            log.append({"request": body, "response": reply})
            return httpx2.Response(200, json=reply)

    client = openai.OpenAI(api_key="sk-scripted", base_url="http://scripted.invalid/v1",
                           http_client=httpx2.Client(transport=Logged()), max_retries=2)
    loop(client)
    return log


_SDK_TOOLS = [{"type": "function", "function": {"name": name, "description": text, "parameters": {
    "type": "object", "properties": {"page": {"type": "integer"}}, "required": ["page"]}}}
    for name, text in (("read_page", "Read one page of the report."), ("get_weather", "Today's weather."))]


def _tool_loop(client: Any, max_rounds: int, answer_on_content: bool) -> None:
    """A hand-written agent loop over the SDK: call, run the tools, send the results, repeat."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Summarise the report, every page of it."}]
    for _ in range(max_rounds):
        response = client.chat.completions.create(model="gpt-4o", messages=messages, tools=_SDK_TOOLS)
        message = response.choices[0].message
        if answer_on_content and message.content:  # the planted bug: text means done
            return
        if not message.tool_calls:
            return
        messages.append(message.model_dump(exclude_none=True, include={"role", "content", "tool_calls"}))
        for call in message.tool_calls:
            page = json.loads(call.function.arguments).get("page", 0)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": f"page {page}: 40 lines of text"})
    # the loop's own cap: it stops here, silently, whatever the model asked for last


def _sdk_timeout() -> list[dict[str, Any]]:
    """Two pages read (the second request timing out once), then a round that talks and calls, taken as the answer."""
    def replies(body: dict[str, Any]) -> dict[str, Any]:
        n = sum(m["role"] == "assistant" for m in body["messages"]) + 1
        if n <= 2:
            return _chat_completion(n, None, [("read_page", {"page": n})])
        return _chat_completion(n, "Pages 1 and 2 are read; now page 3.", [("read_page", {"page": 3})])

    return _sdk_log(replies, lambda client: _tool_loop(client, 10, answer_on_content=True), time_out=[2])


def _sdk_step_cap() -> list[dict[str, Any]]:
    """A loop with a cap of 10 rounds over a model that reads one page a round: stopped with page 10 unanswered."""
    def replies(body: dict[str, Any]) -> dict[str, Any]:
        n = sum(m["role"] == "assistant" for m in body["messages"]) + 1
        return _chat_completion(n, None, [("read_page", {"page": n})])

    return _sdk_log(replies, lambda client: _tool_loop(client, 10, answer_on_content=False))


def make_heldout() -> dict[str, list[list[str]]]:
    write_lines(OUT / "heldout" / "pydantic-ai-repeated-json.jsonl", _otel_repeated_json())
    write_lines(OUT / "heldout" / "openai-sdk-timeout.jsonl", _sdk_timeout())
    write_lines(OUT / "heldout" / "openai-sdk-step-cap.jsonl", _sdk_step_cap())
    return {"heldout/pydantic-ai-repeated-json.jsonl": [["repeated_tool_call"]],
            "heldout/openai-sdk-timeout.jsonl": [["premature_answer"]],
            "heldout/openai-sdk-step-cap.jsonl": [["work_pending"]]}


PARTS = {"records": make_records, "pairs": make_pairs, "otel": make_otel, "heldout": make_heldout}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="+", choices=tuple(PARTS))
    args = parser.parse_args(argv)
    for part in args.parts:
        print(f"{part}:")
        save_expected(PARTS[part]())
    return 0


if __name__ == "__main__":
    sys.exit(main())
