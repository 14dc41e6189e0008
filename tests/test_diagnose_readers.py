"""Malformed logs: one line naming the file, the line and the field; a broken log is diagnosed as far as it goes."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

import pytest

from agentloops.diagnose import LogError, diagnose, iter_runs
from agentloops.diagnose.cli import add_commands
from agentloops.errors import UsageError
from agentloops.resources import data_dir

FIXTURES = data_dir() / "diagnose"
OPENAI = FIXTURES / "pairs" / "openai-chat.jsonl"


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_a_missing_file_a_folder_and_an_empty_file(tmp_path: Path) -> None:
    with pytest.raises(LogError, match=r"nope\.jsonl: cannot read the log"):
        diagnose(tmp_path / "nope.jsonl")
    with pytest.raises(LogError, match="not a regular file"):
        diagnose(tmp_path)
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(LogError, match=r"empty\.jsonl: the log is empty"):
        diagnose(tmp_path / "empty.jsonl")


def test_an_unknown_format_name() -> None:
    with pytest.raises(LogError, match="unknown log format 'yaml'"):
        diagnose(OPENAI, "yaml")


def test_a_file_that_is_no_log(tmp_path: Path) -> None:
    with pytest.raises(LogError, match=r"x\.jsonl:1: not a log diagnose reads"):
        diagnose(write(tmp_path / "x.jsonl", [{"hello": 1}]))


def test_a_bad_line_stops_reading_and_the_report_covers_what_came_before(tmp_path: Path) -> None:
    rows = lines_of(OPENAI)
    first_run = [r for r in rows if r["run"] == rows[0]["run"]]
    log = write(tmp_path / "broken.jsonl", [*first_run, rows[len(first_run)], "{not json"])
    report = diagnose(log)
    bad = len(first_run) + 2
    assert report.stopped == f"{log}:{bad}: not valid JSON: Expecting property name enclosed in double quotes at column 2"
    assert report.runs == 2 and report.calls == len(first_run) + 1 and report.incomplete == 1
    assert report.findings == ()  # the unfinished second run's ending is not judged
    with pytest.raises(LogError, match=f":{bad}: not valid JSON"):
        diagnose(log, partial=False)


def test_a_log_cut_off_mid_line(tmp_path: Path) -> None:
    text = OPENAI.read_text()
    log = tmp_path / "cut.jsonl"
    log.write_text(text[: text.index("\n", 2000) + 40])
    report = diagnose(log)
    assert report.stopped is not None and report.stopped.endswith("the line is cut off (the log ends mid-line)")


def test_the_cli_prints_the_partial_report_and_exits_2(tmp_path: Path) -> None:
    rows = lines_of(FIXTURES / "pairs" / "tools-repeated-call.jsonl")
    log = write(tmp_path / "partial.jsonl", [*rows, [1, 2]])
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers())
    args = parser.parse_args(["diagnose", str(log)])
    text, status = args.handler(args)
    assert status == 2
    assert f"stopped reading at: {log}:{len(rows) + 1}[0]: expected a JSON object; got a number" in text


@pytest.mark.parametrize(("edit", "message"), [
    (lambda r: r.pop("response"), r":2: response: expected the response body as a JSON object; missing"),
    (lambda r: r["response"]["choices"][0].pop("finish_reason"), r":2: response.choices\[0\].finish_reason: missing"),
    (lambda r: r["request"].__setitem__("messages", "hi"), r":2: request.messages: expected a list of messages; got a string"),
    (lambda r: r["request"]["messages"][0].__setitem__("role", 3), r":2: request.messages\[0\].role: expected a string"),
    (lambda r: r.__setitem__("format", "grpc"), r":2: format: expected one of openai-chat"),
    (lambda r: r.__setitem__("run", [1]), r":2: run: expected a string or a number"),
    (lambda r: r.__setitem__("error", 5), r":2: error: expected what the caller raised"),
])
def test_pair_lines_name_the_line_and_the_field(tmp_path: Path, edit: Any, message: str) -> None:
    rows = lines_of(OPENAI)[:3]
    edit(rows[1])
    report = diagnose(write(tmp_path / "bad.jsonl", rows))
    assert report.stopped is not None
    assert report.stopped.startswith(str(tmp_path / "bad.jsonl"))
    assert __import__("re").search(message, report.stopped), report.stopped


def test_a_pair_whose_provider_cannot_be_told(tmp_path: Path) -> None:
    with pytest.raises(LogError, match=r":1: response: cannot tell the provider format"):
        diagnose(write(tmp_path / "x.jsonl", [{"request": {}, "response": {"text": "hi"}}]))


def test_otel_attributes_are_named_with_their_span(tmp_path: Path) -> None:
    [export] = lines_of(FIXTURES / "otel" / "pydantic-ai-normal.jsonl")
    span = export["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    attribute = next(a for a in span["attributes"] if a["key"] == "gen_ai.output.messages")
    attribute["value"] = {"stringValue": "[{"}
    with pytest.raises(LogError) as caught:  # the only trace is unreadable: nothing to report
        diagnose(write(tmp_path / "otel.jsonl", [export]))
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'otel.jsonl'}:1: resourceSpans[0].scopeSpans[0].spans[0] (chat function:")
    assert message.endswith("gen_ai.output.messages: expected a JSON list of messages; the text is not valid JSON")


def test_an_entry_without_resource_spans_mid_file_is_skipped_and_named(tmp_path: Path) -> None:
    [export] = lines_of(FIXTURES / "otel" / "pydantic-ai-normal.jsonl")
    log = write(tmp_path / "o.jsonl", [export, {"spans": []}])
    report = diagnose(log)
    assert report.runs == 1 and report.stopped is None
    assert report.skipped is not None and report.skipped.count == 1 and report.skipped.first == (f"{log}:2",)
    assert "skipped 1 entry that has none of the keys resourceSpans (another line, not a model call" in str(report)


def _structured(value: Any) -> dict[str, Any]:
    """``value`` as an OTLP ``AnyValue``, objects as ``kvlistValue`` (how an exporter may write a structured
    attribute instead of JSON text)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_structured(v) for v in value]}}
    return {"kvlistValue": {"values": [{"key": k, "value": _structured(v)} for k, v in value.items()]}}


