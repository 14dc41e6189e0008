"""Each provider's request body read into the messages the detectors compare: roles, texts, calls and results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentloops.diagnose import diagnose, iter_runs
from agentloops.diagnose.model import Msg, TurnBuilder, results_for
from agentloops.diagnose.requests import read_request
from agentloops.providers import Reply
from agentloops.response import Response

ARGS = '{"path":"a"}'
"""The canonical form of the arguments every body below writes in its own way."""


BODIES: dict[str, tuple[dict[str, Any], tuple[Msg, ...]]] = {
    "openai-chat": ({"messages": [
        {"role": "developer", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "read a"}]},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "42 lines"},
    ]}, (Msg("system", "be brief"), Msg("user", "read a"), Msg("assistant", None, (("read_file", ARGS),)),
         Msg("tool", "42 lines", call_id="c1"))),
    "openai-responses": ({"input": [
        {"role": "system", "content": "be brief"},
        {"type": "message", "role": "user", "content": "read a"},
        {"type": "function_call", "call_id": "c1", "name": "read_file", "arguments": '{"path": "a"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "42 lines"},
        {"type": "reasoning", "summary": []},
    ]}, (Msg("system", "be brief"), Msg("user", "read a"), Msg("assistant", None, (("read_file", ARGS),)),
         Msg("tool", "42 lines", call_id="c1"))),
    "anthropic": ({"messages": [
        {"role": "user", "content": "read a"},
        {"role": "assistant", "content": [{"type": "text", "text": "Let me look."},
                                          {"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "no such file",
                                      "is_error": True}, {"type": "text", "text": "try b"}]},
    ]}, (Msg("user", "read a"), Msg("assistant", "Let me look.", (("read_file", ARGS),)),
         Msg("tool", "no such file", call_id="c1", is_error=True), Msg("user", "try b"))),
    "gemini": ({"contents": [
        {"role": "user", "parts": [{"text": "read a"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {"path": "a"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"error": "gone"}}}]},
    ]}, (Msg("user", "read a"), Msg("assistant", None, (("read_file", ARGS),)),
         Msg("tool", '{"error":"gone"}', name="read_file", is_error=True))),
    "ollama": ({"messages": [
        {"role": "system", "content": "be brief"},
        {"role": "assistant", "content": "",
         "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "a"}}}]},
        {"role": "tool", "tool_name": "read_file", "content": "42 lines"},
    ]}, (Msg("system", "be brief"), Msg("assistant", "", (("read_file", ARGS),)),
         Msg("tool", "42 lines", name="read_file"))),
}


@pytest.mark.parametrize("format", list(BODIES))
def test_each_entry_of_a_request_becomes_the_messages_it_holds(format: str) -> None:
    body, expected = BODIES[format]
    messages, incremental = read_request(format, body)
    assert messages == expected and incremental is False


def test_an_assistant_message_without_calls_or_text_is_still_the_models_turn() -> None:
    anthropic, _ = read_request("anthropic", {"messages": [{"role": "assistant", "content": []}]})
    gemini, _ = read_request("gemini", {"contents": [{"role": "model", "parts": []}]})
    assert anthropic == gemini == (Msg("assistant", None, ()),)
    assert read_request("gemini", {"contents": [{"role": "user", "parts": []}]})[0] == ()


def test_a_responses_request_that_continues_a_stored_one_is_incremental() -> None:
    messages, incremental = read_request("openai-responses", {"input": "go on", "previous_response_id": "r1"})
    assert messages == (Msg("user", "go on"),) and incremental is True


# --- what is new information, and which result answers which call ---------------------------------------------

def _reply(*calls: tuple[str, str, str]) -> Any:
    return Reply.of(Response.model_validate({"content": None, "finish_reason": "tool_calls", "tool_calls": [
        {"id": cid, "name": name, "arguments": args} for cid, name, args in calls]}))


def test_a_result_is_new_once_per_call_it_answers_not_once_per_text() -> None:
    builder = TurnBuilder()
    user = Msg("user", "read a and b")
    first = builder.add("line 1", (user,), _reply(("c1", "read_file", '{"p": "a"}'), ("c2", "read_file", '{"p": "b"}')),
                        None)
    asked = (user, Msg("assistant", None, (("read_file", '{"p":"a"}'), ("read_file", '{"p":"b"}'))))
    second = builder.add("line 2", (*asked, Msg("tool", "X", call_id="c1"), Msg("tool", "X", call_id="c2")),
                         _reply(("c3", "read_file", '{"p": "a"}')), None)
    again = (*asked, Msg("tool", "X", call_id="c1"), Msg("tool", "X", call_id="c2"),
             Msg("assistant", None, (("read_file", '{"p":"a"}'),)), Msg("tool", "X", call_id="c3"))
    third = builder.add("line 3", again, _reply(("c4", "read_file", '{"p": "a"}')), None)
    assert (first.fresh, second.fresh, third.fresh) == (True, True, False)  # b's X was news; a's X again is not


def test_the_user_speaking_again_is_seen_and_a_system_note_is_not_the_user() -> None:
    answer = Reply.of(Response(content="done", finish_reason="stop"))
    builder = TurnBuilder()
    start = (Msg("user", "hi"),)
    builder.add("line 1", start, answer, None)
    with_note = builder.add("line 2", (*start, Msg("assistant", "done"), Msg("system", "be brief")), answer, None)
    spoke = builder.add("line 3", (*start, Msg("assistant", "done"), Msg("system", "be brief"), Msg("assistant", "done"),
                                   Msg("user", "and b?")), answer, None)
    assert (with_note.user_spoke, spoke.user_spoke) == (False, True)


def test_results_without_ids_are_matched_by_position_and_missing_ones_stay_unknown() -> None:
    a = Msg("tool", "A")
    assert results_for(2, [a], ()) == [a, None]
    b = Msg("tool", "B", call_id="c2")
    assert results_for(2, [b], ("c1", "c2")) == [None, b]


# --- runs from request/response lines ---------------------------------------------------------------------------

def _line(run: str | None, answer: str | None, error: str | None = None, prompt: str = "hi") -> dict[str, Any]:
    line: dict[str, Any] = {"request": {"messages": [{"role": "user", "content": prompt}]}}
    line["response"] = None if answer is None else {"choices": [{"message": {"role": "assistant", "content": answer},
                                                                 "finish_reason": "stop"}]}
    if answer is None:
        line["error"] = {"type": "APITimeoutError", "message": error or "Request timed out."}
    if run is not None:
        line["run"] = run
    return line


def _runs(tmp_path: Any, lines: list[dict[str, Any]]) -> list[Any]:
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return list(iter_runs(log, "pairs"))


def test_unnamed_runs_are_numbered_from_one(tmp_path: Any) -> None:
    runs = _runs(tmp_path, [_line(None, None), _line(None, "a", prompt="one"), _line(None, "b", prompt="two")])
    assert [r.name for r in runs] == ["run 1", "run 2"] and len(runs[0].failed_attempts) == 1


def test_a_failed_attempt_of_another_run_closes_the_one_before(tmp_path: Any) -> None:
    runs = _runs(tmp_path, [_line("r1", "a"), _line("r2", None), _line("r2", "b")])
    assert [(r.name, len(r.failed_attempts)) for r in runs] == [("r1", 0), ("r2", 1)]


def test_a_run_that_ends_on_failed_attempts_raised_the_last_ones_error(tmp_path: Any) -> None:
    [run] = _runs(tmp_path, [_line("r1", "a"), _line("r1", None, "first"), _line("r1", None, "second")])
    assert run.ending.how == "raised" and "second" in (run.ending.error or "") and len(run.failed_attempts) == 2


def test_the_same_text_from_another_call_is_news() -> None:
    builder = TurnBuilder()
    user = Msg("user", "read a, then b")
    builder.add("line 1", (user,), _reply(("c1", "read_file", '{"p": "a"}')), None)
    sent = (user, Msg("assistant", None, (("read_file", '{"p":"a"}'),)), Msg("tool", "X", call_id="c1"))
    builder.add("line 2", sent, _reply(("c2", "read_file", '{"p": "b"}')), None)
    later = builder.add("line 3", (*sent, Msg("assistant", None, (("read_file", '{"p":"b"}'),)),
                                   Msg("tool", "X", call_id="c2")), _reply(("c3", "read_file", '{"p": "c"}')), None)
    assert later.fresh is True  # b had never answered before, even though a said the same


def test_gemini_results_carry_their_call_ids_so_a_parallel_batch_answered_out_of_order_matches(tmp_path: Path) -> None:
    """Gemini gives each ``functionCall`` an ``id`` its ``functionResponse`` repeats; answered in the other order,
    position would hand each call the other's result: here a polled call (its result changes) and a repeated one."""
    def batch(n: int) -> dict[str, Any]:
        return {"role": "model", "parts": [{"functionCall": {"id": f"p{n}", "name": "progress", "args": {}}},
                                           {"functionCall": {"id": f"s{n}", "name": "status", "args": {}}}]}

    def answers(n: int) -> dict[str, Any]:
        return {"role": "user", "parts": [
            {"functionResponse": {"id": f"s{n}", "name": "status", "response": {"result": "down"}}},
            {"functionResponse": {"id": f"p{n}", "name": "progress", "response": {"result": f"{n}0%"}}}]}

    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": "wait for it"}]}]
    lines = []
    for n in range(1, 4):
        lines.append({"format": "gemini", "request": {"contents": list(contents)},
                      "response": {"candidates": [{"content": batch(n), "finishReason": "STOP"}]}})
        contents += [batch(n), answers(n)]
    lines.append({"format": "gemini", "request": {"contents": contents}, "response": {"candidates": [
        {"content": {"role": "model", "parts": [{"text": "still down"}]}, "finishReason": "STOP"}]}})
    assert read_request("gemini", {"contents": [answers(1)]})[0][0].call_id == "s1"
    log = tmp_path / "gemini.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    found = [(f.kind, f.detail) for f in diagnose(log).findings]
    assert found == [("repeated_tool_call", "status({}) was called 3 times and returned the same result each time")]


