"""Exercise set 3 — build the controller: write its four stages and run them inside it.

Exercises 2 judged the same decisions against tables of cases; here each learner function is
plugged into the real controller in place of the package's stage
(:mod:`agentloops.controller.stages`) and run on the regression scenarios that exercise it. A case
passes when the run ends as the package's does (the same stop status and reason, no more tool calls);
otherwise its verdict names the scenario and what went differently:

- ``q7`` — the completion condition ``(items, facts, need)``;
- ``q8`` — the route of one tool result ``(result, ctx)``;
- ``q9`` — the budget check before a spend ``(name, used, amount, limit)``, also on scenarios whose
  budget is cut to exactly what the run needs, and to one less;
- ``q10`` — the repeat check ``(fingerprint, seen)``, also with timeouts handed back to the model, so that the
  retry it asks for meets the repeat check;
- ``q11`` — the state update ``(item, result)``: the fact a weather result establishes, or why it cannot;
- ``q12`` — the join of parallel calls ``(succeeded, finished, total, needed)``, where waiting longer than
  needed also fails (the simulated time is compared too);
- ``q13`` — the compactor ``(state)``: the memory that replaces older turns (:mod:`.compacting`);
- ``q14`` — a question answered from a trace ``(trace)``: the first turn that brought nothing new
  (:mod:`.trace_questions`).

:func:`regression` is the capstone: the learner's task-independent stages together, on every shipped
scenario, as a table of their stop against ours with the first difference.

In a notebook::

    from agentloops.exercises.building import q7, q8, q9, q10, q11, q12, q13, q14, regression
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

from agentloops.controller.running.scenarios import build_controller, check_scenario
from agentloops.controller.sim.scenario_files import controller_scenario_names
from agentloops.controller.stages import Stages
from agentloops.controller.vocabulary.errors import StageError
from agentloops.controller.vocabulary.render import Table
from agentloops.exercises import compacting, outputs, trace_questions
from agentloops.exercises.checking import Case, LearnerError, Verdict, run_cases
from agentloops.exercises.exercise import Exercise, is_stub
from agentloops.exercises.failures import raised_text
from agentloops.i18n import N_, _

Outcome = dict[str, Any]
"""One run as the worker sends it back: each run's (status, code, actions), the tool calls — or the stage's error."""


def _case(scenario: str, limits: Mapping[str, float] | None = None, policy: Mapping[str, str] | None = None) -> str:
    """A case's name: the scenario, the budget it runs under when one is cut (``weather-normal@steps=3``) and the
    error-policy settings that replace the scenario's own (``weather-timeout-once#transient=return_to_model``)."""
    return (scenario + "".join(f"@{name}={value:g}" for name, value in (limits or {}).items())
            + "".join(f"#{name}={value}" for name, value in (policy or {}).items()))


def play(case: str, stages: Stages) -> Outcome:
    """Run one case with ``stages`` (and its resume, when it waits and ships an answer): plain values only."""
    scenario, _hash, settings = case.partition("#")
    scenario, _at, cut = scenario.partition("@")
    limits = dict((part.split("=")[0], float(part.split("=")[1])) for part in cut.split("@") if part)
    policy = dict(part.split("=", 1) for part in settings.split("#") if part)
    try:
        if limits or policy:
            options: dict[str, Any] = {"policy": {"name": settings, **policy}} if policy else {}
            if limits:
                options["budget"] = build_controller(scenario).current.task.budget.with_values(**limits)
            runs = [build_controller(scenario, stages=stages, **options).run()]
        else:
            runs = list(check_scenario(scenario, stages=stages).runs)
    except StageError as error:
        return {"error": {"stage": error.stage, "problem": error.problem, "detail": error.detail,
                          "expected": error.expected}}
    return {"runs": [[run.status, run.code, list(run.actions)] for run in runs],
            "tool_calls": sum(int(run.usage["tool_calls"]) for run in runs[-1:]),
            "seconds": sum(float(run.usage["wall_time_s"]) for run in runs[-1:]),
            "facts": {fact.item: fact.summary for fact in runs[-1].stop.facts}}


