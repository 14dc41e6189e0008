"""The core package in Chinese: every widget, chart, quiz text and diagnose report, built and driven in zh.

English stays byte for byte what it was (the other test files check it, unchanged); here each learner-facing
piece of the ``core`` domain is built after ``set_language("zh")``, must show Chinese, must draw without a
missing glyph (warnings are errors), and every option of every control is driven so that none raises.
"""

from __future__ import annotations

import copy
import gettext
import importlib.util
import json
import pickle
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import agentloops as al
from agentloops import plots, retry, widgets
from agentloops.comparison import OUTCOME_WORDS, cell, outcome_words
from agentloops.criteria import CRITERIA, correct
from agentloops.diagnose import diagnose
from agentloops.diagnose.detectors import KIND_TITLES
from agentloops.i18n import LOCALE_DIR, N_, Phrase, joined, set_language, shown, speaking, translate
from agentloops.providers import FORMAT_TITLES, FORMATS
from agentloops.providers import widgets as provider_widgets
from agentloops.quiz import Question
from agentloops.record import OUTCOME_LABELS, ROW_KEYS
from agentloops.resources import data_dir
from agentloops.scenario import list_scenarios, load_scenario

ROOT = Path(__file__).resolve().parents[1]
HAN = re.compile(r"[\u4e00-\u9fff]")
LOGS = data_dir() / "diagnose"


def chinese(text: str) -> bool:
    """``text`` holds at least one Chinese character."""
    return bool(HAN.search(text))


