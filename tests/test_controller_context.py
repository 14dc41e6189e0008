"""Context control: out-of-context storage, compaction that keeps what matters, and the check."""

from __future__ import annotations

import json
from collections.abc import Callable

from agentloops.controller import (
    ContextPolicy,
    ContextStore,
    Controller,
    Fact,
    TaskPlanner,
    TaskState,
    check_compaction,
    make_task,
    memory_from_state,
    run_scenario,
)
from agentloops.controller.running.resuming import resume
from agentloops.controller.sim.executor import execute
from agentloops.controller.task.context import observe, summarize
from agentloops.controller.task.world import TOOLS
from agentloops.controller.vocabulary.readback import read_back
from agentloops.messages import Message


def state() -> TaskState:
    s = TaskState("research", "summarise the topic", ("cite every claim", "only listed sources"),
                  ("source:s1", "source:s2"))
    s.add_fact(Fact("source:s1", {"title": "T"}, "T (2024)", "library via fetch (c1)", 1, ref="ref:1"))
    s.record_failure("fetch", "timeout", "slow", 1)
    s.add_input("order_id", "A-1042")
    return s


def test_large_outputs_become_a_reference_and_a_summary():
    store = ContextStore()
    result = execute(TOOLS["fetch"], {"source_id": "s1"})
    observation, ref = observe(result, "fetch", {"source_id": "s1"}, store, ContextPolicy())
    assert ref == "ref:1" and "data" not in observation and observation["stored_tokens"] > 150
    assert store.get(ref)["text"] == result.data["text"]
    assert len(observation["summary"]) <= 160
    small, none = observe(execute(TOOLS["get_weather"], {"city": "Beijing"}), "get_weather", {"city": "Beijing"},
                          store, ContextPolicy())
    assert none is None and small["data"]["temp_c"] == 18
    assert summarize("x" * 500, 20).endswith("…") and len(summarize("x" * 500, 20)) == 20


def test_offloading_keeps_the_context_small_turn_after_turn():
    task = make_task("research", sources=["s1", "s2", "s3", "s4"], minimum=4).with_budget(steps=6, model_calls=6)
    stored = Controller(task, TaskPlanner(task)).run()
    pasted = Controller(task, TaskPlanner(task), context=ContextPolicy(offload_over_tokens=None)).run()
    sizes_stored = [t.context_tokens for t in stored.turns]
    sizes_pasted = [t.context_tokens for t in pasted.turns]
    assert stored.status == "succeeded" and sizes_stored == sorted(sizes_stored)
    growth_stored = sizes_stored[3] - sizes_stored[2]
    growth_pasted = sizes_pasted[3] - sizes_pasted[2]
    assert growth_pasted > 4 * growth_stored
    assert stored.stop.facts[0].ref == "ref:1"


def test_the_safe_memory_keeps_goal_constraints_facts_sources_and_open_items():
    s = state()
    memory = memory_from_state(s)
    assert check_compaction(memory, s).ok
    payload = json.loads(memory.partition("\n")[2])
    assert payload["constraints"] == ["cite every claim", "only listed sources"]
    assert payload["inputs"] == {"order_id": "A-1042"} and payload["tried"] == ["fetch: timeout"]
    assert payload["facts"][0]["source"] == "library via fetch (c1)" and payload["open"] == ["source:s2"]


def test_a_compaction_that_drops_a_constraint_is_caught():
    s = state()
    memory = memory_from_state(s)
    dropped = memory.replace('"only listed sources"', '"any source is fine"')
    check = check_compaction(dropped, s)
    assert not check.ok and check.dropped == ("constraint: only listed sources",)
    assert str(check) == "compaction dropped: constraint: only listed sources"
    without_source = memory.replace("library via fetch (c1)", "somewhere")
    assert check_compaction(without_source, s).dropped == ("fact: source:s1 [library via fetch (c1)]",)


def test_a_compaction_that_drops_a_user_input_or_misreports_an_attempt_is_caught():
    s = state()
    memory = memory_from_state(s)
    assert check_compaction(memory.replace('"A-1042"', '"A-1043"'), s).dropped == ("input: order_id = A-1042",)
    assert check_compaction(memory.replace("fetch: timeout", "fetch: ok"), s).dropped == ("tried: fetch: timeout",)


def test_a_user_answer_survives_compaction_so_nobody_asks_twice():
    task = make_task("order_status")
    first = Controller(task, TaskPlanner(task, use_state=False), send_state=False,
                       context=ContextPolicy(compact_over_tokens=150, keep_recent_turns=0)).run()
    done = resume(first, "A-1042", model=TaskPlanner(task, use_state=False, bad_arguments=1))
    # the repair turn pushes the request over the limit: the USER ANSWER message is compacted away,
    # and only the memory still says which order the user meant
    assert done.compactions and all(c.check.ok for c in done.compactions)
    assert (done.status, done.new_actions[-2:]) == ("succeeded", ["lookup_order(order_id=A-1042)", "answer"])