def _sent(case: str, stages: Stages) -> outputs.Encoded:
    """:func:`play` in the worker: its plain values cross the pipe as they are."""
    return outputs.Encoded(play(case, stages))


def _well_formed(raw: Any) -> bool:
    """What the worker sent has the shape :func:`play` gives (it crossed a pipe: check before reading)."""
    if not isinstance(raw, dict):
        return False
    if "error" in raw:
        return isinstance(raw["error"], dict) and all(isinstance(raw["error"].get(k), str)
                                                      for k in ("stage", "problem", "detail", "expected"))
    runs = raw.get("runs")
    facts = raw.get("facts")
    return (type(raw.get("tool_calls")) is int and type(raw.get("seconds")) is float and isinstance(runs, list)
            and isinstance(facts, dict) and all(isinstance(v, str) for v in facts.values()) and bool(runs)
            and all(isinstance(run, list) and len(run) == 3 and all(isinstance(v, str) for v in run[:2])
                    and isinstance(run[2], list) and all(isinstance(a, str) for a in run[2]) for run in runs))


@cache
def ours(case: str) -> Outcome:
    """The case run with the package's own stages (computed in the notebook's process: our code only)."""
    return play(case, Stages())


def _first_difference(mine: Sequence[str], theirs: Sequence[str]) -> str:
    for index, (a, b) in enumerate(zip(mine, theirs), start=1):
        if a != b:
            return _("action {n}: yours {yours}, ours {ours}").format(n=index, yours=a, ours=b)
    if len(mine) != len(theirs):
        longer, which = (mine, _("yours")) if len(mine) > len(theirs) else (theirs, _("ours"))
        return _("{which} went on with {action}").format(which=which, action=longer[min(len(mine), len(theirs))])
    return _("the same actions")


def judge_outcome(raw: Any, case: str, stage: str | None, timed: bool = False) -> Verdict:
    """Compare the learner's run of ``case`` with the package's (``stage``: the one replaced; ``None``: several;
    ``timed``: a run that takes more simulated time than ours fails too)."""
    yours = _("your {stage} stage").format(stage=stage) if stage else _("your stages")
    if outputs.tag(raw) == "raised":
        raise LearnerError(_("running the scenario raised {error}").format(error=raised_text(raw)))
    if not _well_formed(raw):
        raise LearnerError(_("the run sent back no result"))
    if "error" in raw:
        error = raw["error"]
        if error.get("problem") == "raised":
            raise LearnerError(_("your {stage} stage raised {detail}").format(
                stage=error.get("stage"), detail=error.get("detail")))
        raise LearnerError(_("your {stage} stage returned {value}; expected {expected}").format(
            stage=error.get("stage"), value=error.get("detail"), expected=error.get("expected")))
    mine, theirs = raw["runs"], ours(case)["runs"]
    ended = " → ".join(f"{status} ({code})" for status, code, _actions in mine)
    expected = " → ".join(f"{status} ({code})" for status, code, _actions in theirs)
    if [run[:2] for run in mine] != [run[:2] for run in theirs]:
        last = next(i for i, (a, b) in enumerate(zip(mine, theirs)) if a[:2] != b[:2]) if len(mine) == len(theirs) \
            else min(len(mine), len(theirs)) - 1
        return False, _("with {yours} the run ended {mine}; with the package's it ends {ours} "
                        "({difference})").format(yours=yours, mine=ended, ours=expected,
                                                 difference=_first_difference(mine[last][2], theirs[last][2]))
    mine_facts, our_facts = raw["facts"], ours(case)["facts"]
    differs = next((item for item in sorted(set(mine_facts) | set(our_facts))
                    if mine_facts.get(item) != our_facts.get(item)), None)
    if differs is not None:
        return False, _("{mine} as with the package's stages, but the task state holds {item} = {yours} where ours "
                        "holds {ours}").format(mine=ended, item=differs, yours=mine_facts.get(differs, "—"),
                                               ours=our_facts.get(differs, "—"))
    calls, our_calls = raw["tool_calls"], ours(case)["tool_calls"]
    if calls > our_calls:
        return False, _("{mine} as with the package's stages, but your run made {calls} tool calls where "
                        "ours made {ours} ({difference})").format(mine=ended, calls=calls, ours=our_calls,
                                                            difference=_first_difference(mine[-1][2], theirs[-1][2]))
    seconds, our_seconds = raw["seconds"], ours(case)["seconds"]
    if timed and seconds > our_seconds + 1e-6:
        return False, _("{mine} as with the package's stages, but your run waited {seconds:g} s of simulated time "
                        "where ours took {ours:g} s").format(mine=ended, seconds=seconds, ours=our_seconds)
    return True, _("{mine}, as with the package's stages").format(mine=ended)


