"""A body read as a :class:`Reply` says what its :class:`Response` says: same values, same comparisons, same summary."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from agentloops.criteria import correct
from agentloops.providers import FORMATS, Reply, adapt, read, stop_values
from agentloops.providers.examples import example_for
from agentloops.providers.reply import Call
from agentloops.resources import data_dir
from agentloops.response import Response


def _bodies() -> list[tuple[str, object]]:
    """Every response body of the shipped provider scenarios and of the stop table's examples, with its format."""
    found: list[tuple[str, object]] = []
    for path in sorted((data_dir() / "scenarios" / "providers").glob("*.json")):
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        found += [(data["format"], body) for body in data["responses"]]
    for fmt in FORMATS:
        found += [(fmt, example_for(fmt, value, with_tool_call=calls)) for value in stop_values(fmt)
                  for calls in (False, True)]
    return found


BODIES = _bodies()


@pytest.mark.parametrize(("fmt", "body"), BODIES)
def test_a_reply_holds_the_values_of_its_response(fmt: str, body: object) -> None:
    reply, response = read(fmt, body), adapt(fmt, body)
    assert reply.response == response
    assert (reply.content, reply.finish_reason, reply.raw_finish_reason, reply.reasoning) == \
        (response.content, response.finish_reason, response.raw_finish_reason, response.reasoning)
    assert [tuple(c) for c in reply.tool_calls] == [(c.id, c.name, c.arguments) for c in response.tool_calls]
    usage = response.usage
    assert reply.tokens == (None if usage is None else (usage.prompt_tokens or 0) + (usage.completion_tokens or 0))
    assert reply.summary() == response.summary()


def test_replies_compare_as_their_responses_do() -> None:
    replies = [(read(fmt, body), adapt(fmt, body)) for fmt, body in BODIES]
    for (a, ra), (b, rb) in itertools.product(replies[::3], repeat=2):
        assert a.same_as(b) == ra.same_as(rb)


def _reply(content: str | None = "done", finish: str = "stop", calls: tuple[Call, ...] = ()) -> Reply:
    return Reply(content, calls, finish, finish)  # type: ignore[arg-type]


@pytest.mark.parametrize(("other", "same"), [
    (_reply(), True),
    (Reply("done", (), "stop", "other raw", True, 5, 7), True),  # the raw value and usage are not what was said
    (_reply("other"), False),
    (_reply(finish="length"), False),
    (_reply(calls=(Call("c1", "read", "{}"),)), False),
])
def test_same_as_at_each_field(other: Reply, same: bool) -> None:
    assert _reply().same_as(other) is same
    assert _reply().response.same_as(other.response) is same


def test_calls_differing_only_by_id_are_the_same_call_but_not_by_arguments() -> None:
    one = _reply(None, "tool_calls", (Call("c1", "read", '{"a": 1}'),))
    assert one.same_as(_reply(None, "tool_calls", (Call("c2", "read", '{"a": 1}'),)))
    assert not one.same_as(_reply(None, "tool_calls", (Call("c1", "read", '{"a": 2}'),)))
    assert not one.same_as(_reply(None, "tool_calls", (Call("c1", "grep", '{"a": 1}'),)))


def test_the_reply_of_a_response_gives_that_very_response() -> None:
    response = Response.model_validate({"content": None, "finish_reason": "tool_calls", "usage": {"prompt_tokens": 3},
                                        "tool_calls": [{"id": "c1", "name": "read", "arguments": "{}"}]})
    reply = Reply.of(response)
    assert reply.response is response and reply.tokens == 3 and reply.tool_calls == (Call("c1", "read", "{}"),)
    assert Reply.of(Response(content="x", finish_reason="stop")).tokens is None


def test_the_response_is_built_once() -> None:
    reply = _reply()
    assert reply.response is reply.response


_CRAFTED = [
    _reply(None, "tool_calls", (Call("c1", "read", '{"path": "a'),)),  # arguments cut off: truncated
    _reply(None, "tool_calls", (Call("c1", "read", '{"path" 1}'),)),  # not JSON: malformed
    _reply(None, "tool_calls", (Call("c1", "read", '[1]'),)),  # JSON, not an object: malformed
    _reply(None, "tool_calls", (Call("c1", "read", ""),)),  # no arguments: runs
    _reply('{"name": "read", "arguments": {}}'),  # a call written as text
    _reply("done", "tool_calls"), _reply(None, "tool_calls"), _reply("", "pause"),
    Reply("", (), "length", "max_tokens", True, 3, 9, "thinking…"),  # the limit spent on reasoning
    Reply("x", (), "unknown", "weird", False),
]


@pytest.mark.parametrize("reply", [read(fmt, body) for fmt, body in BODIES] + _CRAFTED)
def test_the_correct_loop_judges_a_reply_as_its_response(reply: Reply) -> None:
    response = reply.response
    assert correct(reply) == correct(response)
    assert (reply.text_tool_call, reply.at_token_limit, reply.stream_error, reply.max_tokens) == \
        (response.text_tool_call, response.at_token_limit, response.stream_error, response.max_tokens)
    assert [(c.parsed_arguments, c.is_cut_off) for c in reply.tool_calls] == \
        [(c.parsed_arguments, c.is_cut_off) for c in response.tool_calls]
    assert (None if reply.usage is None else reply.usage.completion_tokens) == \
        (None if response.usage is None else response.usage.completion_tokens)
