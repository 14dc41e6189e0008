"""The shortcuts diagnose takes to read at the speed of parsing decide as the long way would, at their boundaries.

Each test sits where a shortcut's decision flips: the fewest turns or observations a detector can fire on, a
line with and without whitespace or other text after its value, an encoder with and without CPython's C
accelerator. ``benchmarks/bench_diagnose.py`` times them; ``benchmarks/check_diagnose_unchanged.py`` compares
every report before and after.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentloops.diagnose.detectors import FAILURE_STREAK, find
from agentloops.diagnose.model import Ending, Msg, Run, Turn
from agentloops.diagnose.source import decode
from agentloops.providers import Reply, _common, read
from agentloops.providers.reply import Call
from agentloops.response import Response

CUT = Response(content=None, finish_reason="length")
ANSWER = Response(content="done", finish_reason="stop")


def call(n: int) -> Response:
    return Response.model_validate({"content": None, "finish_reason": "tool_calls",
                                    "tool_calls": [{"id": f"c{n}", "name": "read_file", "arguments": '{"path": "a"}'}]})


def run_of(steps: list[tuple[Response, dict[str, Any]]]) -> Run:
    turns = tuple(Turn(i, f"line {i}", Reply.of(response), **{"fresh": True, "user_spoke": False, "results": (),
                                                               "tokens": None, **fields})
                  for i, (response, fields) in enumerate(steps, start=1))
    return Run("r", "line 1", turns, Ending("raised"))


def kinds(run: Run) -> list[str]:
    return [finding.kind for finding in find(run)]


def test_two_calls_are_enough_for_a_reask_and_one_is_not() -> None:
    assert kinds(run_of([(CUT, {}), (CUT, {"fresh": False})])) == ["reasked"]
    assert kinds(run_of([(CUT, {"fresh": False})])) == []


def test_a_call_observed_twice_is_enough_for_a_repeat() -> None:
    same = [(call(1), {}), (call(2), {"results": (Msg("tool", "A", call_id="c1"),)}),
            (ANSWER, {"results": (Msg("tool", "A", call_id="c2"),)})]
    assert kinds(run_of(same)) == ["repeated_tool_call"]
    assert kinds(run_of(same[1:])) == []  # one observation: nothing to repeat


def test_a_streak_is_found_at_its_threshold_and_not_below() -> None:
    def failing(calls: int) -> Run:
        steps: list[tuple[Response, dict[str, Any]]] = [(call(1), {})]
        steps += [(call(n + 1), {"results": (Msg("tool", "Error: gone", call_id=f"c{n}"),)}) for n in range(1, calls)]
        steps.append((ANSWER, {"results": (Msg("tool", "Error: gone", call_id=f"c{calls}"),)}))
        return run_of(steps)

    assert "failure_streak" in kinds(failing(FAILURE_STREAK))
    assert "failure_streak" not in kinds(failing(FAILURE_STREAK - 1))


@pytest.mark.parametrize(("raw", "value"), [
    (b'{"a": 1}\n', {"a": 1}),
    (b'{"a": 1}', {"a": 1}),  # the last line, without its newline
    (b'{"a": 1} \t\r\n', {"a": 1}),  # JSON's whitespace after the value
    (b'  {"a": 1}\n', {"a": 1}),  # whitespace before it: the decoder's own way
    (b'"text"\n', "text"),
])
def test_a_line_scanned_at_once_is_the_value_the_decoder_gives(raw: bytes, value: object) -> None:
    assert decode("log:1", raw, last=False) == value == json.loads(raw)


@pytest.mark.parametrize(("raw", "error"), [
    (b'{"a": 1} x\n', "log:1: not valid JSON: Extra data at column 10"),
    (b'{"a": 1}\x0c\n', "log:1: not valid JSON: Extra data at column 9"),  # a form feed is not JSON's whitespace
    (b'{"a": 1}\xc2\xa0\n', "log:1: not valid JSON: Extra data at column 9"),  # nor is a no-break space
    (b'{"a": }\n', "log:1: not valid JSON: Expecting value at column 7"),
    (b'{"a": NaN}\n', "log:1: not valid JSON: NaN is not JSON"),
])
def test_a_line_with_anything_else_after_its_value_is_refused_as_the_decoder_words_it(raw: bytes,
                                                                                        error: str) -> None:
    with pytest.raises(ValueError, match="^" + error.replace("(", r"\(") + "$"):
        decode("log:1", raw, last=False)


VALUES = [{"b": 1, "a": [1.5, None, True, "é\n\"x\""]}, "text", 3, [], {}, {"z": {"y": {"x": 1e100}}}]


def _another_c_encoder(*args: object) -> None:
    raise TypeError("takes other arguments")


@pytest.mark.parametrize("accelerator", ["this one", "none", "another"])
def test_the_encoders_write_what_json_dumps_writes(monkeypatch: pytest.MonkeyPatch, accelerator: str) -> None:
    with monkeypatch.context() as patch:  # the encoders are built without it; json.dumps then writes with it
        if accelerator != "this one":
            patch.setattr(json.encoder, "c_make_encoder", None if accelerator == "none" else _another_c_encoder)
        plain, canonical = _common.json_encoder(), _common.json_encoder(sort_keys=True, separators=(",", ":"))
    for value in VALUES:
        assert plain(value) == json.dumps(value, ensure_ascii=False)
        assert canonical(value) == json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def test_arguments_given_as_an_object_are_written_as_json_text_and_others_checked() -> None:
    assert _common.tool_call("r", call_id="c1", name="f", arguments={"b": 1, "a": "é"}).arguments == \
        '{"b": 1, "a": "é"}'
    assert _common.tool_call("r", call_id="c1", name="f", arguments='{"a"').arguments == '{"a"'
    with pytest.raises(_common.RawBodyError, match=r"^r\.input: expected a JSON object or its text; got a list$"):
        _common.tool_call("r", call_id="c1", name="f", arguments=[1], arguments_field="input")


@pytest.mark.parametrize(("format", "body", "error"), [
    ("gemini", {"candidates": [{"content": [1], "finishReason": "STOP"}]},
     "response.candidates[0].content: expected a content object; got a list"),
    ("gemini", {"candidates": [{"content": {"parts": [7]}, "finishReason": "STOP"}]},
     "response.candidates[0].content.parts[0]: expected a JSON object; got the number 7"),
    ("gemini", {"candidates": [{"content": {"parts": [{"text": 5}]}, "finishReason": "STOP"}]},
     "response.candidates[0].content.parts[0].text: expected a string; got the number 5"),
    ("gemini", {"candidates": [{"content": {"parts": [{"text": None, "thought": True}]}, "finishReason": "STOP"}]},
     "response.candidates[0].content.parts[0].text: expected a string; got null"),
    ("gemini", {"usageMetadata": "x", "candidates": [{"finishReason": "STOP"}]},
     "response.usageMetadata: expected a usageMetadata object; got the string 'x'"),
    ("anthropic", {"stop_reason": "end_turn", "content": ["x"]},
     "response.content[0]: expected a JSON object; got the string 'x'"),
    ("anthropic", {"stop_reason": "end_turn", "content": [], "usage": [3]},
     "response.usage: expected a usage object; got a list"),
    ("openai-chat", {"choices": [{"finish_reason": "stop", "message": "hi"}]},
     "response.choices[0].message: expected the assistant message; got the string 'hi'"),
    ("openai-chat", {"choices": [{"finish_reason": "stop", "message": {"content": "hi"}}], "usage": 3},
     "response.usage: expected a usage object; got the number 3"),
    ("ollama", {"done": True, "message": None}, "response.message: expected the assistant message; got null"),
])
def test_a_body_object_read_dict_first_is_still_checked_when_it_is_not_one(format: str, body: dict[str, Any],
                                                                           error: str) -> None:
    with pytest.raises(_common.RawBodyError) as raised:
        read(format, body)
    assert str(raised.value) == error


def test_a_body_object_read_dict_first_may_be_any_mapping() -> None:
    from types import MappingProxyType
    body = {"candidates": [{"content": MappingProxyType({"parts": [MappingProxyType({"text": "hi"})]}),
                            "finishReason": "STOP"}], "usageMetadata": MappingProxyType({"promptTokenCount": 3})}
    reply = read("gemini", body)
    assert (reply.content, reply.prompt_tokens) == ("hi", 3)


def test_the_abort_code_is_the_correct_loops_on_every_documented_stop_value() -> None:
    from agentloops.criteria import Abort, correct
    from agentloops.diagnose.detectors import abort_code
    from agentloops.providers import FORMATS, stop_values
    from agentloops.providers.examples import example_for

    codes = set()
    for format in FORMATS:
        for value in stop_values(format):
            for with_tool_call in (False, True):
                reply = read(format, example_for(format, value, with_tool_call=with_tool_call))
                decision = correct(reply)
                assert abort_code(reply) == (decision.code if isinstance(decision, Abort) else None)
                codes.add(abort_code(reply))
    cut = Reply(None, (Call("c1", "f", '{"a": '),), "tool_calls", "tool_calls")  # arguments cut off mid-JSON
    assert abort_code(cut) == "truncated" == getattr(correct(cut), "code", None)
    assert None in codes and len(codes) > 2  # both sides of the decision were met


def test_a_prefix_memo_drops_the_messages_of_every_entry_from_the_first_changed_one() -> None:
    from agentloops.diagnose.model import PrefixMemo
    memo, converted = PrefixMemo(), []

    def convert(i: int, entry: str) -> list[Msg]:  # an entry makes as many messages as it has letters
        converted.append(i)
        return [Msg("user", letter) for letter in entry]

    def texts(entries: list[str]) -> list[str | None]:
        return [m.text for m in memo.read(entries, convert)]

    assert texts(["ab", "", "c"]) == ["a", "b", "c"] and converted == [0, 1, 2]
    assert texts(["ab", "", "d", "ef"]) == ["a", "b", "d", "e", "f"] and converted[3:] == [2, 3]
    assert texts(["x", "", "d"]) == ["x", "d"] and converted[5:] == [0, 1, 2]  # the first entry changed
    assert texts(["x"]) == ["x"] and converted[8:] == []  # shorter: its first entry kept, nothing converted


def test_a_response_reader_assembles_a_stream_and_adapts_any_other_body() -> None:
    from types import MappingProxyType

    from agentloops.providers import reader, stream_of
    body = {"choices": [{"finish_reason": "stop", "message": {"content": "hi"}}]}
    stream = stream_of("openai-chat", body)
    for given in (stream, MappingProxyType(stream)):  # a stream as a parsed dict and as another mapping
        assert reader("openai-chat")(given, "response").content == "hi"
    one_key = {"candidates": [{"content": {"parts": [{"text": "yes"}]}, "finishReason": "STOP"}]}
    assert reader("gemini")(one_key, "response").content == "yes"  # one key, but not a stream
    with pytest.raises(_common.RawBodyError, match=r"^response\.stream"):
        reader("openai-chat")({"stream": 3}, "response")  # a stream's key alone is read as a stream


@pytest.mark.parametrize(("args", "text"), [({"b": 1, "a": 2}, '{"b": 1, "a": 2}'), (None, "{}")])
def test_a_gemini_call_reads_its_args_dict_first_and_checks_any_other(args: object, text: str) -> None:
    body = {"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": args}}]},
                            "finishReason": "STOP"}]}
    assert read("gemini", body).tool_calls[0].arguments == text
    body["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] = [1]
    with pytest.raises(_common.RawBodyError, match=r"functionCall\.args: expected an args object; got a list$"):
        read("gemini", body)


def test_the_floor_benchmark_runs_and_its_hypotheticals_find_what_diagnose_finds() -> None:
    """``benchmarks/diagnose_floor.py`` backs a figure in the notes: it stops when a swapped part would read the
    log differently, so a run that ends well says each hypothetical row found the same findings."""
    script = Path(__file__).parent.parent / "benchmarks" / "diagnose_floor.py"
    done = subprocess.run([sys.executable, str(script), "--mb", "0.05", "--rounds", "1"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = [line.split()[-1] for line in done.stdout.splitlines()[1:]]
    assert len(rows) == 6 and all(row.endswith("x") for row in rows), done.stdout
