"""The one loop, on every shipped scenario and on scripts built in code."""

from __future__ import annotations

import itertools
import pickle

import pytest

from agentloops import (
    ContentFilterError,
    Criterion,
    FunctionModel,
    MaxStepsError,
    Message,
    ModelError,
    Response,
    ScriptedModel,
    TruncatedError,
    UsageError,
    load_scenario,
    run,
    run_loop,
    scenario_names,
)
from agentloops.tokens import estimate_tokens
from tests.conftest import response, scenario

BOTH_TOOLS = ("read_file", "count_lines")

# The article's section-1 table (steps, executed tools) plus the correct loop's column.
ARTICLE = {
    "normal": {"content": (3, BOTH_TOOLS), "finish_reason": (3, BOTH_TOOLS), "tool_calls": (3, BOTH_TOOLS),
               "correct": (3, BOTH_TOOLS)},
    "talk-and-call": {"content": (1, ("read_file",)), "finish_reason": (2, ("read_file",)),
                      "tool_calls": (2, ("read_file",)), "correct": (2, ("read_file",))},
    "truncated": {"content": (8, ()), "finish_reason": (8, ()), "tool_calls": (1, ()), "correct": (1, ())},
    "talk-only": {"content": (1, ()), "finish_reason": (1, ()), "tool_calls": (1, ()), "correct": (1, ())},
}


@pytest.mark.parametrize(("name", "criterion"), [(s, c) for s, row in ARTICLE.items() for c in row])
def test_article_table(name, criterion):
    record = run(name, criterion)
    assert (record.steps, record.tools_executed) == ARTICLE[name][criterion]


@pytest.mark.parametrize("criterion", ["content", "finish_reason"])
def test_truncated_spins_to_the_cap_asking_seven_more_times(criterion):
    record = run("truncated", criterion)
    assert record.hit_cap and record.outcome == "hit_cap"
    assert record.wasted_calls == 7
    assert record.answer is None
    assert [r.repeated for r in record.rounds] == [False] + [True] * 7


def test_truncated_under_tool_calls_takes_an_empty_answer_for_success():
    record = run("truncated", "tool_calls")
    assert record.outcome == "empty_answer"
    assert not record.hit_cap and record.error is None


def test_correct_loop_raises_truncation_at_call_one():
    record = run("truncated", "correct")
    assert (record.outcome, record.error, record.steps) == ("raised", "truncated", 1)
    with pytest.raises(TruncatedError, match=r"call 1: finish_reason is length") as caught:
        run("truncated", "correct", raise_errors=True)
    assert caught.value.record is not None and caught.value.record.steps == 1


def test_talk_and_call_under_content_runs_the_tool_but_never_shows_the_result():
    record = run("talk-and-call", "content")
    assert record.outcome == "premature_answer"
    assert record.wasted_tool_runs == 1
    assert record.answer == "Let me open the file first."


def test_context_grows_with_every_spinning_call():
    tokens = run("truncated", "content").context_tokens
    assert all(later > earlier for earlier, later in itertools.pairwise(tokens))
    assert run("truncated", "content").billed_prompt_tokens == sum(tokens)


@pytest.mark.parametrize(
    ("name", "criterion", "outcome", "error", "steps"),
    [
        ("content-filter", "correct", "raised", "content_filter", 2),
        ("content-filter", "tool_calls", "empty_answer", None, 2),
        ("content-filter", "content", "hit_cap", None, 8),
        ("tool-call-with-stop", "finish_reason", "premature_answer", None, 1),
        ("tool-call-with-stop", "correct", "answer", None, 3),
        ("cut-off-arguments", "correct", "raised", "truncated", 1),
        ("cut-off-arguments", "tool_calls", "hit_cap", None, 8),
        ("long-chain", "correct", "raised", "max_steps", 8),
        ("long-chain", "tool_calls", "hit_cap", None, 8),
    ],
)
def test_extra_scenarios(name, criterion, outcome, error, steps):
    record = run(name, criterion)
    assert (record.outcome, record.error, record.steps) == (outcome, error, steps)


