"""The controller's learner-facing text in Chinese: stop messages, next steps, widgets and charts.

English stays byte-identical (the other controller tests check it); here the same objects are built with
``set_language("zh")`` and must speak Chinese where a learner reads them, while the status values, codes,
reasons, trace lines and JSON keys stay English.
"""

from __future__ import annotations

import json
import re
import warnings
from typing import Any

import pytest

from agentloops.controller import run_scenario
from agentloops.controller.stopping.status import NEXT_STEPS, PLAIN_WHY, STOP_CODES, Stop, next_step
from agentloops.controller.teaching import plots
from agentloops.controller.teaching import widgets as ctl_widgets
from agentloops.controller.vocabulary.readback import read_back
from agentloops.i18n import _, set_language

CJK = re.compile(r"[\u4e00-\u9fff]")


pytestmark = pytest.mark.usefixtures("no_language_from_the_environment")


def _chinese(text: str) -> bool:
    return bool(CJK.search(text))


# --------------------------------------------------------------------------- stop messages


@pytest.mark.parametrize("code", STOP_CODES)
def test_every_next_step_has_a_chinese_text(code: str) -> None:
    english = next_step(code)
    set_language("zh")
    chinese = next_step(code)
    assert chinese != english and _chinese(chinese) and "_" not in chinese
    assert english == NEXT_STEPS[code], "the table keeps the English text; it is translated where shown"


def test_the_plain_reasons_and_the_generic_next_step_are_translated() -> None:
    set_language("zh")
    assert all(_chinese(_(why)) for why in PLAIN_WHY.values())
    assert _chinese(next_step("a code no table has"))


def test_a_stop_in_chinese_keeps_its_status_code_reason_and_record_in_english() -> None:
    english = run_scenario("weather-timeout-always")
    set_language("zh")
    run = run_scenario("weather-timeout-always")
    message = run.user_message()
    assert _chinese(message) and "What you can do" not in message
    assert message.splitlines()[0].startswith("我停了下来") and "你可以：" in message
    assert (run.status, run.code, run.stop.reason) == (english.status, english.code, english.stop.reason)
    assert run.system_record() == {**english.system_record(), "trace_id": run.system_record()["trace_id"]}
    assert not _chinese(json.dumps(run.system_record(), ensure_ascii=False))
    text = str(run.stop)
    head, record = text.split("\n--- 系统记录 ---\n")
    assert head.startswith(f"[{run.status}] {run.code}：{read_back(run.stop.reason)}\n--- 给用户的消息 ---\n")
    assert _chinese(head.splitlines()[0]) and run.stop.reason not in head  # the headline's reason is read back
    assert json.loads(record)["reason"] == english.stop.reason  # the record keeps it in English


@pytest.mark.parametrize("status", ["succeeded", "waiting_for_user", "partially_completed", "failed_unrecoverable",
                                    "system_failure", "budget_exhausted", "no_progress", "cancelled", "handed_off"])
def test_every_status_heads_its_message_in_chinese(status: str) -> None:
    set_language("zh")
    stop = Stop(status, "model_error", "an engineer's reason", 1, 0.0, "t", "task", "p", question="哪座城市？",
                budget="retries", open_items=("weather:Beijing",))
    message = stop.user_message()
    assert _chinese(message.splitlines()[0]), message
    assert ("Beijing" in message and "weather:Beijing" not in message) or status in ("succeeded", "waiting_for_user")


def test_the_language_is_read_when_the_message_is_built_not_at_import() -> None:
    run = run_scenario("weather-normal")
    english = run.user_message()
    set_language("zh")
    assert run.user_message() != english and "来源：" in run.user_message()
    set_language("en")
    assert run.user_message() == english


# --------------------------------------------------------------------------- widgets


