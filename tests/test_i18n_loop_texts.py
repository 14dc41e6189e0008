"""The core's run-time text in Chinese, its data in English (issue 25): the loop's decisions, a record's frame,
a phrase inside a printed list, a failed run's error, the criteria's summaries, the retry cases' stub words and
the explorer's text boxes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import agentloops as al
from agentloops import retry, stop_cases
from agentloops.i18n import set_language, shown
from agentloops.record import shown_decision
from agentloops.response import Response
from agentloops.scenario import SCENARIO_SAYS
from agentloops.widgets.script import ANSWER, TALK, text_read


@pytest.fixture
def in_chinese(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("AGENTLOOPS_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        monkeypatch.delenv(name, raising=False)
    set_language("zh")
    yield
    set_language(None)


def test_a_decision_is_its_value_in_english_and_a_word_in_chinese(in_chinese: None) -> None:
    decisions = [al.Continue("r"), al.Finish("a", "r"), al.Abort("truncated", "r")]
    assert [shown_decision(d) for d in decisions] == ["继续", "结束", "中止"]
    set_language("en")
    assert [shown_decision(d) for d in decisions] == ["continue", "finish", "abort"]


def test_a_records_table_and_text_show_the_decision_in_chinese(in_chinese: None) -> None:
    record = al.run("normal", "correct")
    assert "继续" in str(record) and "结束" in record._repr_html_() and "continue" not in str(record)
    assert [r.to_row()["decision"] for r in record.rounds] == ["continue", "continue", "finish"]


def test_a_frame_shows_chinese_and_holds_english(in_chinese: None) -> None:
    frame = al.run("long-chain", "correct", max_steps=12).to_frame()[["new_since_last_call", "repeated"]]
    page = frame._repr_html_()
    assert "模型自己上一轮的回复" in page and "重复" in page and "its own last reply" not in page
    assert frame["new_since_last_call"].iloc[1] == "its own last reply, result of read_page"
    runs = al.compare(["truncated-partial"]).to_frame()[["criterion", "outcome", "answer"]]
    page = runs._repr_html_()
    assert "终止判据" in page and "结局" in page and shown(runs["answer"].iloc[0]) in page
    assert runs["answer"].iloc[0] == "The notes list two actions: ship the loop fix and"
    set_language("en")
    assert "its own last reply" in frame._repr_html_() and "criterion" in runs._repr_html_()


def test_a_phrase_in_a_printed_list_is_shown(in_chinese: None) -> None:
    added = al.run("normal", "correct").rounds[1].added
    assert repr([added]) == repr([shown(added)]) and "回复" in repr(added) and added == "its own last reply, " \
        "result of read_file"
    set_language("en")
    assert repr(added) == repr("its own last reply, result of read_file")


def test_a_failed_runs_error_reads_in_chinese_and_keeps_its_english_message(in_chinese: None) -> None:
    with pytest.raises(al.ContentFilterError) as caught:
        al.run("content-filter", "correct", raise_errors=True)
    assert str(caught.value) == "第 2 次调用：finish_reason 为 content_filter：服务商扣下了输出"
    assert caught.value.args[0] == "call 2: finish_reason is content_filter: the provider withheld output"
    set_language("en")
    assert str(caught.value) == caught.value.args[0]


def test_a_model_that_raised_is_worded_in_chinese(in_chinese: None) -> None:
    def broken(messages: object) -> Response:
        raise ValueError("HTTP 400: bad")

    with pytest.raises(al.RunError) as caught:
        al.run_loop(al.FunctionModel(broken), {}, criterion="correct")
    record = caught.value.record
    assert record is not None and record.shown_error() == "第 1 次调用：模型抛出 ValueError：HTTP 400: bad"
    assert record.error_message == "call 1: the model raised ValueError: HTTP 400: bad"


def test_a_criterions_summary_is_shown_in_the_language_in_use(in_chinese: None) -> None:
    rule = al.CRITERIA["tool_calls"]
    assert rule.summary == "没有工具调用就算完成" and rule.about == "no tool calls means done"
    set_language("en")
    assert rule.summary == rule.about


def test_the_first_truncation_attempt_cuts_the_summary_where_the_catalog_lists_it() -> None:
    cut = stop_cases._limited(Response(content=stop_cases.SUMMARY, finish_reason="stop"), 64)
    assert cut.finish_reason == "length" and cut.content == stop_cases.CUT_SUMMARY


def test_the_retry_cases_show_their_stub_words_in_chinese(in_chinese: None) -> None:
    first = str(stop_cases.attempt("truncated"))
    assert "11 月 3 日" in first and "The meeting" not in first
    assert "用一段话总结" in stop_cases.CASES["truncated"].setup.describe()
    record = stop_cases.attempt("failing_tool")
    assert retry.failing_tools(record)["read_file"][0] == "error: permission denied: notes.txt"


def test_the_explorers_text_box_shows_chinese_and_runs_the_scenarios_words(in_chinese: None) -> None:
    assert text_read(shown(ANSWER)) == ANSWER and shown(ANSWER) != ANSWER
    assert text_read("我自己写的") == "我自己写的"
    assert all(text_read(shown(said)) == said for said in SCENARIO_SAYS if shown(said) != said)
    from agentloops.widgets import explorer

    view = explorer("custom", "content", prewarm=False)
    assert [row.text.value for row in view.rounds[:2]] == [shown(TALK), shown(ANSWER)] == ["我先打开文件看看。",
                                                                                         "notes.txt 共有 42 行。"]
    assert [row.spec().text for row in view.rounds[:2]] == [TALK, ANSWER]
