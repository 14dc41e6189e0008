"""Exercise set 3: the learner's stages run inside the controller, and each check names the scenario that went
differently. Every exercise is run against its reference, two typical wrong answers and a crashing one; the
capstone against the reference stages and against one wrong stage."""

from __future__ import annotations

from typing import Any

import pytest

from agentloops.controller.policy.routes import Accept, Retry
from agentloops.controller.sim.scenario_files import controller_scenario_names
from agentloops.exercises import solutions
from agentloops.exercises.building import judge_outcome, q7, q8, q9, q10, q11, q12, regression
from agentloops.exercises.checking import LearnerError
from agentloops.exercises.exercise import Exercise
from agentloops.i18n import speaking


def failures(exercise: Exercise, answer: Any) -> dict[str, str]:
    with speaking("en"):
        result = exercise.judge(answer)
    assert result.status != "not_attempted"
    return {case.name: case.message for case in result.cases if not case.passed}


WRONG: list[tuple[Exercise, Any, dict[str, str]]] = [
    # the completion stage believes the model: the early claim passes as a success
    (q7, lambda items, facts, need: "complete",
     {"weather-early-claim": "the run ended succeeded (completion_condition_met); with the package's it ends "
                             "partially_completed (premature_claim)"}),
    # given-up items counted as done: an empty city passes as a success
    (q7, lambda items, facts, need: "incomplete" if "open" in items.values() else "complete",
     {"weather-empty": "with the package's it ends partially_completed (items_unobtainable)"}),
    # the naive policy: retry everything
    (q8, lambda result, ctx: Accept() if result.status == "ok" else Retry(0.5, "again"),
     {"refund-permission-denied": "with the package's it ends failed_unrecoverable (permission_denied)",
      "order-missing-id": "with the package's it ends waiting_for_user (missing_parameter)"}),
    # a route that never switches to the fallback
    (q8, lambda result, ctx: solutions.my_route(result, ctx.__class__(**{**{f: getattr(ctx, f) for f in (
        "spec", "attempts_on_tool", "retries_left", "allows_not_found", "repairs_used", "granted")}, "fallback": None})),
     {"weather-format-change": "with the package's it ends succeeded (completion_condition_met) "
                               "(ours went on with fallback:weather_backup(city=Beijing))"}),
    # off by one at the limit: exactly enough is refused
    (q9, lambda name, used, amount, limit: limit is None or used + amount < limit,
     {"weather-normal@steps=3": "the run ended budget_exhausted (budget:steps); with the package's it ends succeeded",
      "weather-normal@tool_calls=2": "with the package's it ends succeeded"}),
    # no limit at all: one less than needed is spent anyway
    (q9, lambda name, used, amount, limit: name != "steps" or limit is None or used + amount <= limit,
     {"weather-normal@tool_calls=1": "with the package's it ends budget_exhausted (budget:tool_calls)"}),
    # what is used, not what the call may take: a lookup whose timeout breaks the wall time is started anyway
    (q9, lambda name, used, amount, limit: limit is None or used < limit,
     {"weather-normal@wall_time_s=": "the run ended succeeded (completion_condition_met); with the package's it ends "
                                     "budget_exhausted (budget:wall_time_s) (action 1: yours "
                                     "get_weather(city=Shanghai), ours blocked:get_weather(city=Shanghai))"}),
    # never a repeat: the loop runs on until idle turns stop it
    (q10, lambda fingerprint, seen: False,
     {"weather-reask": "the run ended no_progress (idle_turns); with the package's it ends no_progress "
                       "(repeated_action)"}),
    # everything seen before is a repeat: the first call of a fresh fingerprint still runs, but so does nothing else
    (q10, lambda fingerprint, seen: True,
     {"weather-normal": "with the package's it ends succeeded (completion_condition_met)"}),
    # every action seen before is a repeat: the retry the model asks for after a timeout is blocked
    (q10, lambda fingerprint, seen: seen is not None,
     {"weather-timeout-once#transient=return_to_model": "the run ended no_progress (repeated_action); with the "
                                                        "package's it ends succeeded (completion_condition_met) (action "
                                                        "3: yours blocked:get_weather(city=Beijing), ours "
                                                        "retry:get_weather(city=Beijing))"}),
    # the backup's °F taken for °C: the same stop, a wrong fact in the task state
    (q11, lambda item, result: ({"temp": result.data.get("temp_c", result.data.get("temp_f"))},
                                f"{result.data.get('temp_c', result.data.get('temp_f'))}°C, "
                                f"{result.data.get('conditions', result.data.get('sky'))}")
     if isinstance(result.data, dict) else "nothing",
     {"weather-format-change": "but the task state holds weather:Beijing = 64.4°C, cloudy where ours holds 18°C"}),
    # only the main service's shape: the backup's data is refused, the city given up
    (q11, lambda item, result: (result.data, f"{result.data['temp_c']}°C") if isinstance(result.data, dict)
     and "temp_c" in result.data else "no temp_c",
     {"weather-format-change": "the run ended partially_completed (items_unobtainable); with the package's it ends "
                               "succeeded"}),
    # wait for every call: the slow ones the task no longer needs are waited for
    (q12, lambda succeeded, finished, total, needed: finished >= total,
     {"research-parallel": "but your run waited 12 s of simulated time where ours took 4.5 s"}),
    # stop at the first success: the task lacks evidence and asks again
    (q12, lambda succeeded, finished, total, needed: succeeded >= 1,
     {"research-parallel": "but your run made 7 tool calls where ours made 4"}),
]


