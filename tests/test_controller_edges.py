"""Each decision of a tool attempt at its edge: the value on the boundary, and the one just past it.

A mutation sample (a flipped comparison, a count off by one) changed each of these without any other
test noticing: an observation exactly at the offload limit, a duplicate delivery's count, a result
landing exactly now, the attempt number a retry carries, the tool call a refused retry needed.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from agentloops import ScriptedModel
from agentloops.controller import Controller, Fault, TaskPlanner, ToolResult, make_task
from agentloops.controller.attempts import deliver_due
from agentloops.controller.engine import new_run
from agentloops.controller.policy.error_policy import ErrorPolicy
from agentloops.controller.task.answers import contradiction
from agentloops.controller.task.context import ContextPolicy
from agentloops.controller.task.world import TOOLS
from agentloops.controller.vocabulary.ledger import Arrival
from agentloops.controller.vocabulary.tools import Param, ToolSpec, validate

WEATHER = make_task("weather_compare", cities=["Shanghai", "Beijing"])
BEIJING = {"city": "Beijing"}


def _tool_messages(model: TaskPlanner, tool: str = "get_weather") -> list[dict[str, Any]]:
    """The observations of ``tool`` in the last request the model saw."""
    return [json.loads(m.content) for m in model.requests[-1] if m.role == "tool" and m.name == tool]


def test_data_exactly_at_the_offload_limit_stays_in_the_transcript_and_one_token_more_is_stored():
    size = len(json.dumps(TOOLS["get_weather"].handler(BEIJING), ensure_ascii=False))  # one token per character
    kept = {}
    for limit in (size, size - 1):
        model = TaskPlanner(WEATHER)
        Controller(WEATHER, model, context=ContextPolicy(offload_over_tokens=limit), tokenizer=len).run()
        kept[limit] = [("data" in seen, "ref" in seen) for seen in _tool_messages(model)
                       if "Beijing" in json.dumps(seen)]
    assert kept[size] == [(True, False)]
    assert kept[size - 1] == [(False, True)]


def test_an_observation_says_how_often_its_result_was_delivered_from_the_second_delivery_on():
    twice = Fault(tool="get_weather", kind="duplicate", match=BEIJING)
    counts = {}
    for name, faults in (("once", []), ("twice", [twice])):
        model = TaskPlanner(WEATHER)
        Controller(WEATHER, model, faults=faults).run()
        counts[name] = [seen.get("deliveries") for seen in _tool_messages(model)]
    assert counts == {"once": [None, None], "twice": [None, 2]}


def test_a_result_landing_exactly_now_is_delivered_now_and_a_later_one_waits():
    run = new_run(WEATHER, TaskPlanner(WEATHER), trace_id="edge")
    run.meter.spend("wall_time_s", 5.0)
    now, later = Arrival(5.0, "edge-c1", ToolResult("ok")), Arrival(5.000001, "edge-c2", ToolResult("ok"))
    run.inbox = [later, now]
    deliver_due(run)
    assert run.inbox == [later]
    assert [e.call_id for e in run.ledger.events] == ["edge-c1"]  # (an unknown call: written, refused)


def test_each_retry_counts_one_more_attempt_on_its_tool():
    # three attempts allowed per tool: two timeouts are retried, the third attempt succeeds, no fallback
    faults = [Fault(tool="get_weather", kind="timeout", times=2, match=BEIJING)]
    run = Controller(WEATHER, TaskPlanner(WEATHER), faults=faults, policy=ErrorPolicy(attempts_per_tool=3)).run()
    assert run.status == "succeeded"
    assert [c.kind for c in run.calls if c.tool == "get_weather"] == ["call", "call", "retry", "retry"]
    assert not [c for c in run.calls if c.kind == "fallback"]


def test_a_retry_the_tool_call_budget_refuses_names_the_one_call_it_needed():
    faults = [Fault(tool="get_weather", kind="timeout", times=1, match=BEIJING)]
    run = Controller(WEATHER, TaskPlanner(WEATHER), faults=faults,
                     budget=WEATHER.budget.with_values(tool_calls=2)).run()
    assert (run.status, run.code) == ("budget_exhausted", "budget:tool_calls")
    assert run.stop.reason == "the tool_calls budget would be exceeded: 2 used + 1 needed > 2 allowed"


def _batch(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"content": None, "finish_reason": "tool_calls",
            "tool_calls": [{"id": f"b{i}", "name": name, "arguments": args} for i, (name, args) in enumerate(calls)]}


def test_a_batch_with_a_call_answered_before_it_ran_lists_each_call_not_a_retry_chain():
    # "x→ok" means one call retried; a call the schema rejected beside one that ran is two calls
    script = [_batch(("get_weather", {"city": 7}), ("get_weather", {"city": "Shanghai"})),
              {"content": "done", "finish_reason": "stop"}]
    run = Controller(WEATHER, ScriptedModel(script)).run()
    assert run.turns[0].tool_status == "invalid_arguments, ok"


def test_a_retried_call_still_reads_as_its_chain():
    faults = [Fault(tool="get_weather", kind="timeout", times=1, match=BEIJING)]
    run = Controller(WEATHER, TaskPlanner(WEATHER), faults=faults).run()
    assert [t.tool_status for t in run.turns[:2]] == ["ok", "timeout→ok"]


def test_a_request_exactly_at_the_compaction_limit_is_sent_whole_and_one_token_more_is_compacted():
    task = make_task("research")
    sizes = [t.context_tokens for t in Controller(task, TaskPlanner(task)).run().turns]
    turn = 3  # two turns of tool calls before it: one more than the single turn kept verbatim
    compacted = {}
    for limit in (sizes[turn - 1], sizes[turn - 1] - 1):
        context = ContextPolicy(compact_over_tokens=limit, keep_recent_turns=1)
        run = Controller(task, TaskPlanner(task), context=context).run()
        compacted[limit] = [t.turn for t in run.turns if t.compaction is not None]
    assert sizes[turn - 2] < sizes[turn - 1] - 1  # (the turns before it stay under both limits)
    assert turn not in compacted[sizes[turn - 1]]
    assert compacted[sizes[turn - 1] - 1][:1] == [turn]


@pytest.mark.parametrize(("tokens", "cut"), [(40, False), (41, True)])
def test_a_reply_exactly_at_the_output_reserve_stands_and_one_token_more_is_cut(tokens: int, cut: bool):
    reply = {"content": "Shanghai 24°C, Beijing 18°C.", "finish_reason": "stop",
             "usage": {"prompt_tokens": 10, "completion_tokens": tokens}}
    run = Controller(WEATHER, ScriptedModel([reply]), budget=WEATHER.budget.with_values(output_reserve=40)).run()
    assert (run.turns[0].response["finish_reason"] == "length") is cut
    assert (run.code == "truncated") is cut


def test_no_compaction_while_the_transcript_holds_no_more_turns_than_it_keeps_verbatim():
    task = make_task("research")
    context = ContextPolicy(compact_over_tokens=1, keep_recent_turns=1)  # every request is over the limit
    run = Controller(task, TaskPlanner(task), context=context).run()
    events = [(t.turn, t.compaction["turns_compacted"]) for t in run.turns if t.compaction is not None]
    assert events and events[0][0] == 3  # turn 2 carries only the one turn kept: nothing older to fold
    assert all(folded >= 1 for _, folded in events)


def test_each_premature_claim_uses_up_one_of_the_rejections_the_policy_allows():
    script = [_batch(("get_weather", {"city": "Shanghai"}))] + \
        [{"content": "All done.", "finish_reason": "stop"}] * 3
    run = Controller(WEATHER, ScriptedModel(script), policy=ErrorPolicy(premature_claims=2)).run()
    assert (run.status, run.code, run.stop.turn) == ("partially_completed", "premature_claim", 4)
    assert "claimed success 3×" in run.stop.reason


@pytest.mark.parametrize(("script", "verified"), [
    ([{"content": "Both are sunny.", "finish_reason": "stop"}], "UNVERIFIED: the completion condition does not hold"),
    ([_batch(("get_weather", {"city": "Shanghai"}), ("get_weather", {"city": "Beijing"})),
      {"content": "Done.", "finish_reason": "stop"}], "the completion condition holds"),
], ids=["unfounded", "founded"])
def test_a_trusting_policy_says_whether_the_claim_it_accepted_was_founded(script, verified: str):
    run = Controller(WEATHER, ScriptedModel(script), policy=ErrorPolicy(trust_model_claims=True)).run()
    assert (run.status, run.code) == ("succeeded", "model_said_done")
    assert run.stop.reason == f"the model stopped calling tools ({verified})"


def test_a_turn_s_goal_is_the_next_open_item_until_the_condition_holds_then_the_final_answer():
    run = Controller(WEATHER, TaskPlanner(WEATHER)).run()
    assert [t.pending_goal for t in run.turns] == ["weather:Shanghai", "weather:Beijing", "final answer"]


@pytest.mark.parametrize(("kind", "value", "ok"), [
    ("integer", 3, True), ("integer", True, False), ("number", False, False), ("boolean", True, True),
    ("boolean", 1, False)])
def test_a_bool_is_a_boolean_argument_and_never_a_number(kind: str, value: Any, ok: bool):
    spec = ToolSpec("t", "a tool", {"x": Param(type=kind)}, lambda args: None)  # type: ignore[arg-type]
    assert (validate(spec, {"x": value}) is None) is ok


@pytest.mark.parametrize(("seconds", "ok"), [(0, True), (0.5, True), (-0.5, False)])
def test_a_tool_may_ask_for_any_wait_that_is_not_negative(seconds: float, ok: bool):
    read = TypeAdapter(ToolResult)
    if ok:
        assert read.validate_python({"status": "rate_limited", "retry_after_s": seconds}).retry_after_s == seconds
    else:
        with pytest.raises(ValidationError):
            read.validate_python({"status": "rate_limited", "retry_after_s": seconds})


def test_a_contradicting_answer_names_its_three_smallest_unfounded_numbers():
    stated = "It is 9, 7, 5, 3 and 1 degrees."
    assert contradiction(stated, []) == "the answer states 1, 3, 5, which no verified fact contains"
    assert contradiction("It is 24 degrees.", [], "weather at 24") is None  # the request's own numbers are founded
