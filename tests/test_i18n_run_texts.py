"""The Chinese edition at run time: what a learner reads while cells run is Chinese (issue 25, item 1).

One test per kind of run-time text — the scenarios' own words, stop messages, the controller's tables, the
budget explorer's table, quiz options — each with the language set to ``zh``: no Latin-letter word is left but
code (ids, tool, field and file names, status and reason codes, numbers with units). And the data stays as it
was: in English the same text is shown unchanged, and records, traces and JSON hold English in either language.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import pytest

import agentloops as al
import agentloops.controller as ctl
from agentloops.controller import policy
from agentloops.controller.policy.error_policy import POLICIES
from agentloops.controller.sim.scenario_files import controller_scenario_names, load_controller_scenario
from agentloops.controller.stopping.status import STATUS_DEFINITIONS
from agentloops.controller.task.world import TOOLS, WEATHER
from agentloops.controller.teaching import evidence
from agentloops.controller.teaching.widgets.budgets import budget_explorer
from agentloops.controller.teaching.widgets.parallel import calls_text, parallel_run
from agentloops.controller.vocabulary.ledger import Arrival, CallState, Ledger, Verdict
from agentloops.controller.vocabulary.render import Table
from agentloops.controller.vocabulary.tools import ToolStatus
from agentloops.errors import ErrorCode
from agentloops.i18n import language, set_language, shown, speaking, translate
from agentloops.quiz import Question
from agentloops.record import Outcome
from agentloops.response import quote_content, show_content
from agentloops.scenario import SCENARIO_SAYS, _shipped
from agentloops.stops import FINISH_REASONS, StopKind

ROOT = Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
CODE = re.compile(r"[_\d./:=()\[\]{}@<>+*×-]")
"""A token holding one of these is code or a value (``get_weather``, ``c1``, ``A-1042``, ``24°C``, ``notes.txt``)."""
NAMES = {*WEATHER, *TOOLS, *(spec.backend for spec in TOOLS.values()), *STATUS_DEFINITIONS, *al.CRITERION_NAMES,
         *get_args(Outcome), *get_args(ErrorCode), *FINISH_REASONS, "content", "tool_calls", "null", "complete",
         "incomplete", "impossible", "empty", *(p for spec in TOOLS.values() for p in spec.params),
         *get_args(ToolStatus), *get_args(StopKind), *get_args(CallState), *get_args(Verdict), *POLICIES,
         *(route.name for route in vars(policy.routes).values() if isinstance(getattr(route, "name", None), str)),
         "STOP", "compactor", "string", "number", "object", "int", "float", "str", "ReAct", "Python", "Token", "JSON",
         "HTTP"}
"""Names a learner meets as they are — code values the package returns: cities, tools, parameters and backends of
the stub world, stop statuses, criteria, outcomes, error codes, tool statuses, stop kinds, a parallel call's states
and verdicts, policies, routes, API fields and values (``STOP`` is Gemini's), the completion stage's answers, a
compaction's ``used``, types; and proper nouns."""
_SPLIT = re.compile(r"[\s，。：；、（）「」《》“”‘’！？—…,;!?\"`|]+")
_QUOTED = re.compile(r"'[^'\s]*'|`[^`]*`")
"""A value as ``repr`` writes it (``'default'``, ``'B'``) or code in backticks: code."""


def latin_words(text: str) -> list[str]:
    """The Latin-letter words of ``text`` that are not code, values or :data:`NAMES`."""
    return [t for t in _SPLIT.split(_QUOTED.sub(" ", text))
            if re.search(r"[A-Za-z]{2}", t) and not CODE.search(t) and t.strip("'") not in NAMES]  # a letter: a label


@pytest.fixture(autouse=True)
def _english_after() -> Iterator[None]:
    yield
    set_language("en")


def test_latin_words_finds_prose_and_lets_code_through() -> None:
    assert latin_words("缺少：✗ Beijing: the model declared success without it") == [
        "the", "model", "declared", "success", "without", "it"]
    assert latin_words("✓ Shanghai：24°C，晴（来源：met-service，经 get_weather 取得（c1））") == []


# --------------------------------------------------------------------------- the scenarios' own words


def _said(scenario: al.Scenario) -> set[str]:
    return {scenario.prompt, *scenario.tools.values(), *(r.content for r in scenario.responses if r.content)}


def test_every_text_a_shipped_scenario_says_is_marked_and_translated() -> None:
    said = set().union(*(_said(s) for s in _shipped().values()))
    assert sorted(said - set(SCENARIO_SAYS)) == [], "a scenario file says something new: add it to SCENARIO_SAYS"
    assert sorted(set(SCENARIO_SAYS) - said) == [], "no shipped scenario says this any more: drop it"
    untranslated = [t for t in SCENARIO_SAYS if latin_words(translate(t, "zh")) or
                    (latin_words(t) and not CJK.search(translate(t, "zh")))]
    assert untranslated == []


def test_a_scenarios_words_are_shown_in_chinese_and_stay_english_as_data() -> None:
    talk = al.load_scenario("talk-and-call")
    set_language("zh")
    assert show_content(talk.responses[0].content) == '"我先打开文件看看。"'
    assert "我先打开文件看看。" in talk.responses[0].summary()
    record = al.run("talk-and-call", "content")
    assert record.answer == "Let me open the file first."  # the run's own value: data
    assert "我先打开文件看看" in str(record) and "我先打开文件看看" in record._repr_html_()
    assert not CJK.search(json.dumps(record.to_dict(), ensure_ascii=False)), "JSON is English"
    assert record.rounds[0].to_row()["content"] == quote_content(talk.responses[0].content)
    assert [latin_words(shown(m.content or "")) for m in record.rounds[0].request] == [[]]
    set_language("en")
    for text in SCENARIO_SAYS:
        assert show_content(text, 999) == quote_content(text, 999) == json.dumps(text, ensure_ascii=False)


# --------------------------------------------------------------------------- stop messages

UNTRANSLATED_STOPS = {
    "research-compaction-checked": "the model writes its own answer from what it still remembers (raw fields and "
                                   "titles after a compaction): a model's free text is not the package's to translate",
}


def _stops(name: str) -> list[ctl.Stop]:
    run = ctl.run_scenario(name)
    resume = load_controller_scenario(name).resume
    return [run.stop] + ([ctl.resume(run, resume.answer).stop] if resume is not None else [])


@pytest.mark.parametrize("name", controller_scenario_names())
def test_a_stop_message_is_chinese_in_every_variable_part(name: str) -> None:
    set_language("zh")
    for stop in _stops(name):
        words = latin_words(stop.user_message())
        assert (words == []) != (name in UNTRANSLATED_STOPS), (name, words)
        assert not CJK.search(json.dumps(stop.system_record(), ensure_ascii=False)), "the system record is English"


def test_the_issues_two_messages_read_in_chinese_and_stay_as_they_were_in_english() -> None:
    early, waiting = ctl.run_scenario("weather-early-claim").stop, ctl.run_scenario("order-missing-id").stop
    english = early.user_message(), waiting.user_message()
    assert "  ✗ Beijing: the model declared success without it" in english[0]
    assert "Which order do you mean? Please send its order id (it looks like A-1042)." in english[1]
    assert "  ✓ Shanghai: 24°C, sunny (source: met-service via get_weather (c1))" in english[0]
    with speaking("zh"):
        assert "  ✗ Beijing：模型在没拿到它的情况下就宣告了成功" in early.user_message()
        assert "你指的是哪个订单？请发来订单号（形如 A-1042）。" in waiting.user_message()
        assert "24°C，晴（来源：met-service，经 get_weather 取得（c1））" in early.user_message()
    assert (early.user_message(), waiting.user_message()) == english
    assert early.missing[0][1] == "the model declared success without it"  # the record keeps the English text


def test_a_trusted_claims_answer_reads_back_in_chinese_and_stays_english_as_data() -> None:
    """The naive policy hands the model's own text to the user; the scripted model builds it from the catalog's
    templates ("All done. {answer}"), so the message reads it back in Chinese while the record keeps English."""
    trusted = ctl.run_scenario("weather-early-claim", policy="naive")
    english = trusted.user_message()
    assert english.splitlines()[0] == trusted.stop.answer == "All done. Weather compared — Shanghai: 24°C, sunny."
    with speaking("zh"):
        message = trusted.user_message()
    assert message.splitlines()[0] == "全部完成。天气对比——Shanghai：24°C，晴。" and latin_words(message) == []
    assert trusted.user_message() == english and trusted.system_record()["answer"] == trusted.stop.answer


# --------------------------------------------------------------------------- tables


def _tables() -> dict[str, Table]:
    return {
        "status": ctl.status_table(), "completion": ctl.completion_table(), "routing": ctl.routing_table(),
        "scenarios": ctl.scenario_table(), "budgets": evidence.budget_basis(), "evidence": evidence.evidence_index(),
        "derived": evidence.budget_basis("weather_compare", measure=6),
        "checked": evidence.limit_check(6, task="order_status"), "repeated": evidence.repeated_call_trace(),
        "statuses": evidence.stop_statuses(), "loops": ctl.compare_loops(12, seed=0).counts(),
    }


def test_a_tables_title_headers_and_labels_are_chinese_and_its_data_english() -> None:
    english = _tables()
    set_language("zh")
    chinese = _tables()
    for name, table in chinese.items():
        assert table == english[name], f"{name}: the table's data is the same in both languages"
        t = table.shown()
        assert latin_words(" ".join([t.title, *t.headers])) == [], (name, t.title, t.headers)
        cells = [v for row, raw in zip(t.rows, table.rows, strict=True) for v, r in zip(row, raw, strict=True)
                 if v != r]  # the cells the table marks for translation
        assert [v for v in cells if latin_words(str(v))] == [], name
        assert CJK.search(str(table)) and CJK.search(table._repr_html_()) and CJK.search(table.to_markdown())
        assert table.records() == english[name].records()
    assert chinese["loops"].shown().rows[0][0] == "只设上限"
    assert chinese["status"].shown().rows[0][2] == "模型表示做完了，并且任务的完成条件在任务状态上成立"
    set_language("en")
    for name, table in english.items():
        assert table.shown() == table and str(table).startswith(table.title), name


def test_a_runs_turn_table_has_chinese_headers() -> None:
    run = ctl.run_scenario("weather-normal")
    english = str(run)
    set_language("zh")
    header = str(run).splitlines()[1]
    assert latin_words(header) == [] and translate("pending goal", "zh") in header, header
    assert f"<th style='text-align:left'>{translate('decision', 'zh')}</th>" in run._repr_html_()
    set_language("en")
    assert str(run) == english and english.splitlines()[1].split() == [
        "turn", "state", "pending", "goal", "action", "tool", "status", "state", "delta", "decision"]


# --------------------------------------------------------------------------- the budget explorer's table


def test_the_budget_explorers_table_is_chinese() -> None:
    set_language("zh")
    explorer = budget_explorer(12, prewarm=False)
    text = re.sub(r"<[^>]+>", " ", explorer.table.value)
    assert "只设上限" in text and "控制器" in text and "运行次数" in text
    assert latin_words(text) == [], latin_words(text)
    set_language("en")
    english = re.sub(r"<[^>]+>", " ", budget_explorer(12, prewarm=False).table.value)
    assert "cap-only" in english and "ended as" in english and not CJK.search(english)


# --------------------------------------------------------------------------- parallel calls


def _ledger_notes() -> list[str]:
    """The ledger's note for each refused delivery: a duplicate, an unknown id, another task's, two late ones."""
    ledger = Ledger("task-1")
    for call_id in ("c1", "c2", "c3"):
        ledger.open(call_id, "fetch", "{}", 1, 0.0)
    ok = ctl.ToolResult("ok", data={"x": 1})
    for arrival in (Arrival(1.0, "c1", ok), Arrival(1.1, "c1", ok, 2), Arrival(1.2, "c9", ok),
                    Arrival(1.3, "c2", ok, 1, "task-0")):
        ledger.deliver(arrival, True)
    ledger.cancel_running(2.0, "join satisfied")
    ledger.deliver(Arrival(3.0, "c2", ok), True)
    ledger.close()
    ledger.deliver(Arrival(4.0, "c3", ok), True)
    return [e.note for e in ledger.events]


def _parallel_texts() -> list[str]:
    """What a learner reads of parallel runs (a join met, a deadline, a user's cancel, a budget run out): why each
    call ended, each refused delivery's note, each batch's observation."""
    runs = [parallel_run(minimum=1), parallel_run(minimum=3), parallel_run(cancel_at_s=2.0),
            ctl.run_scenario("research-budget-runs-out-in-flight")]
    return [text for run in runs for text in [*(c.note for c in run.calls), *(e.note for e in run.events),
                                              *(t.observation for t in run.turns if "," in t.tool_status)] if text]


def test_a_parallel_runs_notes_read_in_chinese_and_stay_english_as_data() -> None:
    notes, texts = _ledger_notes(), _parallel_texts()
    assert notes == ["delivery 2: already applied once; ignored", "no call with this id was started",
                     "belongs to task task-0, not task-1", "arrived after the call was cancelled; recorded, not applied",
                     "arrived after the task had already stopped; recorded, not applied"]
    assert {"cancelled: join 'minimum 1 within 10 s' satisfied", "cancelled: the join's deadline passed",
            "cancelled: the user cancelled the task", "join 'minimum 1 within 10 s' satisfied; 3 cancelled, 1 ok",
            "the user cancelled the task; 2 cancelled, 1 ok, 1 permanent_error"} <= set(texts)
    assert any(t.startswith("cancelled: the task stopped: the wall-time budget would run out") for t in texts)
    assert [shown(t) for t in notes + texts] == notes + texts  # English shows the data as it is
    set_language("zh")
    for text in notes + texts:
        assert CJK.search(shown(text)) and latin_words(shown(text)) == [], (text, shown(text))
    assert [str.__str__(t) for t in notes] == _ledger_notes()  # the data stays English in Chinese too


def test_the_parallel_explorers_call_table_is_chinese() -> None:
    english = calls_text(parallel_run())
    assert " call " in english and "late at 13 s: c4 — arrived after the task had already stopped" in english
    set_language("zh")
    chinese = calls_text(parallel_run())
    assert latin_words(chinese) == [], latin_words(chinese)
    assert "在任务已经停止之后才到" in chinese


# --------------------------------------------------------------------------- quiz options


def test_an_answer_that_is_a_scenarios_words_matches_its_chinese_option() -> None:
    def question() -> Question:
        return Question("?", answer=lambda: al.run("talk-and-call", "content").answer,
                        options=["notes.txt 共有 42 行。", "我先打开文件看看。", "没有答案"],
                        explanations={"我先打开文件看看。": "对"})
    set_language("zh")
    assert question().check("我先打开文件看看。").status == "correct"
    assert question().check("Let me open the file first.").status == "correct"  # the run's own value counts too
    assert question().check("notes.txt 共有 42 行。").status == "incorrect"
    assert "我先打开文件看看" in question().solution().text and "对" in question().solution().text
    set_language("en")
    assert question().check("我先打开文件看看。").status == "incorrect"  # English compares English


def _options(path: Path) -> Iterator[str]:
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        if "Question(" not in source:
            continue
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.keyword) and node.arg == "options" and isinstance(node.value, ast.List):
                yield from (e.value for e in node.value.elts if isinstance(e, ast.Constant))


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks" / "zh").glob("*.ipynb")), ids=lambda p: p.stem)
def test_the_chinese_editions_quiz_options_are_chinese_or_code(path: Path) -> None:
    assert language() == "en"
    assert [o for o in _options(path) if latin_words(o)] == []
