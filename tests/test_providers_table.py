"""The stop-value table: complete against the SDKs' own enums, computed from the adapters, cheap to import."""

from __future__ import annotations

import subprocess
import sys
import typing

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentloops import correct
from agentloops.providers import (
    FORMATS,
    STOP_TABLE,
    UnknownFormatError,
    adapt,
    render_stop_table,
    stop_table,
    stop_values,
)
from agentloops.providers.examples import example_body


def documented(format: str, field: str | None = None) -> set[str]:
    return {v.value for v in stop_values(format) if field is None or v.field == field}


def literal_values(annotation: object) -> set[str]:
    """The strings of a ``Literal`` (or ``Optional[Literal]``) annotation."""
    found: set[str] = set()
    for arg in typing.get_args(annotation):
        if isinstance(arg, str):
            found.add(arg)
        else:
            found |= literal_values(arg)
    return found


def test_every_value_of_the_openai_sdk_enums_is_in_the_table():
    openai = pytest.importorskip("openai")
    del openai
    from openai.types.chat.chat_completion import Choice
    from openai.types.responses.response import IncompleteDetails
    from openai.types.responses.response_status import ResponseStatus

    assert literal_values(Choice.model_fields["finish_reason"].annotation) <= documented("openai-chat")
    assert literal_values(ResponseStatus) - {"incomplete"} <= documented("openai-responses", "status")
    assert literal_values(IncompleteDetails.model_fields["reason"].annotation) <= documented(
        "openai-responses", "incomplete_details.reason")


def test_every_value_of_the_anthropic_sdk_enums_is_in_the_table():
    pytest.importorskip("anthropic")
    from anthropic.types.beta.beta_stop_reason import BetaStopReason
    from anthropic.types.stop_reason import StopReason

    assert literal_values(StopReason) | literal_values(BetaStopReason) <= documented("anthropic")


def test_anthropic_table_agrees_with_the_sdk_tool_runner():
    pytest.importorskip("anthropic")
    try:
        from anthropic.lib.tools._beta_runner import _STOP_REASON_STEPS
    except ImportError:  # pragma: no cover - private module of a newer SDK
        pytest.skip("this anthropic SDK has no beta tool runner table")
    rows = {row.value: row for row in stop_table(["anthropic"])}
    for value, step in _STOP_REASON_STEPS.items():
        ours = rows[value].without_tools
        expected = {"resume": "go on (call again, no tools)", "stop": None, "run_tools": None}[step]
        if expected is not None:
            assert ours == expected, value
        if step == "stop" and value not in ("end_turn", "stop_sequence"):
            assert ours.startswith("abnormal"), value  # the SDK stops; the correct loop says how badly


def test_the_table_covers_every_documented_value_and_matches_the_declarations():
    assert len(STOP_TABLE) == sum(len(stop_values(f)) for f in FORMATS)
    declared = {(v.field, v.value): v.finish_reason for f in FORMATS for v in stop_values(f)}
    for row in STOP_TABLE:
        assert declared[(row.field, row.value)] == row.finish_reason, row


def test_abnormal_values_are_abnormal_with_or_without_tool_calls():
    codes = {"length": "truncated", "content_filter": "content_filter", "refusal": "refusal",
             "malformed_tool_call": "malformed_tool_call", "provider_error": "provider_error",
             "unknown": "unknown_stop"}
    for row in STOP_TABLE:
        if row.finish_reason in codes:
            assert row.kind == "abnormal", row
            assert row.without_tools == f"abnormal ({codes[row.finish_reason]})", row
            assert row.with_tools in (f"abnormal ({codes[row.finish_reason]})", "(no round to carry a call)"), row
        elif row.finish_reason == "stop":
            assert (row.kind, row.without_tools, row.with_tools) == ("finished", "finished", "go on with tools"), row
        elif row.finish_reason == "pause":
            assert (row.kind, row.without_tools) == ("go_on", "go on (call again, no tools)"), row
        else:  # a tool-call value on a round that brought text and no call: the text is the answer
            assert row.finish_reason == "tool_calls", row
            assert (row.kind, row.without_tools, row.with_tools) == (
                "go_on", "finished (the fields disagree)", "go on with tools"), row


def test_each_format_has_a_plain_stop_that_also_ends_tool_rounds_where_documented():
    plain_stop = {"gemini": "STOP", "ollama": "stop", "openai-responses": "completed"}
    for format, value in plain_stop.items():
        row = next(r for r in stop_table([format]) if r.value == value)
        assert row.with_tools == "go on with tools" and row.finish_reason == "stop"


def test_rendering():
    text = render_stop_table(["anthropic"])
    assert text.splitlines()[0].split()[:3] == ["format", "stop", "value"]
    assert "stop_reason = pause_turn" in text and "go on (call again, no tools)" in text
    markdown = render_stop_table(["ollama"], "markdown")
    assert markdown.startswith("| format | stop value |") and "| ollama | done_reason = load |" in markdown


def test_unknown_format_is_a_usage_error():
    with pytest.raises(UnknownFormatError, match=r"unknown provider format 'bedrock'; expected one of: openai-chat, "):
        adapt("bedrock", {})


MAIN_FIELD = {"openai-chat": None, "anthropic": None, "gemini": None, "ollama": None}


@given(format=st.sampled_from(sorted(MAIN_FIELD)), value=st.text(min_size=1, max_size=30))
def test_any_undocumented_value_is_unknown_and_kept(format, value):
    known = {v.upper() if format == "gemini" else v for v in documented(format)}
    if (value.upper() if format == "gemini" else value) in known:
        return
    response = adapt(format, example_body(format, value))
    assert (response.finish_reason, response.raw_finish_reason) == ("unknown", value)
    decision = correct(response)
    assert getattr(decision, "code", None) == "unknown_stop" and repr(value) in decision.reason


@given(value=st.text(min_size=1, max_size=30))
def test_any_undocumented_incomplete_reason_is_unknown_and_kept(value):
    if value in documented("openai-responses", "incomplete_details.reason"):
        return
    response = adapt("openai-responses", example_body("openai-responses", value, field="incomplete_details.reason"))
    assert (response.finish_reason, response.raw_finish_reason) == ("unknown", f"incomplete:{value}")


def test_importing_the_adapters_loads_no_sdk_and_the_package_does_not_load_them():
    code = (
        "import sys, agentloops\n"
        "assert 'agentloops.providers' not in sys.modules\n"
        "import agentloops.providers, agentloops.providers.examples\n"
        "for f in agentloops.providers.FORMATS: agentloops.providers.module(f)\n"
        "agentloops.load_scenario('gemini-normal')\n"
        "bad = [m for m in ('openai', 'anthropic', 'httpx', 'ipywidgets', 'pandas') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
