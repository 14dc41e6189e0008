"""Run records render for people (text, HTML) and machines (dict, DataFrame)."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from agentloops import run
from agentloops.record import ROW_KEYS


def test_text_rendering_shows_the_spin():
    text = str(run("truncated", "content"))
    assert "wasted calls: 7" in text
    assert text.count("yes") == 7


def test_html_rendering_highlights_repeats():
    page = run("truncated", "finish_reason")._repr_html_()
    assert page.count("background:#fde9c9") == 7
    assert all(f"<th>{key}</th>" in page for key in ROW_KEYS)


def test_dict_is_json_and_rows_follow_the_columns():
    record = run("normal", "correct")
    data = json.loads(json.dumps(record.to_dict()))
    assert list(data["rounds"][0]) == list(ROW_KEYS)
    assert data["context_messages"] == [1, 3, 5]


def test_frame_has_one_row_per_call():
    frame = run("truncated", "content").to_frame()
    assert len(frame) == 8 and frame["repeated"].sum() == 7
    assert list(frame["new_since_last_call"])[1] == "its own last reply"


def test_repr_is_short():
    assert repr(run("normal")) == "<RunRecord normal × correct: 3 steps  tools [read_file, count_lines]  answer>"


def test_error_record_keeps_the_message():
    record = run("content-filter", "correct")
    assert record.error_message == "call 2: finish_reason is content_filter: the provider withheld output"
    assert "error: content_filter" in str(record)


def test_a_pickled_or_copied_record_equals_the_original_request_for_request():
    record = run("normal", "correct")
    sent = [tuple(r.request) for r in record.rounds]
    for twin in (pickle.loads(pickle.dumps(record)), copy.deepcopy(record)):
        assert twin == record and twin.to_dict() == record.to_dict()
        assert [r.request for r in twin.rounds] == sent
        assert [hash(r) for r in twin.rounds] == [hash(r) for r in record.rounds]


def test_the_headline_names_the_call_that_failed_when_the_model_raises():
    import agentloops as al

    cut = al.load_scenario("truncated")
    calls = []

    def strict(messages):  # answers the first call, fails the second
        calls.append(len(messages))
        if len(calls) == 2:
            raise ValueError("HTTP 400")
        return cut.responses[0]

    with pytest.raises(al.RunError) as caught:
        al.run_loop(al.FunctionModel(strict), cut.tools, criterion="content", max_steps=4)
    record = caught.value.record
    assert record.steps == 1 and record.error == "model_error"
    assert record.headline().endswith("raised model_error at call 2")
    assert record.error_message.startswith("call 2:")
    truncated = al.run("truncated", "correct")
    assert truncated.headline().endswith("raised truncated at call 1"), "an abnormal round is the call itself"
