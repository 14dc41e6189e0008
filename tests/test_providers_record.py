"""The recorder: real openai and anthropic clients against a local server that serves recorded bodies.

No key and no network: the server listens on 127.0.0.1 on a free port, is
started here, and answers each POST with the next body of a shipped provider
scenario. The recording must replay to the same table as the served scenario.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentloops import UsageError, compare, load_scenario, run
from agentloops.cli import main
from agentloops.providers.record import (
    RecordExtraMissing,
    RecordTool,
    SDKModel,
    anthropic_client,
    openai_client,
    record,
    require,
)

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
NOTES = "Meeting notes, 3 Nov\n- ship the loop fix\n- add a cap test\n(42 lines in total)"


@dataclass
class Served:
    """What the local server was asked, in order."""

    port: int
    bodies: list[dict[str, Any]]
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


@pytest.fixture
def serve(monkeypatch) -> Iterator[Any]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    servers: list[ThreadingHTTPServer] = []

    def start(bodies: list[dict[str, Any]]) -> Served:
        served = Served(0, [json.loads(json.dumps(b)) for b in bodies])
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                with lock:
                    served.requests.append((self.path, json.loads(self.rfile.read(length) or b"{}")))
                    body = served.bodies.pop(0) if served.bodies else None
                payload = json.dumps(body if body is not None else {"error": {"message": "no more bodies"}}).encode()
                self.send_response(200 if body is not None else 500)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        servers.append(server)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        served.port = server.server_address[1]
        return served

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def tools() -> list[RecordTool]:
    return [RecordTool("read_file", "Read a text file.", SCHEMA, lambda args: NOTES),
            RecordTool("count_lines", "Count the lines of a text file.", SCHEMA, "42")]


def client_for(format: str, port: int) -> Any:
    if format == "anthropic":
        return anthropic.Anthropic(api_key="test-key-not-real", base_url=f"http://127.0.0.1:{port}", max_retries=0)
    return openai.OpenAI(api_key="test-key-not-real", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)


CASES = [("openai-chat", "openai-chat-normal", "/v1/chat/completions"),
         ("openai-chat", "openai-chat-tool-calls-with-stop", "/v1/chat/completions"),
         ("openai-responses", "openai-responses-normal", "/v1/responses"),
         ("anthropic", "anthropic-normal", "/v1/messages"),
         ("anthropic", "anthropic-pause-turn", "/v1/messages")]


@pytest.mark.parametrize(("format", "name", "path"), CASES, ids=[c[1] for c in CASES])
def test_a_recording_replays_to_the_same_table(serve, tmp_path: Path, format, name, path):
    served_scenario = load_scenario(name)
    served = serve(list(served_scenario.raw_responses))
    client = client_for(format, served.port)
    try:
        recording = record(client, format, model="test-model", tools=tools(), prompt=served_scenario.prompt,
                           name=f"recorded-{name}")
    finally:
        client.close()
    assert [p for p, _ in served.requests] == [path] * len(served_scenario.raw_responses)
    assert recording.error is None and recording.live.outcome == "answer"
    assert list(recording.raw_responses) == list(served_scenario.raw_responses)
    saved = recording.save(tmp_path / f"{name}.json")
    replayed = compare([saved]).rows()[0][1:]
    assert replayed == compare([name]).rows()[0][1:]
    assert main(["compare", "--scenarios", str(saved), "--format", "json"]) == 0


def test_tool_results_go_back_in_each_api_shape(serve):
    for format, name in (("openai-chat", "openai-chat-normal"), ("openai-responses", "openai-responses-normal"),
                         ("anthropic", "anthropic-normal")):
        scenario = load_scenario(name)
        served = serve(list(scenario.raw_responses))
        client = client_for(format, served.port)
        try:
            record(client, format, model="m", tools=tools(), prompt=scenario.prompt, name="r")
        finally:
            client.close()
        second = served.requests[1][1]
        if format == "openai-chat":
            assert second["messages"][-1] == {"role": "tool", "content": NOTES,
                                              "tool_call_id": scenario.responses[0].tool_calls[0].id}
            assert second["tools"][0]["function"]["name"] == "read_file"
        elif format == "openai-responses":
            assert second["input"][-1] == {"type": "function_call_output",
                                           "call_id": scenario.responses[0].tool_calls[0].id, "output": NOTES}
            assert second["input"][1] == scenario.raw_responses[0]["output"][0]
        else:
            assert second["messages"][-1] == {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": scenario.responses[0].tool_calls[0].id, "content": NOTES}]}
            assert second["max_tokens"] == 1024 and second["tools"][0]["input_schema"] == SCHEMA


def test_a_paused_anthropic_turn_is_sent_back_as_is(serve):
    scenario = load_scenario("anthropic-pause-turn")
    served = serve(list(scenario.raw_responses))
    client = client_for("anthropic", served.port)
    try:
        record(client, "anthropic", model="m", tools=tools(), prompt=scenario.prompt, name="r")
    finally:
        client.close()
    second = served.requests[1][1]["messages"]
    assert second[-1] == {"role": "assistant", "content": scenario.raw_responses[0]["content"]}


def test_a_live_run_that_raises_is_still_recorded(serve, tmp_path: Path):
    scenario = load_scenario("openai-chat-content-filter")
    served = serve(list(scenario.raw_responses))
    client = client_for("openai-chat", served.port)
    try:
        recording = record(client, "openai-chat", model="m", tools=tools(), prompt=scenario.prompt, name="filtered",
                           options={"max_tokens": 64})
    finally:
        client.close()
    assert recording.error == "content_filter" and len(recording.raw_responses) == 2
    assert served.requests[0][1]["max_tokens"] == 64
    assert run(recording.save(tmp_path / "filtered.json")).error == "content_filter"


def test_recording_options_and_the_saved_file(serve, tmp_path: Path):
    scenario = load_scenario("openai-chat-talk-only")
    served = serve(list(scenario.raw_responses))
    client = client_for("openai-chat", served.port)
    try:
        recording = record(client, "openai-chat", model="m", tools=tools(), prompt="Say hello.", name="hello",
                           title="hello, recorded")
    finally:
        client.close()
    data = json.loads(recording.save(tmp_path / "sub" / "hello.json").read_text(encoding="utf-8"))
    assert data["format"] == "openai-chat" and data["title"] == "hello, recorded"
    assert data["tools"]["read_file"] == "(not called during the recording)"
    assert data["responses"] == list(scenario.raw_responses) and "raw_responses" not in data


def test_missing_extra_is_one_clear_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)
    message = (r"^recording needs the optional extra: pip install 'agentloops\[record\]' "
               r"\(the openai package is missing\)$")
    with pytest.raises(RecordExtraMissing, match=message):
        openai_client(api_key="x")
    with pytest.raises(RecordExtraMissing, match=r"the openai package is missing"):
        record(object(), "openai-chat", model="m", tools=[], prompt="p", name="n")
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(RecordExtraMissing, match=r"the anthropic package is missing"):
        anthropic_client(api_key="x")
    with pytest.raises(ImportError):  # also an ImportError, for code that catches that
        require("anthropic")


def test_formats_the_recorder_cannot_call():
    message = r"cannot record format 'gemini'; expected one of: openai-chat, openai-responses, anthropic"
    with pytest.raises(UsageError, match=message):
        SDKModel(object(), "gemini", model="m", tools=[])  # type: ignore[arg-type]