def test_cut_off_arguments_are_never_executed():
    record = run("cut-off-arguments", "tool_calls")
    assert record.tools_executed == ()
    assert all(r.rejected_calls == ("read_file",) for r in record.rounds)
    # call 2 follows a new error message; calls 3..8 add nothing new
    assert record.wasted_calls == 6


def test_the_cap_raises_for_the_correct_loop_and_returns_for_naive_ones():
    assert run("long-chain", "correct", max_steps=11).outcome == "answer"
    record = run("long-chain", "correct", max_steps=10)
    assert (record.hit_cap, record.error, record.answer) == (True, "max_steps", None)
    with pytest.raises(MaxStepsError, match="reached max_steps=10 without a final answer"):
        run("long-chain", "correct", max_steps=10, raise_errors=True)


def test_abort_happens_before_the_round_is_appended_or_run():
    model = ScriptedModel([response(None, [("read_file", {"path": "a"})], "tool_calls"),
                           response(None, [("read_file", {"path": "b"})], "content_filter")])
    with pytest.raises(ContentFilterError) as caught:
        run_loop(model, {"read_file": "text"})
    record = caught.value.record
    assert record.tools_executed == ("read_file",)
    assert record.rounds[-1].tools_run == ()


def test_scripted_model_records_detached_requests():
    model = ScriptedModel([response(None, [("read_file", {"path": "a"})], "tool_calls"), response("done")])
    run_loop(model, {"read_file": "text"}, criterion="correct")
    assert [len(r) for r in model.requests] == [1, 3]
    assert [m.role for m in model.requests[1]] == ["user", "assistant", "tool"]


def test_function_model_sees_tool_results():
    def model(messages):
        if messages[-1].role == "tool":
            return {"content": f"the file says {messages[-1].content}", "finish_reason": "stop"}
        return {"content": None, "tool_calls": [{"id": "1", "name": "read_file", "arguments": {"path": "x"}}],
                "finish_reason": "tool_calls"}

    record = run_loop(FunctionModel(model), {"read_file": lambda args: f"<{args['path']}>"})
    assert record.answer == "the file says <x>"
    assert record.outcome == "answer"


def test_function_model_with_a_bad_reply_is_a_usage_error():
    with pytest.raises(UsageError, match=r"FunctionModel bad\(\) gave an invalid response: finish_reason: missing"):
        def bad(messages):
            return {"content": "hi"}

        run_loop(FunctionModel(bad), {})


def test_unknown_tool_is_reported_to_the_model_not_run():
    model = ScriptedModel([response(None, [("delete_everything", {})], "tool_calls"), response("ok")])
    record = run_loop(model, {"read_file": "text"})
    assert record.tools_executed == ()
    assert "no tool named 'delete_everything'" in model.requests[1][-1].content


def test_custom_criterion_can_mimic_naive_code_at_the_cap():
    rule = Criterion("my_content", lambda r: bool(r.content), at_cap="return_last")
    record = run("truncated", rule)
    assert (record.outcome, record.criterion) == ("hit_cap", "my_content")
    assert run("truncated", lambda r: bool(r.content)).error == "max_steps"


@pytest.mark.parametrize("bad", [0, -1, 2.5, "8", True, 1001])
def test_bad_max_steps(bad):
    with pytest.raises(UsageError, match=r"max_steps must be a whole number from 1 to 1000; got"):
        run("normal", max_steps=bad)


def test_a_cap_of_one():
    assert (run("normal", "correct", 1).error, run("normal", "content", 1).outcome) == ("max_steps", "hit_cap")
    assert run("talk-only", "correct", 1).outcome == "answer"


def test_a_tool_cannot_corrupt_the_shipped_scenario():
    def greedy(args):
        args.clear()
        return "ok"

    model = ScriptedModel(run("normal").rounds[0].response for _ in range(1))
    run_loop(model, {"read_file": greedy}, max_steps=1, criterion="content")
    assert run("normal").rounds[0].response.tool_calls[0].parsed_arguments == {"path": "notes.txt"}


