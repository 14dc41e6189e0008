"""Exercises 13 and 14 of set 3: the learner's compactor run inside the controller on the compaction scenarios,
and a question answered from the traces of regression scenarios. Each against its reference, typical wrong
answers (each failing with a message that names the scenario) and a crashing one."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentloops.controller.task.context import careless_compactor, memory_from_state
from agentloops.exercises import compacting, trace_questions
from agentloops.exercises.building import q13, q14
from agentloops.exercises.checking import LearnerError
from agentloops.exercises.exercise import Exercise
from agentloops.i18n import speaking


def failures(exercise: Exercise, answer: Any) -> dict[str, str]:
    with speaking("en"):
        result = exercise.judge(answer)
    assert result.status == "incorrect", str(result)
    return {case.name: case.message for case in result.cases if not case.passed}


def facts_without_constraints(state: Any) -> str:
    return "MEMORY\n" + json.dumps({"goal": state.goal, "open": state.open_items(),
                                    "facts": [{"item": f.item, "summary": f.summary, "source": f.source}
                                              for f in state.facts.values()]})


WRONG: list[tuple[Exercise, Any, dict[str, str]]] = [
    # the careless summary: finished sources left out, so the model fetches them again
    (q13, careless_compactor,
     {"research-compaction-careless": "with your memory the run ended no_progress (repeated_action); with the "
                                      "package's it ends succeeded (completion_condition_met) (action 4: yours "
                                      "fetch(source_id=s1), ours fetch(source_id=s4))",
      "research-compaction-checked": "but your memory before turn 4 dropped constraint: cite every claim"}),
    # the facts kept, the constraints and inputs dropped: the run goes on, the check refuses the memory
    (q13, facts_without_constraints,
     {"research-compaction-checked": "dropped constraint: cite every claim with its source id; constraint: use only"}),
    # the right idea, the wrong turns: every turn that did not progress, the answer turn included
    (q14, lambda trace: next((t.turn for t in trace.turns if not t.progress), None),
     {"weather-normal": "in weather-normal, you answered turn 3 (answer, -, progress False), but the first call "
                        "that brought nothing new is None (no such turn)",
      "weather-timeout-always": "in weather-timeout-always, you answered turn 2"}),
    # off by one: the index in the list, not the turn's number
    (q14, lambda trace: next((i for i, t in enumerate(trace.turns) if t.tool_status == "ok" and not t.progress), None),
     {"weather-no-state": "in weather-no-state, you answered turn 2 (get_weather(city=Beijing), ok, progress True), "
                          "but the first call that brought nothing new is turn 3 (get_weather(city=Shanghai), ok"}),
    # looking for errors: the tools all worked in the wasted turns
    (q14, lambda trace: next((t.turn for t in trace.turns if t.tool_status not in ("ok", "-")), None),
     {"weather-reask": "is turn 2 (get_weather(city=Shanghai), ok, progress False)"}),
]


@pytest.mark.parametrize("exercise", [q13, q14], ids=lambda e: e.name)
def test_the_reference_passes_every_scenario(exercise: Exercise) -> None:
    with speaking("en"):
        result = exercise.judge(exercise.reference())
    assert result.passed, str(result)
    assert [case.name for case in result.cases] == list(
        compacting.SCENARIOS if exercise is q13 else trace_questions.SCENARIOS)


def test_the_package_memory_is_the_baseline_and_passes_too() -> None:
    with speaking("en"):
        assert q13.judge(memory_from_state).passed


@pytest.mark.parametrize(("exercise", "answer", "expected"), WRONG,
                         ids=[f"{e.name}-{i}" for i, (e, _a, _x) in enumerate(WRONG)])
def test_a_typical_wrong_answer_fails_naming_the_scenario(exercise: Exercise, answer: Any,
                                                         expected: dict[str, str]) -> None:
    failed = failures(exercise, answer)
    for scenario, said in expected.items():
        assert scenario in failed, (scenario, failed)
        assert said in failed[scenario] and scenario in failed[scenario]


def test_facts_without_constraints_end_as_ours_yet_fail_on_what_they_dropped() -> None:
    failed = failures(q13, facts_without_constraints)
    assert set(failed) == set(compacting.SCENARIOS)
    assert all("as with the package's memory, but your memory before turn" in message and
               "dropped constraint: cite every claim" in message for message in failed.values())


def test_what_the_memory_dropped_is_named_in_the_learners_language() -> None:
    with speaking("zh"):
        result = q13.judge(facts_without_constraints)
    message = result.case("research-compaction-checked").message
    assert "硬约束：每条论断都注明来源 ID；硬约束：只使用列出的来源" in message and "constraint" not in message


@pytest.mark.parametrize("exercise", [q13, q14], ids=lambda e: e.name)
def test_a_crashing_answer_fails_every_case_with_the_error_not_a_traceback(exercise: Exercise) -> None:
    def crashes(argument: Any) -> Any:
        return {}["missing"]

    failed = failures(exercise, crashes)
    assert len(failed) == len(exercise.build_cases(crashes))
    assert all("KeyError: 'missing'" in message for message in failed.values())


def test_answers_of_the_wrong_type_are_named() -> None:
    assert all("returned int (3); expected a str" in m for m in failures(q13, lambda state: 3).values())
    assert all("returned bool (True); expected a turn number" in m for m in failures(q14, lambda trace: True).values())


def test_a_turn_the_trace_does_not_have_is_named() -> None:
    failed = failures(q14, lambda trace: 99)
    assert "you answered turn 99, but the trace has turns 1–3" in failed["weather-normal"]


def test_more_tool_calls_than_ours_fails_even_with_the_same_stop() -> None:
    ours = dict(compacting.ours("research-compaction-careless"))
    verdict = compacting.judge({**ours, "tool_calls": ours["tool_calls"] + 1}, case="research-compaction-careless")
    assert verdict[0] is False and f"made {ours['tool_calls'] + 1} tool calls where ours made" in verdict[1]


@pytest.mark.parametrize("forged", [None, 3, {"status": "x"}, {"status": "a", "code": "b", "actions": [],
                                                              "tool_calls": 1, "dropped": [["1", []]]}])
def test_what_crosses_the_pipe_is_checked_before_it_is_read(forged: Any) -> None:
    with pytest.raises(LearnerError, match="sent back no result"):
        compacting.judge(forged, case="research-compaction-careless")


def test_the_expected_answers_come_from_the_traces() -> None:
    answers = {name: trace_questions.expected(name) for name in trace_questions.SCENARIOS}
    assert answers["weather-normal"] is None and answers["weather-timeout-always"] is None
    assert answers["weather-reask"] == 2 and answers["weather-no-state"] == 3
    assert len({a for a in answers.values() if a is not None}) >= 3  # answers at different turns


def test_the_lessons_check_the_learners_function_inside_the_controller_in_both_editions() -> None:
    from tests.test_notebooks import NOTEBOOKS, _read

    calls = {"14-traces-and-replay": "q14.check(first_wasted_turn)", "15-parallel-calls": "q12.check(my_join)",
             "16-context-compaction": "q13.check(my_memory)"}
    for name, call in calls.items():
        for path in (NOTEBOOKS / f"{name}.ipynb", NOTEBOOKS / "zh" / f"{name}.ipynb"):
            cells = [cell for cell in _read(path).cells if cell.cell_type == "code"]
            assert any(cell.source.strip() == call for cell in cells), (path, call)
            variable = call[call.index("(") + 1:-1]
            assert any(f"def {variable}(" in cell.source and cell.source.rstrip().endswith("...") for cell in cells), path
            # answer cells are counted in the exercise notebooks only
            assert not any(tag.startswith("exercise:") for cell in cells for tag in cell.metadata.get("tags", []))
