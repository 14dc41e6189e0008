"""Streamed responses assemble into the round the whole body gives; broken streams are decisions, never crashes."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, get_args

import pytest

from agentloops import providers, run
from agentloops.criteria import CRITERIA, correct
from agentloops.errors import ScenarioError
from agentloops.providers.streaming import BREAKS, break_stream, payloads
from agentloops.record import Outcome
from agentloops.scenario import list_scenarios, read_scenario_file, scenario_from_dict

PROVIDER_SCENARIOS = list_scenarios(["provider"])


def streamed(scenario_data: dict[str, Any], seed: int) -> dict[str, Any]:
    """The scenario with every response replaced by its stream, split at points drawn from ``seed``."""
    fmt = scenario_data["format"]
    return {**scenario_data, "responses": [providers.stream_of(fmt, body, seed + i)
                                           for i, body in enumerate(scenario_data["responses"])]}


def record_of(scenario: Any, criterion: str) -> dict[str, Any]:
    return run(scenario, criterion).to_dict()


@pytest.mark.parametrize("scenario", PROVIDER_SCENARIOS, ids=lambda s: s.name)
def test_every_shipped_provider_scenario_streamed_at_random_points_gives_the_same_record(scenario: Any) -> None:
    data = scenario.model_dump(exclude={"responses", "raw_responses"}) | {"responses": list(scenario.raw_responses)}
    for seed in (0, 1, 7):
        stream_scenario = scenario_from_dict(streamed(data, seed))
        assert stream_scenario.responses == scenario.responses
        for criterion in CRITERIA:
            assert record_of(stream_scenario, criterion) == record_of(scenario, criterion)


def test_a_stream_really_arrives_in_pieces() -> None:
    body = next(s for s in PROVIDER_SCENARIOS if s.name == "openai-chat-cut-off-arguments").raw_responses[0]
    chunks = providers.stream_of("openai-chat", body, seed=3)["stream"]
    argument_pieces = [c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] for c in chunks[:-1]
                       if isinstance(c, dict) and c["choices"] and "tool_calls" in c["choices"][0]["delta"]]
    assert len(argument_pieces) > 2 and "".join(argument_pieces) == '{"path": "no'
    assert chunks[-1] == "[DONE]"


def _chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def test_a_stream_without_a_finish_reason_is_a_provider_failure_that_keeps_its_text() -> None:
    response = providers.adapt("openai-chat", {"stream": [_chat_chunk({"content": "The notes"}),
                                                          _chat_chunk({"content": " say"}), "[DONE]"]})
    assert response.finish_reason == "provider_error" and response.content == "The notes say"
    assert response.stream_error == "the stream ended without a finish_reason"
    decision = correct(response)
    assert decision.code == "provider_error"  # type: ignore[union-attr]
    assert "the stream broke: the stream ended without a finish_reason" in decision.reason  # type: ignore[union-attr]


def test_an_empty_finish_reason_on_every_chunk_is_no_stop_value() -> None:
    chunks = [_chat_chunk({"content": "hi"}, ""), _chat_chunk({}, "")]
    assert providers.adapt("openai-chat", {"stream": chunks}).finish_reason == "provider_error"
    assert providers.adapt("openai-chat", {"stream": [*chunks, _chat_chunk({}, "stop")]}).finish_reason == "stop"


def test_a_usage_chunk_with_empty_choices_is_read_and_done_is_optional() -> None:
    chunks = [_chat_chunk({"content": "42"}), _chat_chunk({}, "stop"),
              {"object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}]
    response = providers.adapt("openai-chat", {"stream": chunks})
    assert (response.content, response.finish_reason, response.usage.completion_tokens) == ("42", "stop", 2)  # type: ignore[union-attr]


def test_output_after_the_finish_chunk_is_out_of_order() -> None:
    chunks = [_chat_chunk({"content": "a"}, "stop"), _chat_chunk({"content": "b"})]
    response = providers.adapt("openai-chat", {"stream": chunks})
    assert response.finish_reason == "provider_error"
    assert response.stream_error == "chunk 1 carries output after finish_reason 'stop'"


def test_arguments_before_the_call_is_named_are_out_of_order() -> None:
    chunks = [_chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}, "tool_calls")]
    response = providers.adapt("openai-chat", {"stream": chunks})
    assert response.stream_error == "chunk 0 continues tool call 0 before any chunk named it"


def test_a_chunk_cut_mid_json_breaks_the_stream() -> None:
    text = json.dumps(_chat_chunk({"content": "The notes"}))
    response = providers.adapt("openai-chat", {"stream": [_chat_chunk({"content": "Hi"}), "data: " + text[:30]]})
    assert response.finish_reason == "provider_error" and response.content == "Hi"
    assert response.stream_error is not None and response.stream_error.startswith("chunk 1 is cut off mid-JSON")


def test_anthropic_input_json_cut_by_max_tokens_keeps_its_text() -> None:
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [],
                                              "stop_reason": None, "usage": {"input_tokens": 9, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"pa'}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": 'th": "no'}},
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 16}},
        {"type": "message_stop"},
    ]
    response = providers.adapt("anthropic", {"stream": events})
    assert response.finish_reason == "length" and response.tool_calls[0].arguments == '{"path": "no'
    assert response.tool_calls[0].is_cut_off
    out_of_order = providers.adapt("anthropic", {"stream": [events[0], events[2], *events[4:]]})
    assert out_of_order.stream_error == "event 1 adds to block 0 before content_block_start opened it"
    no_start = providers.adapt("anthropic", {"stream": events[1:]})
    assert no_start.stream_error == "event 0 (content_block_start) arrived before message_start"
    assert providers.adapt("anthropic", {"stream": events[:4]}).stream_error == \
        "the stream ended without a stop_reason"


def _carries_the_end(format: str, chunk: Any) -> bool:
    if not isinstance(chunk, dict):
        return False
    if format == "openai-chat":
        return bool(chunk["choices"]) and chunk["choices"][0]["finish_reason"] is not None
    if format == "openai-responses":
        return chunk["type"] in ("response.completed", "response.incomplete", "response.failed")
    if format == "anthropic":
        return chunk["type"] == "message_delta"
    if format == "gemini":
        return "finishReason" in chunk["candidates"][0]
    return chunk["done"] is True


def test_each_format_says_what_a_missing_end_is() -> None:
    expected = {
        "openai-chat": "the stream ended without a finish_reason",
        "openai-responses": "the stream ended without response.completed, response.incomplete or response.failed",
        "anthropic": "the stream ended without a stop_reason",
        "gemini": "the stream ended without a finishReason",
        "ollama": "the stream ended without a line with done: true",
    }
    seen = set()
    for scenario in PROVIDER_SCENARIOS:
        if scenario.name.endswith("-normal"):
            body = scenario.raw_responses[-1]
            chunks = providers.stream_of(scenario.format, body, seed=1)["stream"]
            end = next(i for i, c in enumerate(chunks) if _carries_the_end(scenario.format, c))
            whole = providers.adapt(scenario.format, {"stream": chunks})
            cut = providers.adapt(scenario.format, {"stream": chunks[:end]})
            assert cut.stream_error == expected[scenario.format], scenario.name
            assert (cut.finish_reason, cut.content) == ("provider_error", whole.content)
            seen.add(scenario.format)
    assert seen == set(expected)


def test_responses_events_whose_sequence_falls_are_out_of_order() -> None:
    scenario = next(s for s in PROVIDER_SCENARIOS if s.format == "openai-responses")
    events = providers.stream_of("openai-responses", scenario.raw_responses[0], seed=2)["stream"]
    repeated = [events[0], events[1], events[1], *events[2:]]
    response = providers.adapt("openai-responses", {"stream": repeated})
    assert response.stream_error == "event 2 has sequence_number 1 after 1"
    swapped = [events[0], events[2], events[1], *events[3:]]
    assert providers.adapt("openai-responses", {"stream": swapped}).stream_error == \
        f"event 1 ({events[2]['type']}) adds to output item 0 before it was added"


@pytest.mark.parametrize("scenario", PROVIDER_SCENARIOS, ids=lambda s: s.name)
def test_broken_streams_get_a_decision_never_a_crash(scenario: Any) -> None:
    """Fuzz: every shipped body, streamed, broken every way at seeded points, runs under every criterion."""
    rng = random.Random(scenario.name)
    for body in scenario.raw_responses:
        for how in BREAKS:
            for _ in range(3):
                stream = break_stream(providers.stream_of(scenario.format, body, rng.randrange(1000)), how,
                                      rng.randrange(1000))
                data = {"name": "broken", "title": "t", "teaches": "t", "format": scenario.format,
                        "tools": dict(scenario.tools), "responses": [stream]}
                try:
                    loaded = scenario_from_dict(data, "broken.json")
                except ScenarioError as error:  # a shape the file got wrong: one line naming the file
                    assert str(error).startswith("broken.json: ") and "\n" not in str(error)
                    continue
                for criterion in CRITERIA:
                    record = run(loaded, criterion)
                    assert record.outcome in get_args(Outcome)
                    if criterion == "correct" and loaded.responses[0].stream_error:
                        assert record.error == "provider_error" and record.tools_executed == ()


def test_malformed_chunks_are_one_line_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    base = {"name": "s", "title": "t", "teaches": "t", "format": "openai-chat", "tools": {}}
    path.write_text(json.dumps({**base, "responses": [{"stream": [[1, 2]]}]}))
    with pytest.raises(ScenarioError, match=r"s\.json: responses\[0\]\.stream\[0\]: expected a chunk object or its "
                                            r"JSON text; got a list$"):
        read_scenario_file(path)
    path.write_text(json.dumps({**base, "responses": [{"stream": {"a": 1}}]}))
    with pytest.raises(ScenarioError, match=r"s\.json: responses\[0\]\.stream: expected a list of chunks"):
        read_scenario_file(path)
    path.write_text(json.dumps({**base, "responses": [{"stream": [{"choices": "x"}]}]}))
    with pytest.raises(ScenarioError, match=r"s\.json: responses\[0\]\.stream\[0\]\.choices: expected a list"):
        read_scenario_file(path)


def test_payloads_drop_done_and_read_data_lines() -> None:
    chunks, problem = payloads({"stream": ['data: {"a": 1}', "data: [DONE]"]}, "r")
    assert (chunks, problem) == ([{"a": 1}], None)


# ----------------------------------------------------------------------------- reasoning, whole and streamed

REASONING_BODIES = {
    "openai-chat": {"choices": [{"index": 0, "finish_reason": "length",
                                 "message": {"role": "assistant", "content": None, "reasoning_content": "Let me think"}}]},
    "anthropic": {"id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "max_tokens",
                  "content": [{"type": "thinking", "thinking": "Let me think", "signature": "sig"}]},
    "gemini": {"candidates": [{"content": {"role": "model", "parts": [{"text": "Let me think", "thought": True}]},
                               "finishReason": "MAX_TOKENS", "index": 0}]},
    "ollama": {"model": "m", "message": {"role": "assistant", "content": "", "thinking": "Let me think"},
               "done": True, "done_reason": "length"},
}


@pytest.mark.parametrize("fmt", list(REASONING_BODIES))
def test_reasoning_is_read_apart_from_the_text_whole_and_streamed(fmt: str) -> None:
    whole = providers.adapt(fmt, REASONING_BODIES[fmt])
    assert whole.reasoning == "Let me think" and not whole.content and whole.finish_reason == "length"
    assert providers.adapt(fmt, providers.stream_of(fmt, REASONING_BODIES[fmt], seed=5)) == whole
    decision = correct(whole)
    assert decision.code == "truncated" and "spent on reasoning" in decision.reason  # type: ignore[union-attr]


def test_a_broken_streams_error_is_english_data_shown_in_chinese() -> None:
    from agentloops import load_scenario
    from agentloops.i18n import shown, speaking

    body = load_scenario("openai-chat-normal").raw_responses[-1]
    cut = providers.adapt("openai-chat", break_stream(providers.stream_of("openai-chat", body, 1), "truncate", 1))
    assert cut.stream_error == "the stream ended without a finish_reason"
    with speaking("zh"):
        assert shown(cut.stream_error) == "流结束了，却没有给出 finish_reason"
        assert cut.model_dump()["stream_error"] == "the stream ended without a finish_reason"
