"""The explorer and the walk-through, driven like a learner drives them: set a control, read what shows."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentloops as al
from agentloops import widgets
from agentloops.comparison import cell
from agentloops.errors import ScenarioError, UsageError
from agentloops.widgets import CUSTOM, RoundSpec

ARTICLE = al.scenario_names(["article"])

ARTICLE_TABLE = {  # the source article's table: steps and tools executed, criterion by criterion
    "normal": {"content": (3, ("read_file", "count_lines")), "finish_reason": (3, ("read_file", "count_lines")),
               "tool_calls": (3, ("read_file", "count_lines"))},
    "talk-and-call": {"content": (1, ("read_file",)), "finish_reason": (2, ("read_file",)),
                      "tool_calls": (2, ("read_file",))},
    "truncated": {"content": (8, ()), "finish_reason": (8, ()), "tool_calls": (1, ())},
    "talk-only": {"content": (1, ()), "finish_reason": (1, ()), "tool_calls": (1, ())},
}

TALK_THEN_CUT = [
    RoundSpec(content="text", text="Let me open the file first.", tool_calls=1, finish_reason="tool_calls"),
    RoundSpec(content="null", tool_calls=0, finish_reason="length"),
]


@pytest.fixture(scope="module")
def explorer() -> widgets.Explorer:
    return widgets.explorer()


@pytest.fixture
def fresh(explorer: widgets.Explorer) -> widgets.Explorer:
    """The shared explorer, reset to its defaults (building one costs a chart)."""
    explorer.set_rounds(widgets.DEFAULT_CUSTOM_SCRIPT)
    explorer.criterion.value = "content"
    explorer.cap.value = al.DEFAULT_MAX_STEPS
    explorer.scenario.value = widgets.DEFAULT_SCENARIO
    return explorer


def _same_run(a: al.RunRecord, b: al.RunRecord) -> None:
    assert (a.steps, a.tools_executed, a.outcome, a.error, a.hit_cap, a.wasted_calls, a.wasted_tool_runs,
            a.context_tokens, a.billed_prompt_tokens) == (
        b.steps, b.tools_executed, b.outcome, b.error, b.hit_cap, b.wasted_calls, b.wasted_tool_runs,
        b.context_tokens, b.billed_prompt_tokens)


def test_draws_once_with_defaults(explorer: widgets.Explorer) -> None:
    state = explorer.state
    assert (state.source, state.criterion, state.max_steps) == ("truncated", "content", al.DEFAULT_MAX_STEPS)
    assert state.record.wasted_calls == 7
    assert bytes(explorer.chart.value).startswith(b"\x89PNG")
    assert "its own last reply" in explorer.table.value


@pytest.mark.parametrize("name", ARTICLE)
def test_picking_an_article_scenario_reproduces_the_article_table(fresh: widgets.Explorer, name: str) -> None:
    fresh.scenario.value = name
    reference = al.compare([name])
    for criterion in al.CRITERION_NAMES:
        _same_run(fresh.state.records[criterion], reference.get(name, criterion))
        assert cell(reference.get(name, criterion)) in fresh.state.text()
        assert cell(reference.get(name, criterion)) in fresh.summary.value
    for criterion, (steps, tools) in ARTICLE_TABLE[name].items():
        assert (fresh.state.records[criterion].steps, fresh.state.records[criterion].tools_executed) == (steps, tools)


def test_hand_built_talk_and_call_then_length_shows_the_split(fresh: widgets.Explorer) -> None:
    state = fresh.set_rounds(TALK_THEN_CUT)
    assert fresh.scenario.value == CUSTOM
    content, finish, calls, correct = (state.records[c] for c in al.CRITERION_NAMES)
    assert (content.steps, content.tools_executed, content.outcome, content.wasted_tool_runs) == (
        1, ("read_file",), "premature_answer", 1)
    assert (finish.steps, finish.hit_cap, finish.tools_executed, finish.wasted_calls) == (8, True, ("read_file",), 6)
    assert (calls.steps, calls.outcome) == (2, "empty_answer")
    assert (correct.steps, correct.error) == (2, "truncated")


def test_the_same_script_built_with_the_controls(fresh: widgets.Explorer) -> None:
    fresh.scenario.value = CUSTOM
    fresh.round_count.value = 2
    first, second = fresh.rounds[:2]
    first.content.value, first.text.value, first.tool_calls.value, first.finish_reason.value = (
        "text", "Let me open the file first.", 1, "tool_calls")
    second.content.value, second.tool_calls.value, second.finish_reason.value = "null", 0, "length"
    assert fresh.round_specs() == TALK_THEN_CUT
    reference = al.compare([widgets.build_scenario(TALK_THEN_CUT)])
    for criterion in al.CRITERION_NAMES:
        _same_run(fresh.state.records[criterion], reference.get("custom", criterion))


def test_editing_a_shipped_scenario_makes_a_custom_copy(fresh: widgets.Explorer) -> None:
    fresh.scenario.value = "truncated"
    assert fresh.rounds[0].spec() == RoundSpec.from_response(al.load_scenario("truncated").responses[0])
    fresh.rounds[0].finish_reason.value = "stop"
    assert fresh.scenario.value == CUSTOM
    assert "custom copy" in fresh.note.value and "truncated" in fresh.note.value
    assert fresh.state.scenario.prompt == al.load_scenario("truncated").prompt
    assert fresh.state.records["content"].hit_cap  # content null never counts as text
    assert fresh.state.records["finish_reason"].steps == 1


def test_an_unedited_copy_runs_exactly_like_the_original(fresh: widgets.Explorer) -> None:
    for name in al.scenario_names(["article", "extra"]):
        fresh.scenario.value = name
        copy = widgets.build_scenario(fresh.round_specs(), base=al.load_scenario(name))
        assert copy.responses == al.load_scenario(name).responses


def test_every_control_redraws_table_and_chart(fresh: widgets.Explorer) -> None:
    fresh.scenario.value = "normal"

    def snapshot() -> tuple[str, str, bytes]:
        return fresh.table.value, fresh.summary.value, bytes(fresh.chart.value)

    changes = [  # in an order where each change reaches a round the runs actually make
        (fresh.rounds[2].finish_reason, "length"),  # what the browser test does
        (fresh.criterion, "tool_calls"),
        (fresh.rounds[0].content, "text"),
        (fresh.rounds[0].tool_calls, 2),
        (fresh.round_count, 4),
        (fresh.cap, 2),
        (fresh.scenario, "talk-only"),
    ]
    for control, value in changes:
        before = snapshot()
        control.value = value
        after = snapshot()
        assert after[2] != before[2], f"the chart did not change when {control.description} became {value!r}"
        assert after[:2] != before[:2], f"no table changed when {control.description} became {value!r}"


def test_a_finish_reason_change_moves_the_table_and_chart(fresh: widgets.Explorer) -> None:
    fresh.scenario.value = "normal"
    control = fresh.rounds[2].finish_reason
    assert "agentloops-finish-reason" in control._dom_classes
    chart, table = bytes(fresh.chart.value), fresh.table.value
    control.value = "length"
    assert bytes(fresh.chart.value) != chart and fresh.table.value != table
    assert "length" in fresh.table.value


def test_adding_a_round_appends_an_answer(fresh: widgets.Explorer) -> None:
    fresh.scenario.value = "truncated"
    fresh.round_count.value = 2
    assert fresh.round_specs()[1] == widgets.NEXT_ROUND
    assert fresh.rounds[1].box.layout.display == "flex" and fresh.rounds[2].box.layout.display == "none"
    assert fresh.state.records["finish_reason"].steps == 2


def test_text_rendering_for_headless_runs(fresh: widgets.Explorer) -> None:
    bundle = fresh._repr_mimebundle_()
    text = bundle["text/plain"]
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "Every criterion on this script" in text and "Step by step under content" in text
    for header in widgets.SUMMARY_HEADERS:
        assert header in text
    assert text == fresh.text() == fresh.state.text()


def test_stable_css_classes_for_a_browser_test(explorer: widgets.Explorer) -> None:
    expected = {
        explorer: "agentloops-explorer", explorer.scenario: "agentloops-scenario",
        explorer.criterion: "agentloops-criterion", explorer.cap: "agentloops-cap",
        explorer.round_count: "agentloops-rounds", explorer.chart: "agentloops-chart",
        explorer.table: "agentloops-table", explorer.summary: "agentloops-summary",
        explorer.rounds[0].content: "agentloops-content", explorer.rounds[0].tool_calls: "agentloops-tool-calls",
        explorer.rounds[0].box: "agentloops-round-1",
    }
    for widget, name in expected.items():
        assert name in widget._dom_classes


def test_not_editable_hides_the_builder() -> None:
    focused = widgets.explorer("talk-and-call", "tool_calls", 4, editable=False)
    assert focused.state.max_steps == 4 and focused.state.record.criterion == "tool_calls"
    assert focused.scenario not in focused.children
    builder = next(c for c in focused.children if "agentloops-builder" in c._dom_classes)
    assert builder.layout.display == "none"


def test_starting_from_a_scenario_object_and_from_custom() -> None:
    scenario = widgets.build_scenario(TALK_THEN_CUT, name="mine")
    started = widgets.explorer(scenario)
    assert started.scenario.value == CUSTOM and started.round_specs() == TALK_THEN_CUT
    assert widgets.explorer(CUSTOM).round_specs() == list(widgets.DEFAULT_CUSTOM_SCRIPT)


def test_bad_arguments_get_one_clear_line() -> None:
    with pytest.raises(UsageError, match="unknown criterion 'length'; expected one of: content"):
        widgets.explorer(criterion="length")
    with pytest.raises(UsageError, match="max_steps must be a whole number from 1 to 12 in the explorer; got 0"):
        widgets.explorer(max_steps=0)
    with pytest.raises(UsageError, match="unknown scenario 'nope'; expected one of: normal"):
        widgets.explorer("nope")
    with pytest.raises(UsageError, match="unknown criterion 'x'"):
        widgets.walkthrough("normal", "x")


def test_round_specs_are_validated_with_the_round_named(explorer: widgets.Explorer) -> None:
    with pytest.raises(ScenarioError, match=r"round 2: tool_calls: expected .*less than or equal to 3"):
        widgets.build_scenario([RoundSpec(), {"tool_calls": 5}])
    with pytest.raises(ScenarioError, match="round 1: finish_reason: expected 'stop'"):
        widgets.build_scenario([{"finish_reason": "done"}])
    with pytest.raises(ScenarioError, match="round 1: colour: is not a known field"):
        widgets.build_scenario([{"colour": "red"}])
    with pytest.raises(ScenarioError, match="round 1: expected a RoundSpec or a dict; got str"):
        widgets.build_scenario(["null"])
    with pytest.raises(ScenarioError, match="a script needs at least one round"):
        widgets.build_scenario([])
    with pytest.raises(ScenarioError, match="a script in the explorer has 1 to 12 rounds; got 13"):
        explorer.set_rounds([RoundSpec()] * 13)


def test_unknown_finish_reason_keeps_a_raw_value() -> None:
    scenario = widgets.build_scenario([{"finish_reason": "unknown"}])
    assert scenario.responses[0].raw_finish_reason == "OTHER"
    assert al.run(scenario, "correct").error == "unknown_stop"


def test_built_calls_ask_for_something_new_each_round() -> None:
    scenario = widgets.build_scenario([{"tool_calls": 2, "finish_reason": "tool_calls"},
                                       {"tool_calls": 1, "finish_reason": "tool_calls"},
                                       {"content": "text", "finish_reason": "stop"}])
    names = [[c.name for c in r.tool_calls] for r in scenario.responses]
    assert names == [["read_file", "count_lines"], ["read_file"], []]
    record = al.run(scenario, "correct")
    assert record.succeeded and record.wasted_calls == 0


specs = st.builds(
    RoundSpec,
    content=st.sampled_from(["null", "empty", "text"]),
    text=st.sampled_from(["Let me check.", "done", "好的"]),
    tool_calls=st.integers(0, widgets.MAX_TOOL_CALLS),
    finish_reason=st.sampled_from(widgets.FINISH_REASONS),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rounds=st.lists(specs, min_size=1, max_size=5), cap=st.integers(1, widgets.MAX_CAP),
       criterion=st.sampled_from(al.CRITERION_NAMES))
def test_any_script_shows_exactly_what_the_loop_measures(explorer: widgets.Explorer, rounds: list[RoundSpec],
                                                        cap: int, criterion: str) -> None:
    explorer.cap.value = cap
    explorer.criterion.value = criterion
    state = explorer.set_rounds(rounds)
    assert explorer.round_specs() == rounds
    assert [RoundSpec.from_response(r) for r in state.scenario.responses] == [
        r if r.content == "text" else r.model_copy(update={"text": widgets.ANSWER}) for r in rounds]
    scenario = widgets.build_scenario(rounds)
    for name in al.CRITERION_NAMES:
        _same_run(state.records[name], al.run(scenario, name, cap))
    assert state.record is state.records[criterion]
    assert state.record.headline() in explorer.text()


def test_walkthrough_steps_through_a_run() -> None:
    walk = widgets.walkthrough("truncated", "content")
    assert walk.call.max == 8
    walk.call.value = 5
    text = walk.text()
    assert "call 5 of 8" in text and "repeated: the same response" in text
    assert text.count("assistant") == 4
    assert "call 5 of 8" in walk.view.value
    walk.criterion.value = "tool_calls"
    assert walk.call.max == 1 and walk.call.value == 1
    assert "call 1 of 1" in walk._repr_mimebundle_()["text/plain"]


def test_walkthrough_marks_the_new_messages() -> None:
    walk = widgets.walkthrough("normal", "correct")
    walk.call.value = 2
    new = [line for line in walk.text().splitlines() if line.startswith("+")]
    assert [line.split()[1] for line in new] == ["assistant", "tool"]


# --------------------------------------------------------------------------- predict, commit, reveal


def _prediction(calls: list[int] | None = None) -> widgets.Prediction:
    def answer() -> str:
        if calls is not None:
            calls.append(1)
        return "content" if al.run("talk-and-call", "content").steps == 1 else "none"

    return widgets.predict("Which test stops after call 1?", answer, options=["content", "tool_calls", "none"],
                           explanations={"tool_calls": "it sees the tool call and goes on"})


def test_a_prediction_opens_with_nothing_recorded_and_nothing_computed() -> None:
    calls: list[int] = []
    p = _prediction(calls)
    assert (p.stage, p.predicted, p.result.value, calls) == ("open", None, "", [])
    assert p.reveal_button.disabled and not p.lock_button.disabled
    assert "prediction: not recorded yet" in p.text()
    assert p._repr_mimebundle_()["text/plain"] == p.text()


def test_reveal_before_lock_and_lock_without_a_choice_are_said_not_raised() -> None:
    p = _prediction()
    assert p.reveal() is None and p.stage == "open" and "Lock in a prediction" in p.result.value
    p.lock()
    assert p.stage == "open" and "Pick an answer first" in p.result.value


def test_locking_freezes_the_choice_and_the_reveal_recomputes_the_answer() -> None:
    calls: list[int] = []
    p = _prediction(calls)
    p.lock("tool_calls")
    assert (p.stage, p.choice.disabled, p.lock_button.disabled, p.reveal_button.disabled) == (
        "locked", True, True, False)
    assert calls == []  # the answer is computed at the reveal, from a fresh run, not before
    p.choice.value = "content"  # a disabled control cannot be changed in a browser; from code, lock is final
    p.lock("content")
    verdict = p.reveal()
    assert calls and verdict is not None and not verdict.passed
    assert "the run says 'content'" in p.text() and "it sees the tool call and goes on" in p.result.value


def test_a_right_prediction_passes_and_clicks_drive_the_same_path() -> None:
    p = _prediction()
    p.choice.value = "content"
    p.lock_button.click()
    p.reveal_button.click()
    assert p.stage == "revealed" and p.verdict is not None and p.verdict.passed
    assert p.reveal() is p.verdict and p.reveal_button.disabled


def test_a_number_is_asked_for_when_there_are_no_options() -> None:
    p = widgets.predict("Calls?", lambda: al.run("truncated", "content").steps)
    p.lock(7)
    assert not p.reveal().passed  # type: ignore[union-attr]
    q = widgets.predict("Calls?", lambda: al.run("truncated", "content").steps)
    q.lock(8)
    assert q.reveal().passed  # type: ignore[union-attr]


def test_the_chart_sits_above_the_script_and_the_tables(explorer: widgets.Explorer) -> None:
    order = list(explorer.children)
    builder = next(c for c in order if "agentloops-builder" in c._dom_classes)
    assert order.index(explorer.chart) < order.index(builder) < order.index(explorer.summary) < order.index(
        explorer.table)
    assert explorer.table.layout.overflow == "auto"


def test_the_article_table_kept_as_data_matches_the_table_typed_here_and_the_runs() -> None:
    from agentloops.resources import article_table

    table = article_table()
    assert list(table) == list(ARTICLE_TABLE)  # the article's row order
    for scenario, row in table.items():
        assert {c: (printed.steps, printed.tools) for c, printed in row.items()} == ARTICLE_TABLE[scenario]
        for criterion, printed in row.items():
            record = al.run(scenario, criterion)
            assert (record.steps, record.hit_cap, record.tools_executed) == (
                printed.steps, printed.hit_cap, printed.tools)
    assert [c.hit_cap for c in table["truncated"].values()] == [True, True, False]
