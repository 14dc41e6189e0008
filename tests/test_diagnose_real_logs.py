"""diagnose on logs as real code writes them: JSON written two ways, attempts that timed out, a loop stopped by
its own cap, a BOM, a list of records, pretty-printed documents, other lines mixed in; and what it costs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from agentloops.diagnose import LogError, diagnose, iter_runs
from agentloops.diagnose import cli as diagnose_cli
from agentloops.diagnose.cli import add_commands
from agentloops.diagnose.detectors import COMMON_CAPS, find, tool_repeats
from agentloops.diagnose.model import Ending, Msg, PrefixMemo, Run, Turn, canonical_text
from agentloops.diagnose.pairs import error_body
from agentloops.diagnose.requests import RequestReader
from agentloops.providers import Reply
from agentloops.resources import data_dir
from agentloops.response import Response

FIXTURES = data_dir() / "diagnose"
ANSWER = Response(content="done", finish_reason="stop")


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def call(n: int, args: str = '{"path": "a"}') -> Response:
    return Response.model_validate({"content": None, "finish_reason": "tool_calls",
                                    "tool_calls": [{"id": f"c{n}", "name": "read", "arguments": args}]})


def run_of(steps: list[tuple[Response, tuple[Msg, ...]]], ending: Ending | None = None) -> Run:
    turns = tuple(Turn(i, f"line {i}", Reply.of(response), True, False, results, 10)
                  for i, (response, results) in enumerate(steps, start=1))
    return Run("r", "line 1", turns, ending or Ending())


def cli(argv: list[str]) -> tuple[str, int]:
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.handler(args)


# --- results compared as JSON ------------------------------------------------------------------------------------

def test_a_result_written_compact_once_is_the_same_result() -> None:
    spaced, compact = '{"a": 1, "b": [1, 2]}', '{"b":[1,2],"a":1}'
    assert canonical_text(spaced) == canonical_text(compact) == '{"a":1,"b":[1,2]}'
    assert canonical_text("three lines") == "three lines" and canonical_text(None) is None
    assert canonical_text('{"a": NaN}') == '{"a": NaN}'  # not JSON: kept as written
    steps = [(call(n), (Msg("tool", spaced, call_id=f"c{n - 1}"),) if n > 1 else ()) for n in range(1, 5)]
    steps.append((ANSWER, (Msg("tool", compact, call_id="c4"),)))
    [finding] = list(tool_repeats(run_of(steps)))
    assert finding.kind == "repeated_tool_call" and finding.count == 3  # four calls, three of them repeats


@pytest.mark.parametrize("other", ['{"n":1.0,"s":"ok"}', '{"s":"\\u006fk","n":1}', '{ "n" : 1e0 , "s" : "ok" }',
                                   '{"s": "ok", "n": 10E-1}'])
def test_one_value_however_its_writer_spelled_it_is_one_result(other: str) -> None:
    """Key order, spaces, escapes and a whole number written with a fraction or exponent (Python writes ``1.0``
    where JavaScript writes ``1``): parsed, they are the same value, so they are the same result."""
    assert canonical_text(other) == canonical_text('{"n": 1, "s": "ok"}') == '{"n":1,"s":"ok"}'
    assert canonical_text('{"n": 1.5}') == '{"n":1.5}' and canonical_text('{"n": 1e300}') == '{"n":1e+300}'
    assert canonical_text("9007199254740991.0") == "9007199254740991"  # 2**53 - 1: still exact as a double
    assert canonical_text("9007199254740992.0") == "9007199254740992.0"  # 2**53: past what writers keep exact


def test_a_chat_log_whose_results_and_arguments_are_written_several_ways_repeats_one_call(tmp_path: Path) -> None:
    writings = ['{"state": "up", "n": 1}', '{"n":1.0,"state":"up"}', '{"state":"\\u0075p","n":1}', '{"n": 1, "state": "up"}']
    arguments = ['{"id": 7}', '{"id":7.0}', '{ "\\u0069d" : 7 }', '{"id": 7}']
    messages: list[dict[str, Any]] = [{"role": "user", "content": "status?"}]
    lines = []
    for n, (args, result) in enumerate(zip(arguments, writings)):
        made = {"id": f"c{n}", "type": "function", "function": {"name": "status", "arguments": args}}
        lines.append({"request": {"messages": list(messages)}, "response": {"choices": [{"finish_reason": "tool_calls",
                      "message": {"role": "assistant", "content": None, "tool_calls": [made]}}]}})
        messages += [{"role": "assistant", "content": None, "tool_calls": [made]},
                     {"role": "tool", "tool_call_id": f"c{n}", "content": result}]
    lines.append({"request": {"messages": messages}, "response": {"choices": [{"finish_reason": "stop",
                  "message": {"role": "assistant", "content": "up"}}]}})
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    [finding] = diagnose(path).findings
    assert finding.kind == "repeated_tool_call" and finding.calls == "2-4" and "called 4 times" in finding.detail


def test_the_pydantic_ai_run_that_repeats_a_call_eight_times_is_found() -> None:
    path = FIXTURES / "heldout" / "pydantic-ai-repeated-json.jsonl"
    texts = [m for m in path.read_text().split("tool_call_response") if "max_steps" in m]
    assert any('max_steps\\":10,' in t for t in texts) and any('max_steps\\": 10,' in t for t in texts)
    [finding] = diagnose(path).findings
    assert finding.kind == "repeated_tool_call" and finding.calls == "2-8" and "called 8 times" in finding.detail


# --- attempts that failed at the transport ------------------------------------------------------------------------

def test_an_attempt_that_timed_out_is_a_failed_attempt_shown_not_a_cut_off_log() -> None:
    path = FIXTURES / "heldout" / "openai-sdk-timeout.jsonl"
    rows = rows_of(path)
    assert rows[1]["response"] is None and rows[1]["error"]["type"] == "ReadTimeout"
    assert rows[1]["request"] == rows[2]["request"]  # the SDK's retry sends the same request
    report = diagnose(path)
    assert report.stopped is None and report.runs == 1 and report.calls == 3
    [attempt] = report.failed_attempts
    assert attempt.where == f"{path}:2" and attempt.error == "ReadTimeout: The read operation timed out"
    assert [f.kind for f in report.findings] == ["premature_answer"]
    assert "1 HTTP attempt failed: no response" in str(report) and f"{path}:2 (ReadTimeout" in str(report)
    assert report.to_dict()["failed_attempts"] == [{"where": f"{path}:2", "error": attempt.error}]
    assert "1 HTTP attempt failed: no response" in report.to_html()
    text, status = cli(["diagnose", str(path)])
    assert status == 1 and "premature_answer" in text


ERROR_BODIES = {
    "openai-chat": ({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}},
                    "requests: Rate limit reached"),
    "anthropic": ({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
                  "overloaded_error: Overloaded"),
    "gemini": ({"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}},
               "RESOURCE_EXHAUSTED: Resource exhausted"),
    "ollama": ({"error": "model 'llama3' not found"}, "model 'llama3' not found"),
    "openai-responses": ({"error": {"message": "The server had an error", "type": "server_error"}},
                         "server_error: The server had an error"),
}
"""What each API answers with an error status (429, 5xx, 529), and how the report names it."""


@pytest.mark.parametrize("fmt", sorted(ERROR_BODIES))
def test_an_error_status_the_sdk_retried_is_a_failed_attempt(tmp_path: Path, fmt: str) -> None:
    rows = [row for row in rows_of(FIXTURES / "pairs" / f"{fmt}.jsonl") if row["run"] == "01-normal.correct.1"]
    body, named = ERROR_BODIES[fmt]
    for row in rows:
        del row["format"]  # the error body's provider is not told by its keys: the run's format is
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in [rows[0], {**rows[1], "response": body}, *rows[1:]]))
    report = diagnose(log, fmt)
    assert (report.stopped, report.runs, report.calls, report.findings) == (None, 1, len(rows), ())
    assert [(a.where, a.error) for a in report.failed_attempts] == [(f"{log}:2", named)]


def test_a_body_that_answers_is_not_an_error_body() -> None:
    assert error_body({"error": {"message": "x"}}) and error_body({"type": "error", "error": "overloaded"})
    assert not error_body({"error": None, "output": []})  # every Responses body has an error key
    assert not error_body({"error": {"message": "x"}, "choices": []}) and not error_body({"error": ""})
    assert not error_body({"choices": []}) and not error_body(None)


def test_attempts_after_the_last_response_end_the_run_raised(tmp_path: Path) -> None:
    rows = rows_of(FIXTURES / "heldout" / "openai-sdk-step-cap.jsonl")[:3]
    failed = {"request": rows[2]["request"], "response": None, "error": "APITimeoutError: Request timed out."}
    log = tmp_path / "raised.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in [*rows[:2], failed, failed, failed]))
    [run] = list(iter_runs(log))
    assert len(run.turns) == 2 and len(run.failed_attempts) == 3
    assert run.ending == Ending("raised", "APITimeoutError: Request timed out.")
    assert find(run) == []  # a run that raised is not judged as answered


def test_a_failed_attempt_must_say_what_failed(tmp_path: Path) -> None:
    rows = rows_of(FIXTURES / "heldout" / "openai-sdk-timeout.jsonl")
    del rows[1]["error"]
    log = tmp_path / "bad.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert diagnose(log).stopped == f"{log}:2: error: a line without a response is an attempt that failed and must " \
                                    "say why (an object with type and message, or text); missing"


# --- a run stopped with work pending at a common cap -----------------------------------------------------------

def _pending_at(calls: int, ending: Ending | None = None) -> Run:
    steps = [(call(n, f'{{"page": {n}}}'), (Msg("tool", f"page {n - 1}", call_id=f"c{n - 1}"),) if n > 1 else ())
             for n in range(1, calls + 1)]
    return run_of(steps, ending)


@pytest.mark.parametrize("cap", sorted(COMMON_CAPS))
def test_tool_calls_unanswered_at_a_common_cap_are_work_pending(cap: int) -> None:
    [finding] = find(_pending_at(cap))
    assert (finding.kind, finding.count, finding.calls) == ("work_pending", 1, str(cap))
    assert COMMON_CAPS[cap] in finding.detail
    for other in (cap - 1, cap + 1):
        expected = ["work_pending"] if other in COMMON_CAPS else ["premature_answer"]
        assert [f.kind for f in find(_pending_at(other))] == expected


def test_a_known_cap_or_a_record_that_says_otherwise_wins_over_a_common_one() -> None:
    assert [f.kind for f in find(_pending_at(10), max_steps=10)] == ["cap_returned_last"]
    assert [f.kind for f in find(_pending_at(10), max_steps=12)] == ["premature_answer"]
    assert [f.kind for f in find(_pending_at(10, Ending("returned", hit_cap=False)))] == ["premature_answer"]
    assert find(_pending_at(10, Ending("raised", "MaxTurnsExceeded"))) == []


def test_the_sdk_loop_stopped_by_its_own_cap_says_work_pending() -> None:
    path = FIXTURES / "heldout" / "openai-sdk-step-cap.jsonl"
    [finding] = diagnose(path).findings
    assert finding.kind == "work_pending" and finding.calls == "10"
    assert "a common step cap (OpenAI Agents SDK max_turns)" in finding.detail
    assert [f.kind for f in diagnose(path, max_steps=10).findings] == ["cap_returned_last"]


# --- a BOM, a list of records, pretty-printed documents, other lines ------------------------------------------

RECORDS = FIXTURES / "recordings" / "runs.jsonl"


def test_a_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    for source in (RECORDS, FIXTURES / "recordings" / "truncated.content.json"):
        log = tmp_path / f"bom{source.suffix}"
        log.write_bytes(b"\xef\xbb\xbf" + source.read_bytes())
        found = [(f.kind, f.detail) for f in diagnose(log).findings]
        assert found == [(f.kind, f.detail) for f in diagnose(source).findings] and found


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_a_utf16_log_as_windows_powershell_writes_it_is_read(tmp_path: Path, encoding: str) -> None:
    mark = b"\xfe\xff" if encoding.endswith("be") else b""  # "utf-16" writes its own mark, little-endian here
    for source in (RECORDS, FIXTURES / "recordings" / "truncated.content.json"):  # JSON Lines, then a document
        log = tmp_path / f"utf16{source.suffix}"
        log.write_bytes(mark + source.read_text(encoding="utf-8").encode(encoding))
        found = [(f.kind, f.where.replace(str(log), "")) for f in diagnose(log).findings]
        assert found == [(f.kind, f.where.replace(str(source), "")) for f in diagnose(source).findings] and found


def test_a_utf16_log_cut_at_an_odd_byte_says_so(tmp_path: Path) -> None:
    log = tmp_path / "odd.jsonl"
    log.write_bytes(RECORDS.read_text(encoding="utf-8").encode("utf-16")[:-1])
    assert diagnose(log).stopped == f"{log}: not valid UTF-16 text, though it opens with a UTF-16 byte order mark"


@pytest.mark.parametrize("data", [b"\x00\x00\x00", '{"a": 1}\n'.encode("utf-16-le"), b'{"a": "\x00"}\n'])
def test_nul_bytes_are_named_as_the_reason_not_a_cut_off_line(tmp_path: Path, data: bytes) -> None:
    log = tmp_path / "nul.jsonl"
    log.write_bytes(data)
    with pytest.raises(LogError, match=r"nul.jsonl:1: NUL bytes, which JSON text never has: UTF-16 written without"):
        diagnose(log)
    log.write_bytes(b"[\n" + data + b"\n]")
    with pytest.raises(LogError, match=r"nul.jsonl:2: NUL bytes"):
        diagnose(log)


def test_a_list_of_records_on_one_line(tmp_path: Path) -> None:
    records = rows_of(RECORDS)
    log = tmp_path / "list.json"
    log.write_text(json.dumps(records[:3]) + "\n" + json.dumps(records[3]) + "\n")
    assert [r.where for r in iter_runs(log)] == [f"{log}:1[0]", f"{log}:1[1]", f"{log}:1[2]", f"{log}:2"]


def test_pretty_printed_documents_one_after_another(tmp_path: Path) -> None:
    records = rows_of(RECORDS)[:3]
    log = tmp_path / "pretty.json"
    log.write_text("".join(json.dumps(r, indent=2) + "\n" for r in records))  # what `jq . runs.jsonl` prints
    runs = list(iter_runs(log))
    starts = [1 + sum(json.dumps(r, indent=2).count("\n") + 1 for r in records[:i]) for i in range(3)]
    assert [r.where for r in runs] == [f"{log}:{n}" for n in starts]
    log.write_text(json.dumps(records[0], indent=2) + "\n" + json.dumps(records[1], indent=2)[:-30])
    with pytest.raises(LogError, match=r"pretty\.json:\d+: the document ends early"):
        diagnose(log, partial=False)


def test_a_mixed_file_is_read_to_its_end_and_says_what_it_skipped(tmp_path: Path) -> None:
    rows = rows_of(FIXTURES / "pairs" / "openai-chat.jsonl")
    other = [{"event": "tool_start", "tool": "read_file"}, {"event": "llm_end", "response": "42 lines"},
             {"event": "llm_start", "request": "How many lines?"}]  # a hook's events, with a request or response text
    mixed = [other[0], *rows[:10], other[1], *rows[10:], other[2]]
    log = tmp_path / "mixed.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in mixed))
    report = diagnose(log)
    plain = diagnose(FIXTURES / "pairs" / "openai-chat.jsonl")
    assert report.stopped is None and (report.runs, report.calls) == (plain.runs, plain.calls)
    assert [f.kind for f in report.findings] == [f.kind for f in plain.findings]
    assert report.skipped is not None and report.skipped.count == 3
    assert report.skipped.first == (f"{log}:1", f"{log}:12", f"{log}:{len(mixed)}")
    assert "skipped 3 entries with neither a request nor a response body (other lines" in str(report)
    assert report.to_dict()["skipped"]["count"] == 3
    assert diagnose(log, "pairs").skipped == report.skipped


def test_a_file_with_no_entry_of_the_format_given(tmp_path: Path) -> None:
    log = tmp_path / "other.jsonl"
    log.write_text(json.dumps({"event": "start"}) + "\n")
    with pytest.raises(LogError, match=r"other\.jsonl: no entry is in the otel format \(each needs one of: resourceSpans\)"):
        diagnose(log, "otel")
    log.write_text(json.dumps({"request": "the body as text", "response": "the answer as text"}) + "\n")
    with pytest.raises(LogError, match=r"other\.jsonl: no entry is in the pairs format \(each needs a request or a response "
                                       r"body, as a JSON object\); 1 skipped, the first at .*other\.jsonl:1$"):
        diagnose(log, "pairs")


# --- a crash is status 3, never 1 ------------------------------------------------------------------------------

def test_a_crash_inside_diagnose_is_one_line_and_status_3(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("oops")

    monkeypatch.setattr(diagnose_cli, "diagnose", broken)
    text, status = cli(["diagnose", str(RECORDS)])
    err = capsys.readouterr().err
    assert (text, status) == ("", diagnose_cli.EXIT_CRASHED) and diagnose_cli.EXIT_CRASHED == 3
    assert err.count("\n") == 1 and "runs.jsonl: diagnose failed inside the package (KeyError" in err


def test_the_readme_names_the_common_caps_the_code_uses() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    caps = sorted(COMMON_CAPS)
    assert ", ".join(map(str, caps[:-1])) + f" or {caps[-1]} calls" in " ".join(readme.split())


def test_the_help_documents_every_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli(["diagnose", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "0 no stop bug found; 1 findings; 2 the log could not be read" in help_text
    assert "3 diagnose itself failed" in help_text


def test_nesting_too_deep_anywhere_is_named_with_its_entry(tmp_path: Path) -> None:
    rows = rows_of(FIXTURES / "pairs" / "openai-chat.jsonl")[:3]
    rows[1]["response"]["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = "[" * 5000 + "]" * 5000
    log = tmp_path / "deep.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert diagnose(log).stopped == f"{log}:2: nested too deeply to be a log entry"


# --- each message converted once --------------------------------------------------------------------------------

def test_a_conversation_is_converted_once_however_many_requests_repeat_it() -> None:
    seen: list[int] = []
    memo = PrefixMemo()
    conversation: list[dict[str, Any]] = []
    for n in range(30):
        conversation = [*conversation, {"role": "user", "content": f"m{n}"}]
        messages = memo.read([dict(m) for m in conversation],  # a fresh parse each line: equal, not identical
                             lambda i, entry: (seen.append(i), [Msg("user", entry["content"])])[1])
        assert [m.text for m in messages] == [f"m{k}" for k in range(n + 1)]
    assert seen == list(range(30))  # linear: each message once, not 1 + 2 + … + 30 times


def test_a_rewritten_history_is_converted_again_from_where_it_changed() -> None:
    memo = PrefixMemo()
    calls: list[int] = []

    def convert(i: int, entry: dict[str, Any]) -> list[Msg]:
        calls.append(i)
        return [Msg("user", entry["content"])]

    first = memo.read([{"content": "a"}, {"content": "b"}, {"content": "c"}], convert)
    second = memo.read([{"content": "a"}, {"content": "B"}, {"content": "c"}, {"content": "d"}], convert)
    assert calls == [0, 1, 2, 1, 2, 3] and second[0] is first[0] and second[2] is not first[2]
    assert memo.read([{"content": "a"}], convert)[0] is first[0] and calls[-1] == 3  # shorter: nothing converted


def test_requests_that_continue_share_their_messages(tmp_path: Path) -> None:
    reader = RequestReader("openai-chat")
    rows = rows_of(FIXTURES / "pairs" / "tools-repeated-call.jsonl")
    previous: tuple[Msg, ...] = ()
    for row in rows:
        messages, _ = reader.read(row["request"])
        assert all(a is b for a, b in zip(messages, previous))
        previous = messages


def test_nesting_too_deep_for_a_detector_is_named_with_its_run(monkeypatch: pytest.MonkeyPatch) -> None:
    import agentloops.diagnose as module

    def deep(run: Run, max_steps: int | None = None) -> list[Any]:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(module, "find", deep)
    with pytest.raises(LogError, match=r"runs\.jsonl:1: nested too deeply to be a log entry"):
        diagnose(RECORDS, partial=False)
