"""The response model: immutable, strict, and honest about null versus empty."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from agentloops import Response, ToolCall
from agentloops.response import json_completion, shorten, show_content


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


# ----------------------------------------------------------------------------- cut off versus malformed arguments

WHITESPACE = st.sampled_from(["", "", " ", "\n  ", "\t"])
NUMBERS = st.from_regex(r"-?(0|[1-9][0-9]{0,4})(\.[0-9]{1,3})?([eE][+-]?[0-9]{1,2})?", fullmatch=True)
ESCAPED = st.sampled_from(['"\\u00e9t\\u00e9"', '"\\ud83d\\ude00"', '"\\ud800"', '"a\\"b\\\\c\\/d"',
                           '"\\b\\f\\n\\r\\t"', '"\\u0000"'])
STRINGS = st.one_of(
    st.tuples(st.text(max_size=6), st.booleans()).map(lambda t: json.dumps(t[0], ensure_ascii=t[1])),  # unicode
    ESCAPED,
)
LEAVES = st.one_of(NUMBERS, STRINGS, st.sampled_from(["true", "false", "null", "NaN", "Infinity", "-Infinity"]))


def joined(parts: list[str], ws: str, open_: str, close: str) -> str:
    return open_ + ws + ("," + ws).join(parts) + ws + close


def objects(values: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    members = st.lists(st.tuples(STRINGS, WHITESPACE, values), max_size=4)
    return st.tuples(members, WHITESPACE).map(
        lambda t: joined([f"{key}{ws}:{ws}{value}" for key, ws, value in t[0]], t[1], "{", "}"))


VALUES = st.recursive(LEAVES, lambda inner: st.one_of(
    st.tuples(st.lists(inner, max_size=4), WHITESPACE).map(lambda t: joined(t[0], t[1], "[", "]")),
    objects(inner)), max_leaves=10)
ARGUMENT_TEXTS = st.tuples(WHITESPACE, objects(VALUES), WHITESPACE).map("".join)


@settings(max_examples=300, deadline=None)
@given(ARGUMENT_TEXTS)
def test_every_proper_prefix_of_valid_arguments_is_cut_off_never_malformed(text):
    assert isinstance(json.loads(text), dict)  # the generator makes valid argument texts
    for end in range(len(text)):
        prefix = text[:end]
        call = ToolCall(id="1", name="f", arguments=prefix)
        assert call.parsed_arguments is not None or call.is_cut_off, repr(prefix)
        completion = json_completion(prefix)
        assert completion is not None, repr(prefix)
        assert isinstance(json.loads(prefix + completion), dict), repr(prefix + completion)
    assert json_completion(text) == "" and not ToolCall(id="1", name="f", arguments=text).is_cut_off


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]":,.-+eE0123456789 tfnruasl\\x', max_size=30))
def test_text_called_cut_off_really_completes_to_an_object(text):
    completion = json_completion(text)
    if completion is not None:
        assert isinstance(json.loads(text + completion), dict), repr(text + completion)


@settings(max_examples=200, deadline=None)
@given(ARGUMENT_TEXTS, st.sampled_from(["x", "}", ",", "]", '"', "{}", "1"]))
def test_anything_after_a_complete_object_is_malformed(text, tail):
    call = ToolCall(id="1", name="f", arguments=text + tail)
    assert call.parsed_arguments is None and not call.is_cut_off


@pytest.mark.parametrize("text", [
    '{"a" 1}', '{"a": 1,}', '{"a": 01}', '{"a": 1.}', '{"a": 1.e5}', '{"a": -}', '{"a": tru e}', '{"a": truex',
    '{"a": "\\x"}', '{"a": "\\u12G4"}', '{"a": [1 2]}', '{"a": [1,]}', '{,}', '{"a": 1}}', '{"a": 1]', '[{"a": 1',
    '"text"', "not json", '{"a": -NaN', '{"a": +1', '{"a": "line\nbreak"}', "{'a': 1}", '{"a": .5', '{a: 1',
    '{"a": nul}', '{"a": 1 "b": 2',
])
def test_known_malformed_texts_are_not_called_cut_off(text):
    call = ToolCall(id="1", name="f", arguments=text)
    assert call.parsed_arguments is None and not call.is_cut_off and json_completion(text) is None


@pytest.mark.parametrize(("text", "completion"), [
    ('{"a": tru', 'e}'), ('{"a": 12', "}"), ('{"a": 1e', "0}"), ('{"a": 1e-', "0}"), ('{"a": -', "0}"),
    ('{"a": 0.', "0}"), ('{"a": "\\u00', '00"}'), ('{"a": "\\', 'n"}'), ('{"a"', ":null}"), ('{"a":', "null}"),
    ('{"a": 1,', '"":null}'), ('{"a": [', "]}"), ('{"a": [1,', "null]}"), ("{", "}"), ('{"a": -Inf', "inity}"),
])
def test_the_completion_closes_exactly_what_is_open(text, completion):
    assert json_completion(text) == completion
    assert ToolCall(id="1", name="f", arguments=text).is_cut_off


def test_arguments_nested_deeper_than_the_parser_are_not_an_object_and_not_a_crash():
    call = ToolCall(id="1", name="f", arguments='{"a":' * 100_000)
    assert call.parsed_arguments is None and call.is_cut_off


@pytest.mark.parametrize("width", [1, 2, 60])
def test_a_text_is_cut_only_past_its_width_and_then_ends_in_an_ellipsis(width):
    assert shorten("x" * width, width) == "x" * width
    cut = shorten("x" * (width + 1), width)
    assert len(cut) == width and cut.endswith("…")