@pytest.mark.parametrize("name", ["repeated-call", "ping-pong", "failure-streak", "polling"])
def test_messages_written_as_structured_values_read_as_their_json_text(tmp_path: Path, name: str) -> None:
    source = FIXTURES / "otel" / f"pydantic-ai-{name}.jsonl"
    [export] = lines_of(source)
    changed = 0
    for span in export["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for attribute in span["attributes"]:
            if attribute["key"] in ("gen_ai.input.messages", "gen_ai.output.messages"):
                attribute["value"] = _structured(json.loads(attribute["value"]["stringValue"]))
                changed += 1
    assert changed >= 4  # two chat spans at least, each with its input and output
    found = [(f.kind, f.calls, f.detail) for f in diagnose(write(tmp_path / "kv.jsonl", [export])).findings]
    assert found == [(f.kind, f.calls, f.detail) for f in diagnose(source).findings]
    assert bool(found) == (name != "polling")  # polling is healthy: its results change


def test_a_chat_span_that_failed_without_an_answer_is_a_failed_attempt_not_a_call(tmp_path: Path) -> None:
    source = FIXTURES / "otel" / "pydantic-ai-repeated-call.jsonl"
    [export] = lines_of(source)
    spans = export["resourceSpans"][0]["scopeSpans"][0]["spans"]
    first = min((s for s in spans if s["name"].startswith("chat")), key=lambda s: int(s["startTimeUnixNano"]))
    failed = {**first, "spanId": "f" * 16, "startTimeUnixNano": str(int(first["startTimeUnixNano"]) - 1),
              "status": {"code": 2, "message": "ModelHTTPError: status_code: 529, Overloaded"},
              "attributes": [a for a in first["attributes"] if a["key"] != "gen_ai.output.messages"]}
    spans.append(failed)  # the retry of the same request follows it
    report, plain = diagnose(write(tmp_path / "o.jsonl", [export])), diagnose(source)
    assert (report.calls, [(f.kind, f.calls) for f in report.findings]) == \
        (plain.calls, [(f.kind, f.calls) for f in plain.findings])
    [attempt] = report.failed_attempts
    assert attempt.error == "ModelHTTPError: status_code: 529, Overloaded" and "(chat " in attempt.where
    failed["attributes"] = first["attributes"]  # an error status with an answer is still a model call
    assert diagnose(write(tmp_path / "o.jsonl", [export])).calls == plain.calls + 1


def test_a_trace_whose_only_model_call_failed_is_a_run_with_its_failed_attempt(tmp_path: Path) -> None:
    [export] = lines_of(FIXTURES / "otel" / "pydantic-ai-normal.jsonl")
    spans = export["resourceSpans"][0]["scopeSpans"][0]["spans"]
    chats = [s for s in spans if s["name"].startswith("chat")]
    first = min(chats, key=lambda s: int(s["startTimeUnixNano"]))
    spans[:] = [s for s in spans if s not in chats or s is first]
    first["status"] = {"code": 2, "message": "timed out"}
    first["attributes"] = [a for a in first["attributes"] if a["key"] != "gen_ai.output.messages"]
    report = diagnose(write(tmp_path / "o.jsonl", [export]))
    assert (report.runs, report.calls, [a.error for a in report.failed_attempts]) == (1, 0, ["timed out"])


def test_a_trace_whose_root_never_arrived_is_incomplete(tmp_path: Path) -> None:
    [export] = lines_of(FIXTURES / "otel" / "pydantic-ai-talk-and-call.jsonl")
    spans = export["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[:] = [s for s in spans if s["parentSpanId"]]
    [run] = list(iter_runs(write(tmp_path / "o.jsonl", [export])))
    assert not run.complete and len(run.turns) == 2


def test_record_fields_are_named(tmp_path: Path) -> None:
    record = lines_of(FIXTURES / "recordings" / "runs.jsonl")[0]
    record["rounds"][1]["finish_reason"] = "done"
    with pytest.raises(LogError, match=r"x\.json: rounds\[1\]\.finish_reason: expected one of stop, tool_calls"):
        diagnose(write(tmp_path / "x.json", [json.dumps(record, indent=2)]), partial=False)


def test_a_scenario_file_with_a_bad_body(tmp_path: Path) -> None:
    data = json.loads((data_dir() / "scenarios" / "providers" / "anthropic-01-normal.json").read_text())
    data["responses"][1]["stop_reason"] = 7
    with pytest.raises(LogError, match=r"responses\[1\]\.stop_reason"):
        diagnose(write(tmp_path / "s.json", [json.dumps(data, indent=2)]), partial=False)


def test_not_utf8_and_not_json_constants(tmp_path: Path) -> None:
    log = tmp_path / "b.jsonl"
    log.write_bytes(OPENAI.read_bytes().splitlines(keepends=True)[0] + b'{"a": "\xff"}\n')
    assert diagnose(log).stopped == f"{log}:2: not UTF-8 text (byte 8)"
    log.write_bytes(OPENAI.read_bytes().splitlines(keepends=True)[0] + b'{"a": NaN}\n')
    assert "not valid JSON: NaN is not JSON" in (diagnose(log).stopped or "")


# --- a seeded fuzz over every reader -----------------------------------------------------------------------

JUNK: list[Any] = [None, 0, -1, 1.5, True, "", "x", [], {}, [None], {"type": None}, "null", 10**30]


def _mutate(value: Any, rng: random.Random) -> Any:
    """Replace one random node of ``value`` (or drop one key) with junk."""
    if isinstance(value, dict) and value and rng.random() < 0.85:
        key = rng.choice(list(value))
        if rng.random() < 0.25:
            return {k: v for k, v in value.items() if k != key}
        return {**value, key: _mutate(value[key], rng)}
    if isinstance(value, list) and value and rng.random() < 0.85:
        i = rng.randrange(len(value))
        return [*value[:i], _mutate(value[i], rng), *value[i + 1:]]
    if isinstance(value, str) and value.startswith(("[", "{")) and rng.random() < 0.5:
        return value[: rng.randrange(len(value))]  # a JSON-in-a-string attribute, cut
    return rng.choice(JUNK)


SOURCES = ["pairs/openai-chat.jsonl", "pairs/openai-responses.jsonl", "pairs/anthropic.jsonl", "pairs/gemini.jsonl",
           "pairs/ollama.jsonl", "otel/pydantic-ai-failure-streak.jsonl", "otel/pydantic-ai-ping-pong.jsonl",
           "recordings/runs.jsonl"]


@pytest.mark.parametrize("source", SOURCES)
def test_fuzzed_logs_end_in_a_package_error_of_one_line_naming_file_and_line(tmp_path: Path, source: str) -> None:
    rng = random.Random(f"diagnose-{source}")
    rows = lines_of(FIXTURES / source)
    for case in range(40):
        target = rng.randrange(len(rows))
        mutated = [*rows[:target], _mutate(rows[target], rng), *rows[target + 1:]]
        log = write(tmp_path / f"{case}.jsonl", mutated)
        if rng.random() < 0.2:
            log.write_text(log.read_text()[: rng.randrange(1, len(log.read_text()))])
        try:
            report = diagnose(log)
        except UsageError as exc:
            message = str(exc)
        else:
            if report.stopped is None:
                continue
            message = report.stopped
        assert "\n" not in message, message
        assert message.startswith(f"{log}:"), message
        line = message[len(str(log)) + 1:].split(":")[0].split("[")[0]  # 12, or 12[0]: a line that is a list
        assert line.isdigit() and 1 <= int(line) <= len(rows), message


def test_a_document_that_is_a_list_of_records(tmp_path: Path) -> None:
    records = lines_of(FIXTURES / "recordings" / "runs.jsonl")[:2]
    log = tmp_path / "records.json"
    log.write_text(json.dumps(records, indent=2))
    assert [r.where for r in iter_runs(log)] == [f"{log}[0]", f"{log}[1]"]
    log.write_text(json.dumps(records, indent=2)[:-40])
    with pytest.raises(LogError, match=r"records\.json:\d+: the document ends early"):
        diagnose(log)


def test_an_incremental_responses_request_sends_only_what_is_new(tmp_path: Path) -> None:
    body = json.loads((data_dir() / "scenarios" / "providers" / "openai-responses-03-truncated.json").read_text())
    cut = body["responses"][0]
    first = {"format": "openai-responses", "run": "r", "request": {"input": "How many lines?"}, "response": cut}
    again = {**first, "request": {"previous_response_id": cut["id"], "input": []}}
    nudged = {**first, "request": {"previous_response_id": cut["id"], "input": [{"role": "user", "content": "go on"}]}}
    spin = diagnose(write(tmp_path / "spin.jsonl", [first, again, again]))
    assert [f.kind for f in spin.findings] == ["reasked", "cap_returned_last"]
    assert spin.findings[0].count == 2
    told = diagnose(write(tmp_path / "told.jsonl", [first, nudged]))
    assert "reasked" not in [f.kind for f in told.findings]


@pytest.mark.parametrize(("raw", "reason"), [
    ("stop", "stop"), ("tool_call", "tool_calls"), ("length", "length"), ("content_filter", "content_filter"),
    ("end_turn", "stop"), ("max_tokens", "length"), ("MAX_TOKENS", "length"), ("SAFETY", "content_filter"),
    ("tool_use", "tool_calls"), ("refusal", "refusal"), ("banana", "unknown"),
])
def test_span_finish_reasons_are_read_with_the_stop_vocabulary(raw: str, reason: str) -> None:
    from agentloops.diagnose.otel import Span, response_of

    output = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "hi"}]}])
    span = Span("s", "t", None, "chat", 0, {"gen_ai.output.messages": output, "gen_ai.response.finish_reasons": [raw],
                                            "gen_ai.usage.input_tokens": 5}, False, "")
    response = response_of(span)
    assert (response.finish_reason, response.raw_finish_reason, response.content) == (reason, raw, "hi")
    assert response.usage is not None and response.usage.prompt_tokens == 5