def test_a_careless_compaction_sends_the_loop_down_an_old_path_and_the_check_prevents_it():
    careless = run_scenario("research-compaction-careless")
    assert careless.status == "no_progress"
    assert careless.actions[3:5] == ["fetch(source_id=s1)", "fetch(source_id=s2)"]  # finished work, redone
    event = careless.compactions[0]
    assert (event.used, event.check.ok) == ("compactor", False)
    assert "constraint: use only the listed sources" in event.check.dropped
    checked = run_scenario("research-compaction-checked")
    assert checked.status == "succeeded" and len(set(checked.actions)) == len(checked.actions)
    assert {c.used for c in checked.compactions} == {"safe_memory"}
    assert all(c.tokens_after < c.tokens_before for c in checked.compactions)
    assert checked.turns[3].compaction is not None
    assert any("compaction refused" in note for note in checked.turns[3].state_delta["unchanged"])



def _transcript(task_type: str, limit: int, tokenizer: Callable[[str], int]) -> list[list[Message]]:
    task = make_task(task_type)
    model = TaskPlanner(task)
    Controller(task, model, context=ContextPolicy(offload_over_tokens=limit), trace_id="t", tokenizer=tokenizer).run()
    return [list(request) for request in model.requests]


def test_an_observation_within_the_offload_limit_is_kept_exactly_as_when_its_data_is_counted_on_its_own():
    from agentloops.tokens import estimate_tokens

    def counted_apart(text: str) -> int:  # another tokenizer (the same counts): the data is always counted alone
        return estimate_tokens(text)

    for task_type in ("weather_compare", "research"):
        offloaded = []
        for limit in (1, 5, 10, 15, 20, 30, 60, 120, 400, 600, 1000, 2000, 4000):
            kept = _transcript(task_type, limit, estimate_tokens)
            assert kept == _transcript(task_type, limit, counted_apart), (task_type, limit)
            offloaded.append(any('"ref": "ref:' in (m.content or "") for request in kept for m in request))
        assert offloaded[0] and not offloaded[-1], offloaded  # both sides of the limit were met


def test_what_a_compaction_dropped_is_english_data_and_reads_in_chinese() -> None:
    """The check's lines stay English in the trace; shown, or read back from the trace's plain text, they are
    Chinese: the goal, the research constraints, the facts and the sources' titles through the catalog."""
    from agentloops.i18n import speaking
    from tests.latin_words import allowed_words, english_words

    careless = run_scenario("research-compaction-careless")
    check, turn = careless.compactions[0].check, careless.turns[3]
    english = ("compaction dropped: constraint: cite every claim with its source id; constraint: use only the listed "
               "sources; fact: source:s1 [library via fetch (c1)]; fact: source:s2 [library via fetch (c2)]; "
               "fact: source:s3 [library via fetch (c3)]")
    assert str(check) == check.shown() == english and f"compaction used: {english}" in turn.state_delta["unchanged"]
    task = make_task("research")
    s = task.new_state()
    goal = check_compaction("MEMORY {}", s).dropped[0]
    assert goal == "goal: summarise 'why agent loops fail to stop' from at least 2 of the sources s1, s2, s3, s4"
    allowed = allowed_words("16-context-compaction.ipynb")
    with speaking("zh"):
        plain_lines = [str.__str__(line) for line in check.dropped]  # as a trace file gives them back
        shown = [check.shown(), goal.shown(), turn.delta_shown(), careless.turns[0].delta_shown(),
                 *(read_back(line) for line in plain_lines)]
        assert "硬约束：每条论断都注明来源 ID" in check.shown() and "「智能体循环为什么停不下来」" in goal.shown()
        assert "照样采用了压缩器的记忆" in turn.delta_shown() and "ReAct 智能体的停止条件" in careless.turns[0].delta_shown()
    assert [english_words(text, allowed) for text in shown] == [[]] * len(shown)


def test_data_of_exactly_the_offload_limit_stays_in_the_context():
    result = execute(TOOLS["get_weather"], {"city": "Beijing"})
    for size, kept in ((150, True), (151, False)):
        observation, ref = observe(result, "get_weather", {"city": "Beijing"}, ContextStore(), ContextPolicy(),
                                   tokenizer=lambda text, size=size: size)
        assert ("data" in observation, ref is None) == (kept, kept), size


def test_a_summary_of_exactly_its_length_is_not_cut():
    assert summarize("x" * 20, 20) == "x" * 20
    assert summarize("x" * 21, 20) == "x" * 19 + "…"


def test_a_compaction_keeps_the_last_two_turns_verbatim_by_default():
    assert ContextPolicy().keep_recent_turns == 2