def _stage_cases(stage: str, cases: Callable[[], Sequence[str]], function: Callable[..., Any]) -> list[Case]:
    stages = Stages.of(**{stage: function})
    return [Case(case, partial(_sent, case, stages), partial(judge_outcome, case=case, stage=stage,
                                                           timed=stage == "join"))
            for case in cases()]


@cache
def _budget_cases() -> list[str]:
    """A scenario whose retry budget binds, and weather-normal with its steps and tool calls cut to exactly what
    its run uses (it must still succeed) and to one less (it must stop on that budget), and its wall time cut to
    what its run used: a call is checked against its timeout, not its latency, so the first lookup may not start
    (a check of what is used alone, without the amount the call may take, lets it run)."""
    used = build_controller("weather-normal").run().usage
    steps, calls = int(used["steps"]), int(used["tool_calls"])
    return ["weather-timeout-always", "weather-normal", _case("weather-normal", {"steps": steps}),
            _case("weather-normal", {"steps": steps - 1}), _case("weather-normal", {"tool_calls": calls}),
            _case("weather-normal", {"tool_calls": calls - 1}),
            _case("weather-normal", {"wall_time_s": used["wall_time_s"]})]


COMPLETION_SCENARIOS = ("weather-normal", "weather-early-claim", "weather-empty", "recall-none-found",
                        "document-not-found", "research-parallel")
ROUTE_SCENARIOS = ("weather-timeout-once", "weather-timeout-always", "weather-format-change", "weather-empty",
                   "weather-bad-arguments", "order-missing-id", "refund-permission-denied", "document-not-found",
                   "recall-none-found")
REPEAT_SCENARIOS = ("weather-normal", "weather-reask", "weather-no-state", "weather-timeout-once",
                    _case("weather-timeout-once", policy={"transient": "return_to_model"}),
                    "research-compaction-careless", "research-parallel")
"""The repeat check's cases; in the fifth a timeout is handed back to the model, whose retry meets the check."""
UPDATE_SCENARIOS = ("weather-normal", "weather-format-change", "weather-timeout-once", "weather-early-claim",
                    "weather-empty", "weather-reask")
JOIN_SCENARIOS = ("research-parallel", "weather-normal", "weather-timeout-once", "research-compaction-checked")


q7 = Exercise(
    id="stage-completion",
    number=7,
    set_name="building",
    title=N_("the completion stage, inside the controller"),
    variable="my_completion",
    arguments=("items", "facts", "need"),
    noun="scenarios",
    hints=(
        N_("Look only at what the task state holds: items (open, done or missing) and the facts recorded from tool "
           "results. What the model said is not in there, on purpose."),
        N_("A fact counts when it names its source (fact.source). Count those and compare with need."),
        N_("complete when the sourced facts reach need; impossible when even finishing every open item would not "
           "reach it; otherwise incomplete."),
    ),
    build_cases=partial(_stage_cases, "completion", lambda: COMPLETION_SCENARIOS),
)