@pytest.fixture(autouse=True)
def _in_chinese(monkeypatch: pytest.MonkeyPatch):
    for name in ("AGENTLOOPS_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        monkeypatch.delenv(name, raising=False)
    set_language("zh")
    yield
    set_language(None)


def _core_catalog() -> dict[str, Any]:
    with (LOCALE_DIR / "zh" / "LC_MESSAGES" / "core.mo").open("rb") as handle:
        return gettext.GNUTranslations(handle)._catalog  # type: ignore[attr-defined, no-any-return]


def _catalogs_script() -> Any:
    spec = importlib.util.spec_from_file_location("catalogs_for_core", ROOT / "scripts" / "catalogs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["catalogs_for_core"] = module
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- the catalog


def test_the_core_catalog_is_complete_and_compiled() -> None:
    problems = [line for line in _catalogs_script().problems() if "/core:" in line]
    assert problems == []


def test_texts_defined_elsewhere_are_marked_and_translated() -> None:
    catalog = _core_catalog()
    elsewhere = set(OUTCOME_LABELS.values()) | {c.about for c in CRITERIA.values()}  # marked where they are defined
    cases = retry.compare_policies()
    assert {cases.case_title(c) for c in cases.case_names()} <= set(plots.SHOWN_FROM_ELSEWHERE)
    elsewhere |= set(plots.SHOWN_FROM_ELSEWHERE)
    core = [t for s in list_scenarios(["article", "extra"]) for t in (s.title, s.teaches)]
    provider = [t for s in list_scenarios(["provider"]) for t in (s.title, s.teaches)]
    assert [t for t in core if t not in widgets.SCENARIO_TEXTS] == [], "a scenario file changed: update SCENARIO_TEXTS"
    assert [t for t in [*FORMAT_TITLES.values(), *provider] if t not in provider_widgets.SCENARIO_TEXTS] == []
    for text in [*elsewhere, *core, *provider, *FORMAT_TITLES.values(), *KIND_TITLES.values()]:
        assert text in catalog, text
    assert [t for t in [*core, *provider, *elsewhere] if not chinese(translate(t, "zh"))] == []


def test_english_is_what_it_was() -> None:
    set_language("en")
    for scenario in al.scenario_names(["article", "extra"]):
        for criterion in al.CRITERION_NAMES:
            record = al.run(scenario, criterion)
            steps = f"{record.steps} step{'' if record.steps == 1 else 's'}{' (cap)' if record.hit_cap else ''}"
            ending = (f"raised {record.error} at call {record.steps}" if record.error
                      else OUTCOME_LABELS[record.outcome])
            assert record.headline() == f"{steps}  tools [{', '.join(record.tools_executed)}]  {ending}"
            assert widgets.summary_row(record)[2] == ending
            assert record.shown_error() == record.error_message
    assert [outcome_words(o) for o in OUTCOME_WORDS] == [o.replace("_", " ") for o in OUTCOME_WORDS]
    assert cell(al.run("truncated", "content")) == "8 steps (cap)  tools[]  7 wasted calls"
    assert widgets.headers(widgets.SUMMARY_HEADERS) == list(widgets.SUMMARY_HEADERS)


def _every_round() -> list[tuple[str, str, al.RunRecord]]:
    """(reason, new since last call, record) of every round of every shipped scenario under every criterion."""
    seen = []
    for scenario in list_scenarios(["article", "extra", "provider"]):
        for criterion in al.CRITERION_NAMES:
            record = al.run(scenario, criterion)
            seen += [(r.decision.reason, r.added, record) for r in record.rounds]
    return seen


def test_reasons_and_messages_are_shown_in_chinese_and_stay_english_as_data() -> None:
    rounds = _every_round()
    assert [r for r, _a, _rec in rounds if not chinese(shown(r))] == []
    errors = {id(rec): rec for _r, _a, rec in rounds if rec.error_message}.values()
    assert errors and [rec.error_message for rec in errors if not chinese(rec.shown_error() or "")] == []
    assert [a for _r, a, _rec in rounds if a and not chinese(shown(a))] == []
    assert [r for r, _a, _rec in rounds if chinese(r)] == [], "the stored reason stays English"
    assert [rec.error_message for rec in errors if chinese(rec.error_message or "")] == []
    assert not any(chinese(json.dumps(rec.to_dict(), ensure_ascii=False)) for _r, _a, rec in rounds), "JSON is English"
    assert shown("a reason of your own") == "a reason of your own"
    cut = al.Response(content=None, tool_calls=(al.ToolCall(id="c1", name="read_file", arguments="{}"),),
                      finish_reason="length", raw_finish_reason="max_tokens")
    reason = correct(cut).reason
    assert reason == ("finish_reason is length: the output hit the token limit (the provider said 'max_tokens'); "
                      "its 1 tool call(s) were not run")
    assert shown(reason) == (
        "finish_reason 为 length：输出撞上了 Token 上限（服务商给的原值是 'max_tokens'）；其中 1 个工具调用没有执行")
    added = al.run("normal", "correct").rounds[1].added
    assert added == "its own last reply, result of read_file"
    assert shown(added) == "模型自己上一轮的回复、read_file 的结果"
    set_language("en")
    assert [r for r, _a, _rec in rounds if shown(r) != r] == []
    assert [rec.error_message for rec in errors if rec.shown_error() != rec.error_message] == []
    assert [a for _r, a, _rec in rounds if shown(a) != a] == []


def test_a_phrase_is_its_english_text_through_pickle_copy_and_json() -> None:
    phrase = correct(al.Response(content=None, finish_reason="unknown", raw_finish_reason="SPII")).reason
    assert isinstance(phrase, Phrase) and phrase == "unknown stop value 'SPII' and no tool calls"
    for twin in (pickle.loads(pickle.dumps(phrase)), copy.deepcopy(phrase)):
        assert twin == phrase and isinstance(twin, Phrase) and shown(twin) == shown(phrase)
        assert chinese(shown(twin))
    assert json.dumps({"why": phrase}) == '{"why": "unknown stop value \'SPII\' and no tool calls"}'
    assert hash(phrase) == hash(str(phrase)) and {phrase: 1}[str(phrase)] == 1


def test_joined_parts_show_their_separator_in_the_language_in_use() -> None:
    """The English text keeps the separator it was joined with; Chinese shows the catalog's (；，), also after a
    pickle or a copy, and a part that is a phrase is shown in turn."""
    sunny = Phrase(N_("sunny"))
    for separator, zh in (("; ", "；"), (", ", "，")):
        parts = joined(["24°C", sunny, "Beijing"], separator)
        assert parts == f"24°C{separator}sunny{separator}Beijing"
        for twin in (parts, pickle.loads(pickle.dumps(parts)), copy.deepcopy(parts)):
            with speaking("en"):
                assert twin == parts and shown(twin) == f"24°C{separator}sunny{separator}Beijing"
            with speaking("zh"):
                assert shown(twin) == f"24°C{zh}晴{zh}Beijing"
    assert joined([], "; ") == "" and joined(["a", "b"], " → ").shown() == "a → b"


def test_a_record_prints_in_chinese() -> None:
    spin = al.run("truncated", "content")
    assert spin.headline() == "8 步（到上限）  工具 []  撞上上限，返回了最后一段正文"
    text = str(spin)
    assert text.startswith("truncated × content（max_steps=8）：8 步（到上限）") and text.count("是") >= 7
    assert "空转调用：7" in text and "finish_reason" in text and "content" in text
    page = spin._repr_html_()
    assert "<th>发送的消息数</th>" in page and "<td>content 为 null</td>" in page and "空转调用：7" in page
    assert page.count("background:#fde9c9") == 7
    failed = al.run("content-filter", "correct")
    assert failed.headline() == "2 步  工具 [read_file]  第 2 次调用抛出 content_filter"
    assert "错误：content_filter：第 2 次调用：finish_reason 为 content_filter" in str(failed)
    assert failed.error_message == "call 2: finish_reason is content_filter: the provider withheld output"
    capped = al.run("long-chain", "correct")
    assert capped.shown_error() is not None and chinese(capped.shown_error() or "")
    assert [label for label in OUTCOME_LABELS.values() if not chinese(translate(label, "zh"))] == []
    assert all(chinese(translate(c.about, "zh")) for c in CRITERIA.values())
    assert list(spin.to_frame().columns) == list(ROW_KEYS)[1:], "the frame's columns stay code"
    assert spin.to_dict()["rounds"][1]["why"] == "content is null"


def test_the_language_is_read_when_a_widget_is_built_not_at_import() -> None:
    set_language("en")
    english = widgets.walkthrough("normal")
    set_language("zh")
    chinese_one = widgets.walkthrough("normal")
    assert english.criterion.description == "criterion" and chinese_one.criterion.description == "终止判据"
    assert not chinese(english.view.value) and chinese(chinese_one.view.value)


# --------------------------------------------------------------------------- the explorer


@pytest.fixture(scope="module")
def explorer() -> widgets.Explorer:
    set_language("zh")
    try:
        return widgets.explorer()
    finally:
        set_language(None)


def test_the_explorer_speaks_chinese(explorer: widgets.Explorer) -> None:
    explorer.scenario.value = widgets.DEFAULT_SCENARIO
    for control in (explorer.scenario, explorer.criterion, explorer.round_count, explorer.rounds[0].content,
                    explorer.rounds[0].text, explorer.rounds[0].tool_calls):
        assert chinese(control.description), control.description
    assert explorer.cap.description == "max_steps" and explorer.rounds[0].finish_reason.description == "finish_reason"
    assert [value for _label, value in explorer.rounds[0].content.options] == ["null", "empty", "text"]
    assert all(chinese(tip) for tip in explorer.criterion.tooltips)
    assert list(explorer.criterion.options) == list(al.CRITERION_NAMES), "criterion names are code"
    labels = dict((value, label) for label, value in explorer.scenario.options)
    assert labels["truncated"] == "truncated — 被 max_tokens 截断的一轮" and chinese(labels[widgets.CUSTOM])
    for html_text in (explorer.header.value, explorer.summary.value, explorer.table.value):
        assert chinese(html_text)
    assert "8 步（到上限）" in explorer.summary.value and "空转调用" in explorer.summary.value
    text = explorer._repr_mimebundle_()["text/plain"]
    assert "这段脚本在每种终止判据下的结果" in text and text == explorer.text()
    assert bytes(explorer.chart.value).startswith(b"\x89PNG")
    chart = explorer._chart
    assert chart is not None
    assert all(chinese(ax.get_title()) for ax in chart.figure.axes)


def test_every_option_of_every_explorer_control_works_in_chinese(explorer: widgets.Explorer) -> None:
    for _label, name in explorer.scenario.options:
        explorer.scenario.value = name
        assert explorer.state.source == name
    explorer.scenario.value = "normal"
    for criterion in explorer.criterion.options:
        explorer.criterion.value = criterion
        assert chinese(explorer.table.value)
    for cap in range(explorer.cap.min, explorer.cap.max + 1):
        explorer.cap.value = cap
        assert explorer.state.max_steps == cap
    for count in range(explorer.round_count.min, explorer.round_count.max + 1):
        explorer.round_count.value = count
        assert len(explorer.round_specs()) == count
    for row in explorer.rounds:
        for control in (row.content, row.tool_calls, row.finish_reason):
            for option in control.options:
                control.value = option[1] if isinstance(option, tuple) else option
        row.text.value = "我先打开文件看看。"
    assert explorer.scenario.value == widgets.CUSTOM and chinese(explorer.note.value)
    assert chinese(explorer.text()) and chinese(explorer.header.value)


def test_editing_and_errors_are_said_in_chinese(explorer: widgets.Explorer) -> None:
    explorer.scenario.value = "truncated"
    explorer.rounds[0].finish_reason.value = "stop"
    assert "自定义副本" in explorer.note.value and "truncated" in explorer.note.value
    assert "自定义脚本" in explorer.header.value
    with pytest.raises(al.ScenarioError, match="探索器里的脚本只能有 1 到 12 轮"):
        explorer.set_rounds([widgets.RoundSpec()] * 13)
    with pytest.raises(al.UsageError, match="未知的 criterion 'length'"):
        widgets.explorer(criterion="length")


def test_the_walkthrough_in_chinese_every_criterion_and_call() -> None:
    walk = widgets.walkthrough("truncated", "content")
    assert chinese(walk.criterion.description) and chinese(walk.call.description)
    for criterion in walk.criterion.options:
        walk.criterion.value = criterion
        for call in range(walk.call.min, walk.call.max + 1):
            walk.call.value = call
            assert chinese(walk.text()) and chinese(walk.view.value)
    walk.criterion.value = "content"
    walk.call.value = 5
    assert "第 5 次调用（共 8 次）" in walk.text() and "重复：" in walk.text()


def test_a_prediction_in_chinese_from_open_to_revealed() -> None:
    p = widgets.predict("哪种判据在第 1 次调用后就停了？", lambda: "content",
                        options=["content", "tool_calls", "none"], explanations={"content": "正文非空就收工"})
    assert chinese(p.lock_button.description) and chinese(p.reveal_button.description)
    assert "还没有记录" in p.text()
    p.reveal()
    assert chinese(p.result.value)
    p.lock()
    assert "先选一个答案" in p.result.value
    for option in p.choice.options:
        p.choice.value = option
    p.lock("content")
    assert "已锁定" in p.text() and "已锁定" in p.result.value
    verdict = p.reveal()
    assert verdict is not None and verdict.passed
    assert "运行结果是 'content'" in p.text() and "✓ 正确" in p.result.value
    number = widgets.predict("几次调用？", lambda: 8)
    assert chinese(number.choice.description)
    number.lock(7)
    verdict = number.reveal()
    assert verdict is not None and str(verdict).startswith("✗ 还不对")


# --------------------------------------------------------------------------- the provider explorer


def test_the_provider_explorer_in_chinese_every_provider_scenario_and_round() -> None:
    box = provider_widgets.provider_explorer()
    provider, picker = box.children[0].children
    round_pick, raw_view = box.children[2], box.children[3]
    assert chinese(provider.description) and chinese(picker.description) and chinese(round_pick.description)
    assert [value for _label, value in provider.options] == list(FORMATS)
    assert chinese(dict((v, k) for k, v in provider.options)["openai-chat"])
    for format in FORMATS:
        provider.value = format
        for label, name in picker.options:
            assert chinese(label), label
            picker.value = name
            assert box.scenario.name == name
            assert chinese(box.children[1].value) and chinese(box.report())
            for round_label, index in round_pick.options:
                assert chinese(round_label)
                round_pick.value = index
                assert raw_view.value.startswith("<pre")
    text = box._repr_mimebundle_()
    data = text[0] if isinstance(text, tuple) else text
    assert "终止判据" in data["text/plain"] and "怎样结束" in data["text/plain"]


# --------------------------------------------------------------------------- charts


def _all_text(figure: Any) -> list[str]:
    from matplotlib.text import Text

    return [t.get_text() for t in figure.findobj(Text) if t.get_text()]


def test_every_chart_draws_in_chinese_without_a_missing_glyph() -> None:
    article = al.compare(al.scenario_names(["article", "extra"]))
    records = [al.run("truncated", c) for c in al.CRITERION_NAMES]
    charts = {
        "steps": plots.steps_chart(article),
        "wasted": plots.wasted_chart(article),
        "wasted, nothing wasted": plots.wasted_chart([al.run("normal", c) for c in al.CRITERION_NAMES]),
        "context": plots.context_chart(records),
        "context, several scenarios": plots.context_chart([al.run("normal", "content"), *records]),
        "billed": plots.billed_chart(records),
        "retry": plots.retry_chart(retry.compare_policies()),
        **{f"metric {m}": plots.metric_chart(article, m)
           for m in ("steps", "wasted_calls", "wasted_tool_runs", "billed_prompt_tokens")},
    }
    for name, figure in charts.items():
        figure.canvas.draw()  # warnings are errors: a glyph missing from every font fails here
        titles = [ax.get_title() for ax in figure.axes] + [figure.get_suptitle()]
        assert any(chinese(t) for t in titles), name
        labels = [label for ax in figure.axes for label in (ax.get_xlabel(), ax.get_ylabel()) if label]
        assert all(chinese(label) or label == "Token" for label in labels), (name, labels)
        legends = [t.get_text() for ax in figure.axes if ax.get_legend()
                   for t in (ax.get_legend().get_title(), *ax.get_legend().get_texts())]
        assert not legends or any(chinese(t) for t in legends), name
    assert "终止判据" in _all_text(charts["steps"]) and "空转调用" in _all_text(charts["steps"])


def test_the_live_chart_in_chinese() -> None:
    chart = plots.LiveChart()
    png = chart.update({c: al.run("truncated", c) for c in al.CRITERION_NAMES}, 8, highlight="content")
    assert png.startswith(b"\x89PNG")
    assert all(chinese(ax.get_title()) for ax in chart.figure.axes)
    legend = [t.get_text() for t in chart.figure.legends[0].get_texts()]
    assert "空转调用" in legend and "步数上限" in legend and "content" in legend


# --------------------------------------------------------------------------- the quiz


def test_quiz_feedback_in_chinese() -> None:
    q = Question("循环返回了什么？", answer=lambda: 8, hints=["数一数调用", "看上限"],
                 options=(), explanations={})
    assert str(q.check()).startswith("… 还没作答：")
    wrong = q.check(7)
    assert str(wrong).startswith("✗ 还不对：7 不对。") and "提示：数一数调用" in str(wrong)
    assert "还不对" in wrong._repr_html_() and "提示：" in wrong._repr_html_()
    assert str(q.check(8)) == "✓ 正确：8 是对的。"
    assert str(q.hint()).startswith("提示 2/2：")
    assert str(q.solution()).startswith("答案：8")
    assert "不在选项里" in Question("?", answer="a", options=["a", "b"]).check("c").message
    assert "没能算出自己的答案" in Question("?", answer=lambda: 1 / 0).check(3).message
    assert str(Question("?", answer=1).hint()).startswith("提示：这道题没有提示")
    assert wrong.status == "incorrect", "the status stays code"


# --------------------------------------------------------------------------- diagnose


def test_a_diagnose_report_in_chinese_with_its_json_in_english() -> None:
    report = diagnose(LOGS / "recordings" / "truncated.content.json")
    text = str(report)
    assert "1 次运行，8 次模型调用，2 个问题" in text and "看到了什么" in text
    assert "第 1 次调用的响应又原样出现了 7 次" in text
    page = report._repr_html_()
    assert "<th>类型</th>" in page and "撞上上限应当抛出异常" in page
    svg = report.chart_svg()  # drawn with the CJK font: a missing glyph would warn, and warnings are errors
    assert "<svg" in svg
    data = json.loads(json.dumps(report.to_dict()))
    assert not chinese(json.dumps(data, ensure_ascii=False)), "the JSON contract stays English"
    assert set(data["findings"][0]) == {"kind", "run", "where", "calls", "count", "tokens", "detail"}
    assert list(report.to_frame().columns) == ["kind", "run", "where", "calls", "count", "tokens", "detail"]
    assert report.findings[0].detail.startswith("call 1's response came back 7 more time(s)")
    assert chinese(report.findings[0].text)


def test_every_kind_of_finding_reads_in_chinese() -> None:
    seen: dict[str, str] = {}
    for path in sorted(p for p in LOGS.glob("*/*.json*") if p.name != "VERSIONS.json"):
        report = diagnose(path)
        for finding in report.findings:
            seen.setdefault(finding.kind, finding.text)
        assert chinese(str(report))
    assert set(seen) == set(KIND_TITLES), f"no shipped log shows {set(KIND_TITLES) - set(seen)}"
    assert [kind for kind, sentence in seen.items() if not chinese(sentence)] == []


def test_a_healthy_report_says_so_in_chinese() -> None:
    report = diagnose(LOGS / "otel" / "pydantic-ai-polling.jsonl")
    assert report.healthy and "没有发现终止方面的 bug" in str(report)
    assert "<svg" in report.to_html()


def test_comparison_tables_in_chinese() -> None:
    table = al.compare(["truncated"])
    assert table.headers() == ["场景", "按 content 判", "按 finish_reason 判", "按 tool_calls 判", "正确的循环"]
    assert table.rows()[0][0] == "被 max_tokens 截断的一轮"
    assert table.rows()[0][-1] == "1 步  工具[]  第 1 次调用抛出 truncated"
    frame = table.table()
    assert frame.index.name == "场景" and list(frame.index) == ["被 max_tokens 截断的一轮"]
    assert list(frame.columns) == table.headers()[1:]
    assert json.loads(table.render("json"))[0]["scenario"] == "truncated", "the JSON stays code"
    assert load_scenario("truncated").title == "a round cut off by max_tokens", "the data stays English"