def test_the_legacy_function_call_and_its_function_result_are_a_call_and_its_result(tmp_path: Path) -> None:
    """Chat Completions before tools: ``function_call`` on the assistant message, the result as a ``function``
    message. Unread, each result went unseen: every call was taken for an answer the conversation went on after."""
    made = {"name": "status", "arguments": '{"id": 1}'}
    asked = {"choices": [{"finish_reason": "function_call",
                          "message": {"role": "assistant", "content": None, "function_call": made}}]}
    messages: list[dict[str, Any]] = [{"role": "user", "content": "status?"}]
    lines = []
    for _ in range(3):
        lines.append({"request": {"messages": list(messages)}, "response": asked})
        messages += [{"role": "assistant", "content": None, "function_call": made},
                     {"role": "function", "name": "status", "content": "down"}]
    lines.append({"request": {"messages": messages}, "response": {"choices": [
        {"finish_reason": "stop", "message": {"role": "assistant", "content": "still down"}}]}})
    assert read_request("openai-chat", {"messages": messages[1:3]})[0] == (
        Msg("assistant", None, (("status", '{"id":1}'),)), Msg("tool", "down", call_id="function_call", name="status"))
    log = tmp_path / "legacy.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert [(f.kind, f.calls) for f in diagnose(log).findings] == [("repeated_tool_call", "2-3")]