q8 = Exercise(
    id="stage-route",
    number=8,
    set_name="building",
    title=N_("the route stage, inside the controller"),
    variable="my_route",
    arguments=("result", "ctx"),
    noun="scenarios",
    hints=(
        N_("One move per tool status: accept the data, accept 'none found' where the task allows it, repair an "
           "argument slip once, ask the user for what only they know, retry what may pass, stop on a denial, and "
           "switch to an independent fallback (ctx.fallback) when the tool itself cannot help."),
        N_("A retry needs result.retryable and a retry left in the shared budget (ctx.retries_left is None or >= 1); "
           "it waits 1 s, then 2 s, 4 s… (or result.retry_after_s when that is longer). With none left, stop as "
           "budget_exhausted with code budget:retries."),
        N_("invalid_arguments: Repair while ctx.repairs_used < 1, else StopRun('failed_unrecoverable', "
           "'invalid_arguments_repeated', …); missing_parameter: AskUser(result.question, result.parameter, …); "
           "permission_denied: StopRun('failed_unrecoverable', 'permission_denied', …); not_found: "
           "Degrade('not_found', …); empty: AcceptNotFound() if ctx.allows_not_found else Degrade('empty', …)."),
    ),
    build_cases=partial(_stage_cases, "route", lambda: ROUTE_SCENARIOS),
)

q9 = Exercise(
    id="stage-budget",
    number=9,
    set_name="building",
    title=N_("the budget check, inside the controller"),
    variable="my_budget_check",
    arguments=("name", "used", "amount", "limit"),
    noun="scenarios",
    hints=(
        N_("The controller asks before every spend: may I spend amount more of this budget? limit None means the "
           "budget is off."),
        N_("Reaching the limit exactly is allowed; going past it is not. Time is a float: allow a tiny rounding "
           "error (1e-6)."),
        N_("return limit is None or used + amount <= limit + 1e-6"),
    ),
    build_cases=partial(_stage_cases, "budget_check", _budget_cases),
)

q10 = Exercise(
    id="stage-repeat",
    number=10,
    set_name="building",
    title=N_("the repeat check, inside the controller"),
    variable="my_repeat",
    arguments=("fingerprint", "seen"),
    noun="scenarios",
    hints=(
        N_("seen is the last time this exact action (tool, normalised arguments, progress version) was taken, or "
           "None. A repeat is an action that cannot bring anything new."),
        N_("Never taken, or it brought a new observation last time: not a repeat. Failed transiently last time "
           "(timeout, rate_limited): a retry, bounded by the retry budget — not a repeat."),
        N_("return seen is not None and not seen.new_observation and seen.status not in ('timeout', "
           "'rate_limited')"),
    ),
    build_cases=partial(_stage_cases, "repeat", lambda: REPEAT_SCENARIOS),
)


q11 = Exercise(
    id="stage-update",
    number=11,
    set_name="building",
    title=N_("the state update, inside the controller"),
    variable="my_update",
    arguments=("item", "result"),
    noun="scenarios",
    hints=(
        N_("A tool result becomes a fact only when its data really answers the item: the right city, a "
           "temperature, the conditions. Return (value, summary), or a text saying why the data cannot be used."),
        N_("The item is 'weather:<city>'. result.data may be a dict, empty or None (an empty result asks you too). "
           "The backup service reports temp_f, not temp_c: convert it, (temp_f - 32) * 5 / 9, rounded."),
        N_("data = result.data if isinstance(result.data, dict) else {}; check data.get('city') against the item's "
           "city (ignore case); temp from temp_c or converted temp_f; sky from conditions or sky; return "
           "({'temp_c': temp, 'conditions': sky}, f'{temp}°C, {sky}'), else a reason."),
    ),
    build_cases=partial(_stage_cases, "update", lambda: UPDATE_SCENARIOS),
)