@pytest.mark.parametrize("exercise", [q7, q8, q9, q10, q11, q12], ids=lambda e: e.name)
def test_the_reference_stage_passes_every_scenario(exercise: Exercise) -> None:
    with speaking("en"):
        result = exercise.judge(exercise.reference())
    assert result.passed, str(result)
    assert len(result.cases) >= 4
    assert all("as with the package's stages" in case.message for case in result.cases)


@pytest.mark.parametrize(("exercise", "answer", "expected"), WRONG,
                         ids=[f"{e.name}-{i}" for i, (e, _a, _x) in enumerate(WRONG)])
def test_a_typical_wrong_stage_fails_naming_the_scenario_and_what_went_differently(exercise, answer, expected) -> None:
    failed = failures(exercise, answer)
    for scenario, said in expected.items():
        name = _named(scenario, failed)
        assert said in failed[name]


def _named(scenario: str, failed: dict[str, str]) -> str:
    """The failed case ``scenario`` names (a prefix ending in ``=`` stands for the cut the run computed)."""
    names = [name for name in failed if name == scenario or (scenario.endswith("=") and name.startswith(scenario))]
    assert len(names) == 1, (scenario, failed)
    return names[0]


Q9_Q10_WRONG = [(exercise, answer, expected) for exercise, answer, expected in WRONG if exercise in (q9, q10)]


@pytest.mark.parametrize(("exercise", "answer", "expected"), Q9_Q10_WRONG,
                         ids=[f"{e.name}-{i}" for i, (e, _a, _x) in enumerate(Q9_Q10_WRONG)])
def test_what_the_learner_reads_names_each_failing_scenario_beside_what_went_differently(exercise, answer,
                                                                                          expected) -> None:
    """Notebook 13's q9 and q10 as the learner sees them: the rendered verdict, one line per failing scenario."""
    with speaking("en"):
        shown = str(exercise.check(answer))
    assert shown.startswith("✗ Not yet")
    for scenario in expected:
        name = _named(scenario, failures(exercise, answer))
        line = next(line for line in shown.splitlines() if line.strip().startswith(f"✗ {name}:"))
        assert expected[scenario] in line


def test_the_wall_time_case_is_cut_to_what_the_normal_run_uses() -> None:
    """The q9 case that catches ``used < limit``: not a number typed in, the run's own wall time."""
    from agentloops.controller.running.scenarios import build_controller
    from agentloops.exercises.building import _budget_cases

    used = build_controller("weather-normal").run().usage["wall_time_s"]
    assert f"weather-normal@wall_time_s={used:g}" in _budget_cases()


@pytest.mark.parametrize("exercise", [q7, q8, q9, q10, q11, q12], ids=lambda e: e.name)
def test_a_crashing_stage_fails_every_case_with_the_error_not_a_traceback(exercise: Exercise) -> None:
    def crashes(*args: Any) -> Any:
        return {}["missing"]

    failed = failures(exercise, crashes)
    assert failed and all("stage raised KeyError: 'missing'" in message for message in failed.values())


