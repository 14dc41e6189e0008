"""Parallel calls: ids and states, join rules, cancellation, late and duplicate events."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentloops.controller import (
    CALL_STATES,
    Controller,
    Controls,
    Fact,
    Fault,
    JoinRule,
    Ledger,
    TaskPlanner,
    TaskState,
    ToolResult,
    make_task,
    run_scenario,
)
from agentloops.controller.vocabulary.ledger import Arrival

OK = ToolResult("ok", data={"x": 1}, source="svc")
FAIL = ToolResult("permanent_error", error="down", source="svc")


def test_join_rules():
    assert JoinRule(kind="all").needed(3) == 3 and JoinRule(kind="all").needed(3, still_needed=1) == 3
    assert JoinRule(kind="any").needed(4) == 1 and JoinRule(kind="any").needed(0) == 0
    rule = JoinRule(kind="minimum", minimum=2)
    assert (rule.needed(4), rule.needed(1), rule.needed(4, still_needed=1), rule.needed(4, still_needed=-1)) == (
        2, 1, 1, 0)
    assert rule.describe() == "minimum 2"
    with pytest.raises(ValueError, match="a 'minimum' join needs minimum"):
        JoinRule(kind="minimum")


def test_the_ledger_applies_once_and_refuses_late_and_foreign_results():
    ledger = Ledger("task-1")
    ledger.open("c1", "fetch", "{}", 1, 0.0)
    ledger.open("c2", "fetch", "{}", 1, 0.0)
    assert ledger.deliver(Arrival(1.0, "c1", OK, 1, "task-1")) == "applied"
    assert ledger.deliver(Arrival(1.1, "c1", OK, 2, "task-1")) == "duplicate"
    assert ledger.deliver(Arrival(1.2, "c9", OK)) == "unknown"
    assert ledger.deliver(Arrival(1.3, "c2", OK, 1, "task-0")) == "stale"
    assert ledger.cancel_running(2.0, "join satisfied") == ["c2"]
    assert ledger.deliver(Arrival(5.0, "c2", OK, 1, "task-1")) == "late"
    assert ledger.deliver(Arrival(5.1, "c2", OK, 2, "task-1")) == "duplicate"
    states = {r.call_id: (r.state, r.ended_at, r.arrived_at) for r in ledger.records()}
    assert states == {"c1": ("succeeded", 1.0, 1.0), "c2": ("ignored", 2.0, 5.0)}
    assert [e.verdict for e in ledger.events] == ["duplicate", "unknown", "stale", "late", "duplicate"]
    with pytest.raises(ValueError, match="already in use"):
        ledger.open("c1", "fetch", "{}", 2, 3.0)


def test_the_ledger_writes_what_it_refuses_to_the_trace_and_nothing_it_applies():
    lines: list[dict] = []
    ledger = Ledger("task-1", lines.append)
    ledger.open("c1", "fetch", "{}", 1, 0.0)
    ledger.open("c2", "fetch", "{}", 1, 0.0)
    assert ledger.deliver(Arrival(1.0, "c1", FAIL, 1, "task-1"), 3) == "applied"
    assert ledger.records()[0].state == "failed"  # a permanent error: the call failed, its result still applied
    assert lines == []
    assert ledger.deliver(Arrival(1.1, "c1", OK, 2, "task-1"), 3) == "duplicate"
    assert lines == [{"kind": "event", "trace_id": "task-1", "turn": 3, **ledger.events[0].to_dict()}]
    assert lines[0]["verdict"] == "duplicate" and lines[0]["at_s"] == 1.1


events = st.lists(st.tuples(st.sampled_from(["deliver", "cancel", "finish"]), st.integers(0, 5),
                            st.booleans(), st.sampled_from(["task", "other"])), min_size=1, max_size=40)


@settings(max_examples=300, deadline=None)
@given(events)
def test_no_finished_task_is_ever_reopened_by_a_late_or_duplicate_event(sequence):
    ledger = Ledger("task")
    state = TaskState("t", "goal", (), tuple(f"item:{i}" for i in range(6)))
    for i in range(5):
        ledger.open(f"c{i}", "tool", "{}", 1, 0.0)
    applied: list[str] = []
    frozen = None
    for n, (kind, index, ok, owner) in enumerate(sequence):
        if kind == "finish" and state.finished is None:
            state.finish("succeeded")
            ledger.close()
            frozen = state.snapshot()
        elif kind == "cancel":
            ledger.cancel_running(float(n), "cancelled")
        elif kind == "deliver":
            verdict = ledger.deliver(Arrival(float(n), f"c{index}", OK if ok else FAIL, 1, owner))
            if verdict == "applied":
                assert state.finished is None  # only an open task can receive results
                applied.append(f"c{index}")
                if ok:
                    state.add_fact(Fact(f"item:{index}", n, "x", "svc", n))
        if frozen is not None:
            assert state.snapshot() == frozen and state.finished == "succeeded"
    assert len(applied) == len(set(applied))  # a result delivered twice is handled once
    assert all(r.state in CALL_STATES for r in ledger.records())


def test_research_timeline_has_ids_states_and_the_late_arrival():
    run = run_scenario("research-parallel")
    calls = {c.args: c for c in run.calls}
    s1, s2, s3, s4 = (calls[f'{{"source_id":"s{i}"}}'] for i in range(1, 5))
    assert (s1.state, s1.deliveries) == ("succeeded", 2)
    assert (s2.state, s2.status) == ("failed", "permanent_error")
    assert (s3.state, s3.arrived_at) == ("succeeded", 3.5)
    assert (s4.state, s4.ended_at, s4.arrived_at) == ("ignored", 3.5, 13.0)
    assert all(c.parallel and c.started_at == 1.0 for c in run.calls)
    assert run.stop.at_s < s4.arrived_at  # it arrived after the task had finished …
    assert run.stop.state["finished"] == "succeeded" and run.status == "succeeded"  # … and changed nothing
    assert [e.verdict for e in run.events] == ["duplicate", "late"]
    assert "already stopped" in run.events[-1].note
    frame = run.calls_frame()
    assert list(frame["state"]) == ["succeeded", "failed", "succeeded", "ignored"]
    late_lines = [e for e in run.trace.events if e.verdict == "late"]
    assert late_lines and late_lines[0].at_s == 13.0


def test_cancelling_mid_batch_cancels_running_calls_and_ignores_their_results():
    task = make_task("research", sources=["s1", "s2", "s3"], minimum=3)
    faults = [Fault(tool="fetch", kind="slow", latency_s=6.0, match={"source_id": "s2"}),
              Fault(tool="fetch", kind="slow", latency_s=9.0, match={"source_id": "s3"})]
    run = Controller(task, TaskPlanner(task, parallel=True), faults=faults, controls=Controls(cancel_at_s=4.0)).run()
    assert (run.status, run.code) == ("cancelled", "cancelled_by_user")
    states = [c.state for c in run.calls]
    assert states == ["succeeded", "ignored", "ignored"]
    assert [c.ended_at for c in run.calls] == [2.0, 4.0, 4.0]
    assert [e.verdict for e in run.events] == ["late", "late"]
    assert [f.item for f in run.stop.facts] == ["source:s1"]


def test_results_that_land_while_a_call_is_retried_are_settled_in_time_order():
    # s1 is rate limited every time; s2-s4 land while it is retried: the join is met with them, and s1's retry
    # still running is cancelled like any call the join no longer needs (a retry is launched as a first attempt)
    task = make_task("research", sources=["s1", "s2", "s3", "s4"], minimum=3, join_timeout_s=3.0)
    faults = [Fault(tool="fetch", kind="rate_limited", match={"source_id": "s1"}),
              Fault(tool="fetch", kind="slow", latency_s=2.5, match={"source_id": "s4"})]
    run = Controller(task, TaskPlanner(task, parallel=True), faults=faults).run()
    assert (run.status, run.code) == ("succeeded", "completion_condition_met")
    assert [c.kind for c in run.calls] == ["call"] * 4 + ["retry"] * 2
    assert [c.state for c in run.calls] == ["failed", "succeeded", "succeeded", "succeeded", "failed", "ignored"]
    assert [f.item for f in run.stop.facts] == ["source:s2", "source:s3", "source:s4"]
    assert run.turns[0].tool_status == "cancelled, ok, ok, ok"


def test_a_join_that_cannot_be_met_still_waits_for_the_calls_the_task_needs_until_its_deadline():
    task = make_task("research", sources=["s1", "s2"], minimum=2)
    faults = [Fault(tool="fetch", kind="permanent_error", match={"source_id": "s1"}),
              Fault(tool="fetch", kind="slow", latency_s=12.0, match={"source_id": "s2"})]
    run = Controller(task, TaskPlanner(task, parallel=True), faults=faults).run()
    assert run.turns[0].observation.startswith("the join's deadline passed")  # 10 s, not s1's failure at 0.1 s
    assert [c.state for c in run.calls] == ["failed", "ignored", "succeeded"]  # s2 fetched again, alone
    assert (run.status, run.code) == ("partially_completed", "items_unobtainable")
    assert run.stop.missing[0][0] == "source:s1" and [f.item for f in run.stop.facts] == ["source:s2"]
    assert [(e.call_id.rsplit("-", 1)[-1], e.verdict, e.at_s) for e in run.events] == [("c2", "late", 13.0)]
    assert "the call was cancelled" in run.events[0].note  # it landed before the stop, after its cancel


SOURCES = ["s1", "s2", "s3", "s4"]


@st.composite
def research_controllers(draw) -> Controller:
    """The real controller on a parallel research task, with slow, duplicate, failing and cancelled calls."""
    task = make_task("research", sources=SOURCES, minimum=draw(st.integers(1, 4)),
                     join_timeout_s=draw(st.sampled_from([3.0, 10.0])))
    kinds = st.sampled_from(["slow", "slow", "duplicate", "duplicate", "timeout", "rate_limited", "permanent_error",
                             "empty"])
    faults = [Fault(tool="fetch", kind=kind, match={"source_id": source}, times=times,
                    latency_s=latency if kind == "slow" else None)
              for source, kind, latency, times in draw(st.lists(st.tuples(
                  st.sampled_from(SOURCES), kinds, st.sampled_from([0.5, 2.5, 6.0, 12.0, 30.0]),
                  st.sampled_from([None, 1])), max_size=6))]
    budget = task.budget.with_values(retries=draw(st.integers(0, 3)), tool_calls=draw(st.integers(2, 12)),
                                     wall_time_s=draw(st.sampled_from([8, 20, 40])))
    cancel = draw(st.one_of(st.none(), st.sampled_from([1.5, 2.2, 4.0, 9.0])))
    return Controller(task, TaskPlanner(task, parallel=True), faults=faults, budget=budget,
                      policy=draw(st.sampled_from(["default", "degrade"])), controls=Controls(cancel_at_s=cancel))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(research_controllers())
def test_through_the_controller_nothing_changes_state_after_the_stop_and_each_call_applies_once(controller):
    run = controller.run()
    lines = controller.sink.lines
    kinds = [line["kind"] for line in lines]
    assert kinds.count("stop") == 1
    after = lines[kinds.index("stop") + 1:]
    # after the stop line only late or duplicate deliveries are written, and they change nothing
    assert all(line["kind"] == "event" and line["verdict"] in ("late", "duplicate") for line in after), after
    assert all(line["at_s"] >= run.stop.at_s for line in after)
    landed_later = [line for line in lines if line["kind"] == "event" and line["at_s"] > run.stop.at_s]
    assert all(line in after for line in landed_later)  # the trace is in time order: late results follow the stop
    assert controller.state.snapshot() == run.stop.state and controller.state.finished == run.status
    last = run.turns[-1]
    assert run.stop.state["version"] == last.state_version_after  # the stop's state is the last turn's state
    # each call id is applied at most once: every other delivery of it is a refused event
    events: dict[str, list[str]] = {}
    for event in run.events:
        events.setdefault(event.call_id, []).append(event.verdict)
    for call in run.calls:
        applied = call.state in ("succeeded", "failed")
        assert len(events.get(call.call_id, [])) == call.deliveries - int(applied), (call, events)
        assert call.state != "ignored" or call.arrived_at is not None  # ignored = cancelled, then arrived late
    sources = [f.source.rsplit("(", 1)[-1] for f in run.stop.facts]
    assert len(sources) == len(set(sources))  # no call produced two facts
    assert all(run.within_budget.values())


# -- a batch of two, at the boundary between one call and a batch (calls.py) ----------------------------------


def _two_then_one() -> tuple:
    from agentloops import ScriptedModel

    task = make_task("research", sources=["s1", "s2"], minimum=2)

    def call(*ids: str) -> dict:
        return {"content": None, "finish_reason": "tool_calls", "tool_calls": [
            {"id": f"c{i}", "name": "fetch", "arguments": {"source_id": s}} for i, s in enumerate(ids)]}

    script = [call("s1", "nope"), call("s2"), {"content": "Summary of s1 and s2.", "finish_reason": "stop"}]
    return task, ScriptedModel(script)


def test_a_batch_of_two_reads_as_a_batch_and_a_lone_call_as_itself():
    task, model = _two_then_one()
    run = Controller(task, model).run()
    batch, lone = run.turns[0], run.turns[1]
    assert batch.action == "parallel×2: fetch(source_id=s1), fetch(source_id=nope)" and lone.action == "fetch(source_id=s2)"
    assert [c.parallel for c in run.calls] == [True, True, False]
    assert batch.tool_status == "ok, not_found" and lone.tool_status == "ok"
    assert batch.observation == "join 'minimum 2 within 10 s' can no longer be satisfied; 1 not_found, 1 ok"


def test_calls_cancelled_by_the_user_mid_batch_say_the_user_cancelled_them():
    task = make_task("research", sources=["s1", "s2", "s3"], minimum=3)
    faults = [Fault(tool="fetch", kind="slow", latency_s=6.0, match={"source_id": "s2"}),
              Fault(tool="fetch", kind="slow", latency_s=9.0, match={"source_id": "s3"})]
    run = Controller(task, TaskPlanner(task, parallel=True), faults=faults, controls=Controls(cancel_at_s=4.0)).run()
    assert run.stop.reason == "the user cancelled the task during a batch" and run.stop.tool == "fetch"
    assert [c.note for c in run.calls] == ["", *["cancelled: the user cancelled the task"] * 2]
    assert run.turns[0].observation == "the user cancelled the task; 2 cancelled, 1 ok"


def test_the_join_stage_counts_each_settled_call_once_and_an_accepted_not_found_as_a_success():
    from agentloops.controller.policy.error_policy import DEFAULT_POLICY, route
    from agentloops.controller.policy.routes import AcceptNotFound
    from agentloops.controller.stages import Stages

    seen = []

    def join(succeeded, finished, total, needed):
        seen.append((succeeded, finished, total, needed))
        return succeeded >= needed

    def accept_empty(result, ctx):
        return AcceptNotFound() if result.status == "empty" else route(DEFAULT_POLICY, result, ctx)

    task = make_task("research", sources=["s1", "s2"], minimum=2)
    faults = [Fault(tool="fetch", kind="empty", match={"source_id": "s1"}),
              Fault(tool="fetch", kind="slow", latency_s=2.0, match={"source_id": "s2"})]
    Controller(task, TaskPlanner(task, parallel=True), faults=faults,
               stages=Stages.of(join=join, route=accept_empty)).run()
    assert seen[:2] == [(1, 1, 2, 2), (2, 2, 2, 2)]


def test_a_cancel_during_a_batch_of_different_tools_names_the_batchs_first_tool():
    from agentloops import ScriptedModel

    task = make_task("weather_compare", cities=["Shanghai", "Beijing"])
    faults = [Fault(tool="get_weather", kind="slow", latency_s=6.0), Fault(tool="weather_backup", kind="slow", latency_s=6.0)]
    script = [{"content": None, "finish_reason": "tool_calls", "tool_calls": [
        {"id": "a", "name": "get_weather", "arguments": {"city": "Shanghai"}},
        {"id": "b", "name": "weather_backup", "arguments": {"city": "Beijing"}}]}]
    run = Controller(task, ScriptedModel(script), faults=faults, controls=Controls(cancel_at_s=4.0)).run()
    assert (run.code, run.stop.reason) == ("cancelled_by_user", "the user cancelled the task during a batch")
    assert run.stop.tool == "get_weather"


def test_a_batch_whose_rule_stayed_within_reach_ends_as_every_call_finished():
    """A learner's join stage that never ends the wait early: the batch ends when the last call lands, and a
    failure that still left the rule reachable (one success needed, one call still running) is not "can no
    longer be satisfied"."""
    from agentloops import ScriptedModel
    from agentloops.controller.stages import Stages

    task = make_task("research", sources=["s1", "s2"], minimum=1)
    slow = [Fault(tool="fetch", kind="slow", latency_s=2.0, match={"source_id": "s1"})]
    script = [{"content": None, "finish_reason": "tool_calls", "tool_calls": [
        {"id": "a", "name": "fetch", "arguments": {"source_id": "nope"}},
        {"id": "b", "name": "fetch", "arguments": {"source_id": "s1"}}]},
        {"content": "Summary of s1.", "finish_reason": "stop"}]
    never_early = Stages.of(join=lambda succeeded, finished, total, needed: False)
    run = Controller(task, ScriptedModel(script), faults=slow, stages=never_early).run()
    assert run.turns[0].tool_status == "not_found, ok"
    assert run.turns[0].observation == "every call finished; 1 not_found, 1 ok"


def test_a_lone_call_delivered_twice_reads_as_the_call_it_is():
    """Its second delivery is still queued when the call settles; nothing is cancelled, so the turn shows the
    call's own result — not a batch summary."""
    from agentloops import ScriptedModel

    task = make_task("weather_compare", cities=["Shanghai", "Beijing"])

    def call(city):
        return {"content": None, "finish_reason": "tool_calls",
                "tool_calls": [{"id": "a", "name": "get_weather", "arguments": {"city": city}}]}

    script = [call("Shanghai"), call("Beijing"), {"content": "Shanghai 24°C sunny, Beijing 18°C cloudy.",
                                                  "finish_reason": "stop"}]
    run = Controller(task, ScriptedModel(script),
                     faults=[Fault(tool="get_weather", kind="duplicate", match={"city": "Shanghai"})]).run()
    assert [e.verdict for e in run.events] == ["duplicate"]
    assert (run.turns[0].tool_status, run.turns[0].observation) == ("ok", "24°C, sunny")