@pytest.mark.parametrize("name", list(ctl_widgets.BUILDERS))
def test_every_widget_speaks_chinese_and_keeps_its_values(name: str) -> None:
    english = ctl_widgets.BUILDERS[name]()
    english_text = english.text()
    set_language("zh")
    widget = ctl_widgets.BUILDERS[name]()
    assert _chinese(widget.text().splitlines()[0]) and not _chinese(english_text.splitlines()[0])
    descriptions = [getattr(c, "description", "") for c in widget.children if hasattr(c, "description")]
    assert any(_chinese(d) for d in descriptions if d), descriptions
    values = [getattr(c, "value", None) for c in widget.children if hasattr(c, "options")]
    assert values == [getattr(c, "value", None) for c in english.children if hasattr(c, "options")]
    assert widget._repr_mimebundle_()["text/plain"] == widget.text()


def test_the_explorer_menus_keep_english_values_under_chinese_labels() -> None:
    set_language("zh")
    explorer = ctl_widgets.controller_explorer(fault="timeout always")
    labels = dict((value, label) for label, value in explorer.policy.options)
    assert labels[ctl_widgets.SCENARIO_POLICY] == "按场景的设定" and explorer.policy.value == "as the scenario says"
    fault_labels = {value: label for label, value in explorer.fault.options}
    assert fault_labels["timeout always"].startswith("持续超时 — ") and _chinese(fault_labels["timeout always"])
    assert explorer.state.run.status == "budget_exhausted"
    assert "给用户的消息" in explorer.stop.value and "系统记录" in explorer.stop.value
    assert "&quot;status&quot;: &quot;budget_exhausted&quot;" in explorer.stop.value  # the record stays English


def test_the_storm_runs_keep_their_keys_and_the_table_shows_chinese_labels() -> None:
    set_language("zh")
    explorer = ctl_widgets.storm_explorer()
    assert list(explorer.state.runs) == ["one shared budget", "a budget per tool"]
    assert [row[0] for row in explorer.state.rows()] == [_("one shared budget"), _("a budget per tool")]
    assert "重试预算" in explorer.table.value


# --------------------------------------------------------------------------- charts


def _texts(fig: Any) -> list[str]:
    from matplotlib.text import Text

    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


def _draw_without_warnings(fig: Any) -> None:
    """A missing glyph is a warning (and so an error here): every Chinese character must have a font."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig.canvas.draw()


def test_static_charts_have_chinese_titles_and_labels_and_draw_every_glyph() -> None:
    set_language("zh")
    run = run_scenario("weather-timeout-always")
    storm = ctl_widgets.storm_runs()
    charts = [plots.state_chart(run), plots.budget_chart(run), plots.run_chart(run), plots.retry_chart(storm),
              plots.storm_chart(ctl_widgets.storm_rows(2)), plots.context_chart(ctl_widgets.context_run()),
              plots.gantt_chart(ctl_widgets.parallel_run()), plots.claims_chart({"naive": {"verified": 1}}),
              plots.loop_histograms(ctl_widgets.budget_comparison(5))]
    for fig in charts:
        texts = _texts(fig)
        assert any(_chinese(t) for t in texts), texts
        _draw_without_warnings(fig)


def test_live_charts_are_built_in_the_language_in_use() -> None:
    english = ctl_widgets.controller_explorer()._chart.figure
    set_language("zh")
    chinese = ctl_widgets.controller_explorer()._chart.figure
    assert "Budgets used" in _texts(english) and "预算用量" in _texts(chinese)
    assert not any(_chinese(t) for t in _texts(english))


def test_the_replay_headline_is_a_chinese_sentence() -> None:
    explorer = ctl_widgets.replay_explorer()
    english = plots.diff_headline(explorer.state.replay.diff)
    set_language("zh")
    chinese = plots.diff_headline(explorer.state.replay.diff)
    assert english != chinese and _chinese(chinese)
    assert explorer.state.replay.diff.before_stop[0] in chinese  # the stop status keeps its code name


def test_english_chart_labels_are_unchanged() -> None:
    run = run_scenario("weather-normal")
    fig = plots.budget_chart(run)
    assert "share of the limit used (%; dashed: the limit)" in _texts(fig)
    assert "tool_calls\n(tool executions)" in _texts(fig) and "retries\n(shared by all tools)" in _texts(fig)
