"""The controller's stages are real plug points: a learner's own four stages, written in plain Python,
run inside the controller on the regression scenarios — and one wrong stage swapped in changes the runs
it should.

The stage functions below use nothing of the package but the protocols' argument and return types
(the tool result, the route context and the route values, the fingerprint and its last sighting).
"""

from __future__ import annotations

import pytest

from agentloops.controller.policy.routes import (
    Accept,
    AcceptNotFound,
    AskUser,
    Degrade,
    Repair,
    Retry,
    StopRun,
)
from agentloops.controller.running.scenarios import check_scenario, run_scenario
from agentloops.controller.sim.scenario_files import load_controller_scenario
from agentloops.controller.stages import Stages
from agentloops.controller.vocabulary.errors import StageError

# ---- a learner's stages (plain Python) ------------------------------------------------------------------


def my_completion(items, facts, need):
    """Done when enough items have a fact that names where it came from."""
    sourced = sum(1 for fact in facts.values() if fact.source)
    if sourced >= need:
        return "complete"
    still_open = sum(1 for status in items.values() if status == "open")
    return "impossible" if sourced + still_open < need else "incomplete"


def my_route(result, ctx):
    """Each tool status to its own next step; retries only while the shared budget allows."""
    status = result.status
    can_retry = ctx.retries_left is None or ctx.retries_left >= 1
    if status == "ok":
        return Accept()
    if status == "empty":
        return AcceptNotFound() if ctx.allows_not_found else Degrade("empty", "empty, and 'not found' is no answer")
    if status == "invalid_arguments":
        if ctx.repairs_used < 1:
            return Repair("let the model fix its arguments once")
        return StopRun("failed_unrecoverable", "invalid_arguments_repeated", "the same slip twice")
    if status == "missing_parameter":
        return AskUser(result.question or "Which one do you mean?", result.parameter or "answer", "only the user knows")
    if status == "permission_denied":
        return StopRun("failed_unrecoverable", "permission_denied", "never route around a denial")
    if status == "not_found":
        return Degrade("not_found", result.error or "not found")
    if status in ("timeout", "rate_limited") and result.retryable:
        if not can_retry:
            return StopRun("budget_exhausted", "budget:retries", "the retry budget is spent", budget="retries")
        return Retry(max(2.0 ** (ctx.attempts_on_tool - 1), result.retry_after_s or 0), "transient: try again")
    return Degrade(status, result.error or status)


def my_budget(name, used, amount, limit):
    """May I spend ``amount`` more? Reaching the limit exactly is fine; going past it is not."""
    return limit is None or used + amount <= limit + 1e-6


def my_repeat(fingerprint, seen):
    """A repeat: done before at the same progress, it brought nothing new, and it did not fail transiently."""
    if seen is None or seen.new_observation:
        return False
    return seen.status not in ("timeout", "rate_limited")


MINE = Stages(completion=my_completion, route=my_route, budget_check=my_budget, repeat=my_repeat)

# the regression scenarios these four stages decide (the rest need the package's rarer routes: a fallback,
# a hand-off for a risky action, a careless compaction)
SCENARIOS = ("weather-normal", "weather-reask", "weather-no-state", "weather-timeout-once", "weather-timeout-always",
             "weather-early-claim", "weather-empty", "weather-bad-arguments",
             "weather-cancelled", "order-missing-id", "refund-permission-denied", "document-not-found",
             "recall-none-found", "research-compaction-checked", "weather-provider-outage")


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_learners_stages_pass_the_regression_scenario(name: str) -> None:
    """The status (and its reason code) each scenario expects; the actions may differ where the learner's
    route makes another sound choice (no fallback switch, say)."""
    loaded = load_controller_scenario(name)
    check = check_scenario(name, stages=MINE)
    expected = [loaded.expect] + ([loaded.resume.expect] if loaded.resume is not None else [])
    assert [(run.status, run.code) for run in check.runs] == [(e.status, e.code) for e in expected], check