q12 = Exercise(
    id="stage-join",
    number=12,
    set_name="building",
    title=N_("the join of parallel calls, inside the controller"),
    variable="my_join",
    arguments=("succeeded", "finished", "total", "needed"),
    noun="scenarios",
    hints=(
        N_("Several calls run at once. Each time one finishes, the controller asks whether it may stop waiting; "
           "whatever is still running is then cancelled. Stop too early and the task lacks evidence; too late and "
           "it waits for calls it no longer needs."),
        N_("needed is how many successes the task still needs from this batch (its minimum evidence). finished "
           "counts failures too."),
        N_("return succeeded >= needed"),
    ),
    build_cases=partial(_stage_cases, "join", lambda: JOIN_SCENARIOS),
)

q13 = Exercise(
    id="stage-compaction",
    number=13,
    set_name="building",
    title=N_("what a compaction must keep, inside the controller"),
    variable="my_memory",
    arguments=("state",),
    noun="scenarios",
    hints=compacting.HINTS,
    build_cases=compacting.cases,
)

q14 = Exercise(
    id="trace-question",
    number=14,
    set_name="building",
    title=N_("a question answered from a trace: the first wasted turn"),
    variable="first_wasted_turn",
    arguments=("trace",),
    noun="scenarios",
    hints=trace_questions.HINTS,
    build_cases=trace_questions.cases,
)


@dataclass(frozen=True)
class Regression:
    """Your stages on every regression scenario: each scenario's stop with yours and with ours."""

    table: Table
    passed: int

    @property
    def ok(self) -> bool:
        """True when every scenario ends as it does with the package's stages."""
        return self.passed == len(self.table.rows)

    def headline(self) -> str:
        if self.ok:
            return _("✓ Your controller passes all {n} regression scenarios.").format(n=self.passed)
        return _("✗ Your controller passes {passed} of {n} regression scenarios.").format(
            passed=self.passed, n=len(self.table.rows))

    def __str__(self) -> str:
        return f"{self.headline()}\n{self.table}"

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.ok else "#b35900"
        return f"<p style='color:{colour}'><b>{self.headline()}</b></p>{self.table._repr_html_()}"


def regression(completion: Callable[..., Any] | None = None, route: Callable[..., Any] | None = None,
               budget_check: Callable[..., Any] | None = None, repeat: Callable[..., Any] | None = None,
               join: Callable[..., Any] | None = None, *, scenarios: Sequence[str] | None = None) -> Regression:
    """Run your stages (any you pass and have written: a stub whose body is ``...`` keeps the package's) on every
    regression scenario, each in the checker's guarded worker, and tabulate: the scenario, your stop, ours, and
    the first difference. (The update stage is not among them: it is one task type's — the weather task's
    in ``q11`` — while every scenario's task type keeps its own.)"""
    given = {"completion": completion, "route": route, "budget_check": budget_check, "repeat": repeat, "join": join}
    stages = Stages.of(**{name: None if stage is None or is_stub(stage) else stage for name, stage in given.items()})
    names = list(scenarios) if scenarios is not None else controller_scenario_names()
    cases = [Case(name, partial(_sent, name, stages), partial(judge_outcome, case=name, stage=None)) for name in names]
    results, _printed = run_cases(cases)
    rows = []
    for name, result in zip(names, results):
        theirs = " → ".join(f"{status} ({code})" for status, code, _actions in ours(name)["runs"])
        rows.append((name, "✓" if result.passed else "✗", theirs, result.message))
    table = Table.build(_("Your stages on the regression scenarios"), [_("scenario"), _("same as ours"),
                                                                        _("ours"), _("what happened")], rows)
    return Regression(table, sum(1 for result in results if result.passed))


__all__ = ["Regression", "q7", "q8", "q9", "q10", "q11", "q12", "q13", "q14", "regression"]