def test_a_tool_that_raises_is_reported_to_the_model():
    model = ScriptedModel([response(None, [("read_file", {"path": "a"})], "tool_calls"), response("sorry")])
    record = run_loop(model, {"read_file": lambda args: 1 / 0})
    assert record.tools_executed == ("read_file",)
    assert model.requests[1][-1].content == "error: read_file raised ZeroDivisionError: division by zero"
    assert record.outcome == "answer"


def test_non_text_tool_results_are_sent_as_json():
    model = ScriptedModel([response(None, [("count_lines", {})], "tool_calls"), response("42")])
    run_loop(model, {"count_lines": lambda args: {"lines": 42}})
    assert model.requests[1][-1].content == '{"lines": 42}'


def test_a_model_that_raises_ends_the_run_with_its_record():
    def flaky(messages):
        if len(messages) > 1:
            raise ConnectionError("server went away")
        return {"content": None, "tool_calls": [{"id": "1", "name": "read_file", "arguments": {}}],
                "finish_reason": "tool_calls"}

    with pytest.raises(ModelError, match=r"call 2: the model raised ConnectionError: server went away") as caught:
        run_loop(FunctionModel(flaky), {"read_file": "text"})
    assert caught.value.record.steps == 1 and caught.value.record.error == "model_error"
    assert isinstance(caught.value.__cause__, ConnectionError)


def test_scripted_model_reset_starts_the_script_again():
    model = ScriptedModel(load_scenario("normal").responses)
    assert run_loop(model, {"read_file": "a", "count_lines": "1"}).steps == 3
    assert run_loop(model, {"read_file": "a", "count_lines": "1"}).steps == 1  # resumed at the end
    model.reset()
    assert run_loop(model, {"read_file": "a", "count_lines": "1"}).steps == 3


def test_reported_prompt_tokens_are_billed_as_reported():
    model = ScriptedModel([Response(content="hi", finish_reason="stop", usage={"prompt_tokens": 5000})])
    assert run_loop(model, {}).billed_prompt_tokens == 5000


def test_tokenizer_is_pluggable():
    record = run("normal", "correct", tokenizer=len)
    default = run("normal", "correct")
    assert record.context_tokens != default.context_tokens
    assert record.context_tokens[0] == 4 + len(record.rounds[0].request[0].content)


def test_usage_reported_by_the_provider_is_billed_as_is():
    model = ScriptedModel([Response(content="hi", finish_reason="stop", usage={"completion_tokens": 99})])
    assert run_loop(model, {}).billed_completion_tokens == 99


def test_scenario_object_runs_without_files():
    record = run(scenario(response("x", [("read_file", {})], "tool_calls"), response(None, [], "length")), "correct")
    assert (record.error, record.tools_executed) == ("truncated", ("read_file",))


class CopyingModel:
    """The naive reference: copies every request into a tuple the moment it arrives."""

    def __init__(self, steps: int) -> None:
        self.steps, self.copies = steps, []

    def __call__(self, messages):
        self.copies.append(tuple(messages))
        n = len(self.copies)
        if n == self.steps:
            return Response(content=f"read {n - 1} pages", finish_reason="stop")
        return response(None, [("read_page", {"page": n})], "tool_calls")


def long_run(steps: int):
    model = CopyingModel(steps)
    record = run_loop(model, {"read_page": lambda args: f"page {args['page']}"}, max_steps=steps)
    return model, record


def test_requests_recorded_as_views_match_what_was_sent_written_out_by_hand():
    _, record = long_run(3)
    prompt = record.rounds[0].request[0]
    call = [response(None, [("read_page", {"page": n})], "tool_calls").tool_calls[0] for n in (1, 2)]
    sent = [(prompt,),
            (prompt, Message("assistant", None, (call[0],)), Message("tool", "page 1", (), "c0", "read_page"))]
    sent.append((*sent[1], Message("assistant", None, (call[1],)), Message("tool", "page 2", (), "c0", "read_page")))
    assert [r.request for r in record.rounds] == sent
    assert [r.new_from for r in record.rounds] == [0, 1, 3]
    assert [r.added for r in record.rounds] == ["user message"] + ["its own last reply, result of read_page"] * 2