def test_at_least_twelve_scenarios_are_covered() -> None:
    assert len(SCENARIOS) >= 12


# ---- a wrong stage swapped in: the run that should catch it now ends wrongly -----------------------------


def trusts_the_model(items, facts, need):
    return "complete"


def no_retry_budget(name, used, amount, limit):
    return name == "retries" or limit is None or used + amount <= limit


def off_by_one_budget(name, used, amount, limit):
    return limit is None or used + amount < limit  # reaching the limit exactly is refused


def retry_everything(result, ctx):
    return Accept() if result.status == "ok" else Retry(0.0, "just try again")


@pytest.mark.parametrize(("name", "stage", "wrong"), [
    ("weather-early-claim", "completion", trusts_the_model),
    ("weather-empty", "completion", lambda items, facts, need: "incomplete" if "open" in items.values() else "complete"),
    ("weather-timeout-always", "budget_check", no_retry_budget),
    ("weather-timeout-always", "budget_check", off_by_one_budget),
    ("weather-empty", "route", retry_everything),
    ("refund-permission-denied", "route", retry_everything),
    ("order-missing-id", "route", retry_everything),
    ("weather-reask", "repeat", lambda fingerprint, seen: False),
    ("weather-normal", "repeat", lambda fingerprint, seen: True),
])
def test_one_wrong_stage_changes_the_run_that_should_catch_it(name, stage, wrong) -> None:
    """The package's stage gives what the scenario expects; the wrong one does not (status, reason or actions)."""
    expected = load_controller_scenario(name).expect
    good, bad = run_scenario(name), run_scenario(name, **{stage: wrong})
    assert (good.status, good.code, good.actions) == (expected.status, expected.code, list(expected.actions))
    assert (bad.status, bad.code, bad.actions) != (good.status, good.code, good.actions)


@pytest.mark.parametrize(("stage", "broken", "message"), [
    ("completion", lambda items, facts, need: 1 / 0, r"the completion stage \(<lambda>\) raised ZeroDivisionError"),
    ("completion", lambda items, facts, need: True, r"the completion stage .* returned True; expected one of"),
    ("route", lambda result, ctx: "retry", r"the route stage .* returned 'retry'; expected a route value"),
    ("budget_check", lambda name, used, amount, limit: "yes", r"the budget_check stage .* returned 'yes'; expected True or False"),
    ("repeat", lambda fingerprint, seen: seen.turn, r"the repeat stage .* raised AttributeError"),
])
def test_a_broken_stage_ends_the_run_with_one_error_naming_it(stage, broken, message) -> None:
    with pytest.raises(StageError, match=message) as caught:
        run_scenario("weather-normal", **{stage: broken})
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_stage_cannot_change_the_task_it_reads() -> None:
    def meddles(items, facts, need):
        items["weather:Beijing"] = "done"
        return "complete"

    with pytest.raises(StageError, match="raised TypeError"):
        run_scenario("weather-normal", completion=meddles)


def test_an_update_stage_must_give_a_value_and_summary_pair_or_a_reason() -> None:
    def stage_returning(value):
        return Stages(update=lambda item, result: value).guarded().update

    for good in (({"t": 1}, "1°C"), "the data has no temperature"):
        assert stage_returning(good)("weather:A", None) == good
    for bad in (({"t": 1},), ({"t": 1}, "1°C", "extra"), ({"t": 1}, 1)):
        with pytest.raises(StageError, match=r"the update stage .* returned"):
            stage_returning(bad)("weather:A", None)


def test_a_stage_error_points_at_the_line_that_raised() -> None:
    helpers: dict = {}  # a learner's helper in a file of its own: the innermost frame is named, not the stage's
    exec(compile("def lookup(items):\n    return items['weather:A']\n", "my_helpers.py", "exec"), helpers)
    with pytest.raises(StageError, match=r"raised KeyError: 'weather:A' \(at my_helpers\.py:2\)"):
        run_scenario("weather-normal", completion=lambda items, facts, need: helpers["lookup"]({}))