def test_a_stage_of_the_wrong_type_is_named() -> None:
    failed = failures(q7, lambda items, facts, need: True)
    assert all("returned True; expected one of complete, incomplete, impossible" in m for m in failed.values())


def test_more_tool_calls_than_ours_fails_even_with_the_same_stop() -> None:
    ours = regression_outcome("weather-normal")
    ours_calls = judge_outcome({**ours, "tool_calls": 99}, case="weather-normal", stage="route")
    assert ours_calls[0] is False and "made 99 tool calls where ours made 2" in ours_calls[1]


def regression_outcome(case: str) -> dict[str, Any]:
    from agentloops.exercises.building import ours

    return dict(ours(case))


def test_a_wrong_fact_or_a_longer_wait_fails_only_where_it_is_asked() -> None:
    ours = regression_outcome("research-parallel")
    slower = {**ours, "seconds": ours["seconds"] + 1.0}
    assert judge_outcome(slower, case="research-parallel", stage="join", timed=True)[0] is False
    assert judge_outcome(slower, case="research-parallel", stage="route")[0] is True
    item = next(iter(ours["facts"]))
    wrong = judge_outcome({**ours, "facts": {**ours["facts"], item: "made up"}}, case="research-parallel", stage="route")
    assert wrong[0] is False and f"holds {item} = made up" in wrong[1]


@pytest.mark.parametrize("forged", [None, 3, {"runs": "x"}, {"runs": [["a", "b"]], "tool_calls": 1},
                                    {"error": {"stage": 1}}, {"runs": [["a", "b", [1]]], "tool_calls": 1},
                                    {"runs": [["a", "b", []]], "tool_calls": 1, "seconds": 1, "facts": {}},
                                    {"runs": [["a", "b", []]], "tool_calls": 1, "seconds": 1.0, "facts": {"x": 1}}])
def test_what_crosses_the_pipe_is_checked_before_it_is_read(forged: Any) -> None:
    with pytest.raises(LearnerError, match="sent back no result"):
        judge_outcome(forged, case="weather-normal", stage="route")


def test_the_capstone_passes_with_the_reference_stages_and_names_every_scenario() -> None:
    with speaking("en"):
        result = regression(solutions.my_completion, solutions.my_route, solutions.my_budget_check,
                            solutions.my_repeat, solutions.my_join)
    assert result.ok and result.passed == len(controller_scenario_names()), str(result)
    assert result.table.column("scenario") == controller_scenario_names()
    assert "passes all" in str(result) and "passes all" in result._repr_html_()


def test_the_capstone_fails_exactly_the_scenarios_a_wrong_stage_breaks() -> None:
    def stubborn(result: Any, ctx: Any) -> Any:
        return Accept() if result.status == "ok" else Retry(0.5, "again")

    with speaking("en"):
        result = regression(route=stubborn, scenarios=["weather-normal", "refund-permission-denied",
                                                       "document-not-found", "weather-timeout-once"])
    verdicts = dict(zip(result.table.column("scenario"), result.table.column("same as ours")))
    assert verdicts == {"weather-normal": "✓", "refund-permission-denied": "✗", "document-not-found": "✗",
                        "weather-timeout-once": "✓"}
    assert not result.ok and "passes 2 of 4" in result.headline()


def test_a_stub_stage_keeps_the_packages() -> None:
    def my_repeat(fingerprint: Any, seen: Any) -> Any:
        ...

    with speaking("en"):
        assert regression(repeat=my_repeat, scenarios=["weather-reask"]).ok


def test_a_case_carries_a_budget_cut_and_policy_settings_together() -> None:
    from agentloops.controller.stages import Stages
    from agentloops.exercises.building import _case, play

    case = _case("weather-normal", {"steps": 2}, {"transient": "return_to_model"})
    assert case == "weather-normal@steps=2#transient=return_to_model"
    assert play(case, Stages())["runs"][0][:2] == ["budget_exhausted", "budget:steps"]
    handed_back = play(_case("weather-timeout-once", policy={"transient": "return_to_model"}), Stages())
    assert handed_back["runs"][0][:2] == ["succeeded", "completion_condition_met"]