def test_a_thousand_step_run_records_what_a_naive_copy_would_have():
    model, record = long_run(1000)
    assert record.steps == 1000 and record.answer == "read 999 pages"
    assert [r.request for r in record.rounds] == model.copies  # compared after the transcript grew to 1,999
    assert record.context_messages == tuple(range(1, 2000, 2))
    assert all(r.new_from == len(p.request) for p, r in zip(record.rounds, record.rounds[1:]))


def test_long_run_memory_grows_linearly_not_with_the_square():
    # Pickled size counts what a record keeps: copies of the transcript would make 10× the steps cost ~100×.
    small, large = (len(pickle.dumps(long_run(n)[1])) for n in (100, 1000))
    assert large < 15 * small


def test_stub_models_keep_the_loops_requests_without_copying():
    model = ScriptedModel([response(None, [("read_file", {"path": "a"})], "tool_calls"), response("done")])
    record = run_loop(model, {"read_file": "text"})
    assert all(kept is r.request for kept, r in zip(model.requests, record.rounds, strict=True))
    sent = [Message("user", "hi")]
    function_model = FunctionModel(lambda messages: response("ok"))
    function_model(sent)
    sent.append(Message("user", "later"))  # a caller's list may change; the record must not
    assert function_model.requests == [(Message("user", "hi"),)]


@pytest.mark.parametrize(("name", "criterion"), list(itertools.product(scenario_names(), ("content", "tool_calls",
                                                                                      "correct"))))
def test_every_rounds_context_is_exactly_what_it_sent(name, criterion):
    """Context growth is counted, not estimated twice: each round's figure is its request's own tokens, so a
    reply without tool calls adds only itself and a round's tool results add exactly their tokens."""
    for round_ in run(name, criterion).rounds:
        assert round_.context_tokens == sum(m.tokens(estimate_tokens) for m in round_.request), round_.step


def test_a_round_without_tool_calls_adds_only_the_reply():
    model = ScriptedModel([Response(content="", finish_reason="stop"), Response(content="done", finish_reason="stop")])
    record = run_loop(model, {}, criterion="content", max_steps=2)
    first, second = record.rounds
    assert second.context_tokens == first.context_tokens + Message("assistant", "", ()).tokens(estimate_tokens)


def test_results_the_model_saw_are_not_wasted_when_the_next_reply_is_cut():
    model = ScriptedModel([
        Response(content=None, tool_calls=[{"id": "1", "name": "read_file", "arguments": {}}],
                 finish_reason="tool_calls"),
        Response(content="partial", finish_reason="length")])
    with pytest.raises(TruncatedError) as caught:
        run_loop(model, {"read_file": "text"})
    assert caught.value.record.wasted_tool_runs == 0  # the cut reply was written after reading the result


def test_a_first_call_that_raises_wastes_no_tool_run():
    def down(messages):
        raise ConnectionError("no route")

    with pytest.raises(ModelError) as caught:
        run_loop(FunctionModel(down), {"read_file": "text"})
    assert caught.value.record.wasted_tool_runs == 0 and caught.value.record.steps == 0


def test_results_sent_to_a_model_that_then_raises_were_never_read():
    def flaky(messages):
        if len(messages) > 1:
            raise ConnectionError("server went away")
        return {"content": None, "tool_calls": [{"id": "1", "name": "read_file", "arguments": {}},
                                                {"id": "2", "name": "read_file", "arguments": {}}],
                "finish_reason": "tool_calls"}

    with pytest.raises(ModelError) as caught:
        run_loop(FunctionModel(flaky), {"read_file": "text"})
    assert caught.value.record.wasted_tool_runs == 2
