"""Properties of the loop over random response scripts (hypothesis)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from agentloops import CRITERION_NAMES, Response, Scenario, run
from agentloops.criteria import NAIVE_CRITERIA
from agentloops.stops import ABNORMAL, ABORT_CODES, FINISH_REASONS

TOOLS = {"read_file": "text", "count_lines": "42"}

arguments = st.one_of(
    st.fixed_dictionaries({"path": st.sampled_from(["a.txt", "b.txt"])}),
    st.sampled_from(['{"path": "a', '{"path" "a"}', "", "[1]"]),
)
calls = st.lists(st.tuples(st.sampled_from(sorted(TOOLS)), arguments), max_size=3)
finish = st.sampled_from(FINISH_REASONS)


@st.composite
def responses(draw) -> Response:
    reason = draw(finish)
    return Response.model_validate({
        "content": draw(st.sampled_from([None, "", "some text"])),
        "tool_calls": [{"id": f"c{i}", "name": n, "arguments": a} for i, (n, a) in enumerate(draw(calls))],
        "finish_reason": reason,
        "raw_finish_reason": "SOMETHING_NEW" if reason == "unknown" else None,
    })


scripts = st.lists(responses(), min_size=1, max_size=12).map(
    lambda rs: Scenario(name="random", title="random", teaches="hypothesis", tools=TOOLS, responses=rs)
)
caps = st.integers(min_value=1, max_value=10)


@settings(max_examples=300, deadline=None)
@given(scripts, caps)
def test_correct_loop_never_exceeds_the_cap_and_never_returns_silently_at_it(scenario, cap):
    record = run(scenario, "correct", cap)
    assert record.steps <= cap
    if record.hit_cap:
        assert (record.outcome, record.error, record.answer) == ("raised", "max_steps", None)


@settings(max_examples=300, deadline=None)
@given(scripts, caps)
def test_correct_loop_never_reports_success_after_an_abnormal_round(scenario, cap):
    record = run(scenario, "correct", cap)
    finishes = [r.response.finish_reason for r in record.rounds]
    abnormal = [f for f in finishes if f in ABNORMAL]
    if abnormal:  # the first abnormal round is the last round: it raised its own code and ran nothing
        assert finishes[-1] == abnormal[0] and len(abnormal) == 1
        assert (record.outcome, record.error) == ("raised", ABORT_CODES[abnormal[0]])
        assert record.rounds[-1].tools_run == ()
    if record.outcome != "raised":
        assert all(c.parsed_arguments is not None for r in record.rounds for c in r.response.tool_calls)


@settings(max_examples=300, deadline=None)
@given(scripts, caps, st.sampled_from(CRITERION_NAMES))
def test_every_criterion_runs_each_well_formed_call_exactly_once(scenario, cap, criterion):
    record = run(scenario, criterion, cap)
    for round_ in record.rounds:
        if round_.decision.__class__.__name__ == "Abort":
            assert round_.tools_run == ()
            continue
        well_formed = [c.name for c in round_.response.tool_calls if c.parsed_arguments is not None]
        assert list(round_.tools_run) == well_formed
    assert len(record.tools_executed) == sum(len(r.tools_run) for r in record.rounds)


@settings(max_examples=200, deadline=None)
@given(scripts, caps, st.sampled_from(NAIVE_CRITERIA))
def test_naive_criteria_never_raise_and_hand_back_text_at_the_cap(scenario, cap, criterion):
    record = run(scenario, criterion, cap)
    assert record.error is None
    if record.hit_cap:
        assert record.outcome == "hit_cap"
        assert record.answer == record.rounds[-1].response.content


@settings(max_examples=200, deadline=None)
@given(scripts, caps, st.sampled_from(CRITERION_NAMES))
def test_context_only_grows_and_billing_adds_up(scenario, cap, criterion):
    record = run(scenario, criterion, cap)
    tokens = record.context_tokens
    assert all(b > a for a, b in itertools.pairwise(tokens))
    assert record.billed_prompt_tokens == sum(tokens)
    assert record.wasted_calls <= max(0, record.steps - 1)
