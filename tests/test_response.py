"""The response model: immutable, strict, and honest about null versus empty."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentloops import Response, ToolCall
from agentloops.response import show_content


def test_response_is_immutable():
    response = Response(content="hi", finish_reason="stop")
    with pytest.raises(ValidationError):
        response.content = "changed"  # type: ignore[misc]


def test_content_must_be_given_explicitly():
    with pytest.raises(ValidationError, match="content"):
        Response.model_validate({"finish_reason": "stop"})


def test_null_tool_calls_mean_none():
    assert Response.model_validate({"content": None, "tool_calls": None, "finish_reason": "length"}).tool_calls == ()


@pytest.mark.parametrize(
    ("arguments", "parsed", "cut_off"),
    [
        ('{"path": "a"}', {"path": "a"}, False),
        ({"path": "a"}, {"path": "a"}, False),
        ("", {}, False),
        ('{"path": "no', None, True),
        ('{"a": [1, 2', None, True),
        ('{"a": "b\\"', None, True),
        ('{"a" 1}', None, False),
        ("[1]", None, False),
        ("not json", None, False),
    ],
)
def test_arguments_keep_raw_text_and_parse_when_they_can(arguments, parsed, cut_off):
    call = ToolCall(id="1", name="read_file", arguments=arguments)
    assert call.parsed_arguments == parsed
    assert call.is_cut_off is cut_off
    assert isinstance(call.arguments, str)


def test_same_as_ignores_ids_and_usage():
    a = Response(content=None, tool_calls=[ToolCall(id="1", name="f", arguments="{}")], finish_reason="tool_calls")
    b = Response(content=None, tool_calls=[ToolCall(id="2", name="f", arguments="{}")], finish_reason="tool_calls",
                 usage={"prompt_tokens": 5})
    c = Response(content="", tool_calls=[ToolCall(id="1", name="f", arguments="{}")], finish_reason="tool_calls")
    assert a.same_as(b) and not a.same_as(c)


def test_show_content_tells_null_from_empty():
    assert (show_content(None), show_content(""), show_content("x")) == ("null", '""', '"x"')
    assert show_content("a" * 100, width=10).endswith("…\"")


def test_extra_fields_are_rejected_to_catch_typos():
    with pytest.raises(ValidationError, match="finsh_reason"):
        Response.model_validate({"content": None, "finish_reason": "stop", "finsh_reason": "stop"})