# --------------------------------------------------------------------------- in Chinese


@pytest.fixture
def in_chinese(monkeypatch: pytest.MonkeyPatch) -> Any:
    from agentloops.i18n import set_language

    for name in ("AGENTLOOPS_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        monkeypatch.delenv(name, raising=False)
    set_language("zh")
    yield
    set_language(None)


def test_a_log_error_reads_in_chinese_and_keeps_its_english(tmp_path: Path, in_chinese: Any) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(LogError, match="日志是空的") as caught:
        diagnose(empty)
    assert caught.value.english == f"{empty}: the log is empty"
    with pytest.raises(LogError, match=r"未知的日志格式 'xml'；应为 auto 或以下之一：record"):
        diagnose(empty, "xml")


def test_where_reading_stopped_stays_english_in_the_report_and_its_json(tmp_path: Path, in_chinese: Any) -> None:
    rows = lines_of(OPENAI)[:3]
    rows[1]["request"]["messages"] = "hi"
    report = diagnose(write(tmp_path / "bad.jsonl", rows))
    assert report.stopped == f"{tmp_path / 'bad.jsonl'}:2: request.messages: expected a list of messages; got a string"
    assert json.loads(json.dumps(report.to_dict()))["stopped"] == report.stopped
    from agentloops.i18n import shown

    assert shown(report.stopped) == f"{tmp_path / 'bad.jsonl'}:2：request.messages：应为消息列表；收到的是 字符串"


def test_the_diagnose_cli_speaks_chinese(tmp_path: Path, in_chinese: Any) -> None:
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers())
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in sub.choices["diagnose"]._actions}
    assert helps["file"].startswith("日志文件") and "步数上限" in helps["max_steps"]
    with pytest.raises(SystemExit):
        parser.parse_args(["diagnose", "x.jsonl", "--max-steps", "0"])
    args = parser.parse_args(["diagnose", str(FIXTURES / "pairs" / "gemini.jsonl"), "--html", str(tmp_path / "r.html")])
    text, _status = args.handler(args)
    assert f"HTML 报告已写到 {tmp_path / 'r.html'}" in text
    args = parser.parse_args(["diagnose", str(FIXTURES / "pairs" / "gemini.jsonl"), "--json"])
    text, _status = args.handler(args)
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in text), "--json stays English"
