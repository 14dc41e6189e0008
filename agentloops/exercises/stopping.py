"""Exercise set 1 — stop the loop: the stop criterion, the cap, the wasted calls.

Three exercises on the core loop (:mod:`agentloops.loop`), each checked by
running the learner's function on the shipped scenarios and comparing with
what the package measures:

- ``q1`` — write a stop criterion that ends every article and extra scenario
  the way the correct loop does (:func:`agentloops.criteria.correct` is the judge);
- ``q2`` — make a naive loop raise :class:`~agentloops.run_errors.MaxStepsError`
  at the cap instead of returning its last text;
- ``q2b`` — decide whether one call was wasted (the step between the cap and the detector);
- ``q3`` — write the wasted-call detector and match
  :attr:`agentloops.record.RunRecord.wasted_calls` on every run.

In a notebook::

    from agentloops.exercises.stopping import LoggedCall, q1, q2, q2b, q3, run_tool, tool_results
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from agentloops.comparison import cell
from agentloops.criteria import CRITERION_NAMES, Abort, Criterion, by_tool_calls
from agentloops.exercises import outputs
from agentloops.exercises.checking import Case, LearnerError, Verdict, guarded_call
from agentloops.exercises.exercise import Exercise
from agentloops.exercises.failures import describe_raised, raised_text
from agentloops.exercises.kit import LoggedCall, run_tool, tool_results
from agentloops.exercises.outputs import Encoded, WrongValue
from agentloops.exercises.results import case_label
from agentloops.i18n import N_, _, ngettext, shown
from agentloops.loop import run, run_loop
from agentloops.messages import Message
from agentloops.record import OUTCOME_LABELS, RunRecord
from agentloops.response import Response, ToolCall, show_content
from agentloops.run_errors import MaxStepsError, RunError
from agentloops.scenario import Group, Scenario, list_scenarios, load_scenario
from agentloops.stubs import ScriptedModel

SCENARIO_GROUPS: tuple[Group, ...] = ("article", "extra")
"""The scenarios a stop criterion must handle: the article's four and the rounds it leaves out."""


# --------------------------------------------------------------------------- helpers the learner may use








# --------------------------------------------------------------------------- q1: a stop criterion


def describe_ending(record: RunRecord) -> str:
    """How a run ended, in the words of a verdict: ``raised truncated at call 1``, ``answered "…" at call 3``."""
    if record.error == "max_steps" and record.wasted_calls:
        return _("spun to the cap and raised max_steps at call {step} ({wasted} calls wasted)").format(
            step=record.steps, wasted=record.wasted_calls)
    if record.error:
        return record.ending()  # the call that failed, as the record counts it
    if record.outcome == "answer":
        return _("answered {answer} at call {step}").format(answer=show_content(record.answer, 40), step=record.steps)
    return _("{outcome} at call {step} (returned {answer})").format(outcome=_(OUTCOME_LABELS[record.outcome]),
                                                                    step=record.steps,
                                                                    answer=show_content(record.answer, 40))


def tool_list(names: Sequence[str]) -> str:
    """``read_file, count_lines`` or ``read_page ×8``; ``no tool`` when empty."""
    groups: list[list[Any]] = []
    for name in names:
        if groups and groups[-1][0] == name:
            groups[-1][1] += 1
        else:
            groups.append([name, 1])
    return ", ".join(name if n == 1 else f"{name} ×{n}" for name, n in groups) or _("no tool")


def plural(count: int, noun: str) -> str:
    """``1 model call``, ``3 model calls``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def model_calls(count: int) -> str:
    """``1 model call``, ``3 model calls``, in the language in use."""
    return ngettext("{count} model call", "{count} model calls", count).format(count=count)


def error_reason(record: RunRecord) -> str:
    """Why the run raised, without its ``call N:`` prefix, in the language in use (an abort's own reason)."""
    last = record.rounds[-1].decision if record.rounds else None
    if isinstance(last, Abort):
        return shown(last.reason)
    return (record.shown_error() or "").split(": ", 1)[-1]


def _why(got: RunRecord, expected: RunRecord) -> str:
    """Why the learner's ending is wrong, in one clause."""
    if expected.error:
        return error_reason(expected)
    if got.error == "max_steps":
        return _("{wasted} of the {steps} calls repeated the same response until the cap").format(
            wasted=got.wasted_calls, steps=got.steps)
    if got.error:
        return _("that round was fine to act on ({error})").format(error=error_reason(got))
    if got.outcome == "premature_answer":
        return _("{count} tool result(s) ran but never reached the model").format(count=got.wasted_tool_runs)
    if got.outcome == "empty_answer":
        return _("an empty round is not an answer")
    if got.outcome == "abnormal_answer":
        return _("the round ended with finish_reason {reason}, not a normal stop").format(
            reason=got.rounds[-1].response.finish_reason)
    return _("the run should take the same path as the correct loop")


class _Stopped(Exception):
    """Ends a worker's run early: the learner's function raised or returned something that is not a decision."""


def criterion_outputs(function: Callable[[Response], Any], scenario: Scenario | str, *,
                      read: Callable[[Any], Any] = outputs.decision) -> Encoded:
    """Worker side: run ``scenario`` under the learner's criterion; what it returned on each call, encoded.

    The run stops at the first exception or value that ``read`` rejects, which is then the last item.
    """
    seen: list[Any] = []

    def recorder(response: Response) -> Any:
        try:
            value = function(response)
        except Exception as exc:
            seen.append(describe_raised(exc))
            raise _Stopped from None
        seen.append(outputs.encode(value))
        try:
            return read(outputs.roundtrip(seen[-1]))
        except WrongValue:
            raise _Stopped from None

    with contextlib.suppress(_Stopped):
        run(scenario, Criterion("stop_criterion", recorder, "raise", "yours"))
    return Encoded(seen)


def replay_criterion(raw: Any, scenario: Scenario | str, *, read: Callable[[Any], Any] = outputs.decision,
                     name: str = "stop_criterion") -> RunRecord:
    """Notebook side: run ``scenario`` again, deciding each call with what the learner's function returned.

    Raises:
        LearnerError: a call's output is an exception or not a decision; the message names the call.
    """
    if type(raw) is not list:
        raise LearnerError(_("the checker's worker sent something it never sends; return your answer instead"))
    items = iter(raw)
    calls = [0]

    def replayed(response: Response) -> Any:
        calls[0] += 1
        where = _("on call {step} ({round})").format(step=calls[0], round=response.summary())
        value = next(items, _NOTHING)
        if value is _NOTHING:
            raise LearnerError(_("{where} the checker's worker sent no answer for this call").format(where=where))
        if outputs.tag(value) == "raised":
            raise LearnerError(_("{where} your function raised {error}").format(where=where,
                                                                                error=raised_text(value)))
        try:
            return read(value)
        except WrongValue as exc:
            raise LearnerError(_("{where} your function {problem}").format(where=where, problem=exc)) from None

    return run(scenario, Criterion(name, replayed, "raise", "yours"))


_NOTHING: Any = object()


def judge_criterion(raw: Any, scenario: Scenario) -> Verdict:
    """Replay the learner's decisions on ``scenario`` and compare how the run ends with the correct loop."""
    expected = run(scenario, "correct")
    got = replay_criterion(raw, scenario)
    same = (got.outcome, got.error, got.steps, got.answer, got.tools_executed) == (
        expected.outcome, expected.error, expected.steps, expected.answer, expected.tools_executed)
    if same:
        return True, _("{ending} after running {tools}, like the correct loop").format(
            ending=describe_ending(got), tools=tool_list(got.tools_executed))
    return False, _("{ending}; expected: {expected} — {why}").format(
        ending=describe_ending(got), expected=describe_ending(expected), why=_why(got, expected))


def _criterion_cases(function: Callable[..., Any]) -> list[Case]:
    return [Case(s.name, partial(criterion_outputs, function, s), partial(judge_criterion, scenario=s))
            for s in list_scenarios(list(SCENARIO_GROUPS))]


q1 = Exercise(
    id="stop-criterion",
    number=1,
    set_name="stopping",
    title=N_("write a stop criterion that ends every scenario correctly"),
    variable="stop_criterion",
    arguments=("response",),
    noun="scenarios",
    hints=(
        N_("Ask two questions, separately: how did the round end (finish_reason), and is there work left "
        "(the tool calls)? True/False cannot say 'this round ended badly' — some rounds need a third answer."),
        N_("Return al.Abort(code, reason) when the round ended abnormally, al.Continue() while there are tool "
        "calls, and al.Finish(response.content) otherwise. The codes: 'truncated', 'content_filter', "
        "'refusal', 'malformed_tool_call', 'unknown_stop'."),
        N_("if response.finish_reason == 'length': return al.Abort('truncated', 'cut off by the token limit'); "
        "the same for 'content_filter'. Then: if response.tool_calls: return al.Continue(); "
        "else: return al.Finish(response.content). Look at the failing scenario's finish_reason."),
    ),
    build_cases=_criterion_cases,
)


# --------------------------------------------------------------------------- q2: raise at the cap


class _TooManyCalls(BaseException):
    """Raised by the checker's model when a loop keeps calling far past its cap (not catchable as Exception)."""


class CountingModel:
    """A scripted model that counts its calls and refuses to go on forever."""

    def __init__(self, responses: Sequence[Response], ceiling: int) -> None:
        self.model = ScriptedModel(responses)
        self.ceiling = ceiling

    @property
    def calls(self) -> int:
        """Model calls so far."""
        return len(self.model.requests)

    def __call__(self, messages: Sequence[Message]) -> Response:
        if self.calls >= self.ceiling:
            raise _TooManyCalls()
        return self.model(messages)


STUCK = Scenario(
    name="stuck",
    title=N_("the same tool call forever"),
    teaches="The model asks for the same file again and again; only the cap can end the run.",
    tools={"read_file": "(notes.txt)"},
    responses=(Response(content=None, tool_calls=(ToolCall(id="call_1", name="read_file",
                                                           arguments='{"path": "notes.txt"}'),),
                        finish_reason="tool_calls"),),
)
"""A model that never stops calling the same tool: the cap must end it."""

LOOP_CASES: tuple[tuple[str, Scenario | str, int], ...] = (
    ("normal", "normal", 8),
    ("talk-only", "talk-only", 8),
    ("long-chain, max_steps=8", "long-chain", 8),
    ("long-chain, max_steps=11", "long-chain", 11),
    ("long-chain, max_steps=10", "long-chain", 10),
    ("stuck, max_steps=3", STUCK, 3),
)
"""(case name, scenario, cap): answers well inside the cap, exactly at it, and runs the cap must end."""


def expected_loop_run(scenario: Scenario | str, max_steps: int) -> RunRecord:
    """What a correct capped loop does: no tool calls means the answer; the cap raises."""
    return run(scenario, Criterion("capped_loop", by_tool_calls, "raise", "capped"), max_steps)


def loop_outputs(function: Callable[..., Any], scenario: Scenario | str, max_steps: int) -> Encoded:
    """Worker side: run the learner's loop on a counting model; how many calls it made and how it ended."""
    loaded = load_scenario(scenario)
    model = CountingModel(loaded.responses, ceiling=10 * max_steps + 10)
    try:
        value = function(model, dict(loaded.tools), max_steps)
    except _TooManyCalls:
        return Encoded({"calls": model.calls, "ending": "too_many_calls"})
    except Exception as exc:
        return Encoded({"calls": model.calls, "ending": "raised", "raised": describe_raised(exc),
                        "max_steps_error": isinstance(exc, MaxStepsError), "run_error": isinstance(exc, RunError)})
    return Encoded({"calls": model.calls, "ending": "returned", "value": outputs.encode(value)})


def _field(raw: Any, key: str, kind: type) -> Any:
    """``raw[key]`` when ``raw`` is a dict and the value has exactly type ``kind``, else the learner is told."""
    value = raw.get(key) if type(raw) is dict else None
    if type(value) is not kind:
        raise LearnerError(_("the checker's worker sent something it never sends; return your answer instead"))
    return value


def judge_loop(raw: Any, scenario: Scenario | str, max_steps: int) -> Verdict:
    """Check the learner's loop from its outputs: the answer, the calls made and the exception at the cap."""
    expected = expected_loop_run(load_scenario(scenario), max_steps)
    calls, ending = _field(raw, "calls", int), _field(raw, "ending", str)
    should_raise = expected.error == "max_steps"
    want = (_("raise al.MaxStepsError after {count} model calls").format(count=max_steps) if should_raise
            else _("return {answer} after {calls}").format(answer=show_content(expected.answer, 40),
                                                           calls=model_calls(expected.steps)))
    if ending == "too_many_calls":
        return False, _("kept calling the model: stopped at {calls} calls with max_steps={cap} — the loop has no "
                        "working cap; expected to {want}").format(calls=calls, cap=max_steps, want=want)
    if ending == "raised":
        return _judge_raised(raw, calls, max_steps, should_raise, want)
    value = raw.get("value")
    if should_raise:
        return False, _("returned {value} after {calls} model calls; expected to {want} — a loop that ran out of "
                        "steps has no answer, and returning its last text lets a spin pass silently").format(
                            value=outputs.show(value), calls=calls, want=want)
    if type(value) is not str:
        return False, _("returned {value}; expected the answer text (a str): {want}").format(
            value=outputs.show(value), want=want)
    if (value, calls) != (expected.answer, expected.steps):
        return False, _("returned {answer} after {calls}; expected to {want}").format(
            answer=show_content(value, 40), calls=model_calls(calls), want=want)
    return True, _("returned {answer} after {calls}").format(answer=show_content(value, 40), calls=model_calls(calls))


def _judge_raised(raw: dict[str, Any], calls: int, max_steps: int, should_raise: bool, want: str) -> Verdict:
    raised = _field(raw, "raised", dict)
    if _field(raw, "max_steps_error", bool):
        if not should_raise:
            off = _(" — the last allowed call must still run") if calls == max_steps - 1 else ""
            return False, _("raised MaxStepsError after {calls}; expected to {want}{off}").format(
                calls=model_calls(calls), want=want, off=off)
        if calls != max_steps:
            return False, _("raised MaxStepsError after {calls} model calls; max_steps={cap} allows exactly "
                            "{cap}{off}").format(calls=calls, cap=max_steps,
                                                 off=_(" — off by one") if abs(calls - max_steps) == 1 else "")
        return True, _("raised MaxStepsError after {calls} model calls").format(calls=calls)
    hint = (_(" — raise al.MaxStepsError: it is the RunError (code 'max_steps') callers catch for "
              "'did not converge', apart from bugs")
            if should_raise and not raw.get("run_error") and not raised.get("hint") else "")
    return False, _("raised {error} after {calls}; expected to {want}{hint}").format(
        error=raised_text(raised), calls=model_calls(calls), want=want, hint=hint)


def _loop_cases(function: Callable[..., Any]) -> list[Case]:
    return [Case(name, partial(loop_outputs, function, scenario, cap), partial(judge_loop, scenario=scenario,
                                                                               max_steps=cap))
            for name, scenario, cap in LOOP_CASES]


q2 = Exercise(
    id="raise-at-cap",
    number=2,
    set_name="stopping",
    title=N_("make a naive loop raise at the cap"),
    variable="capped_loop",
    arguments=("model", "tools", "max_steps"),
    noun="runs",
    hints=(
        N_("Look at what the loop does after its last allowed call: it hands back whatever text it has. "
        "A loop that ran out of steps did not converge; it has no answer."),
        N_("Replace the final `return last_text` with raising al.MaxStepsError — keep the loop itself as it is, "
        "so an answer on the very last allowed call still comes back."),
        N_("raise al.MaxStepsError(f'reached max_steps={max_steps} without a final answer')"),
    ),
    build_cases=_loop_cases,
)


# --------------------------------------------------------------------------- q3: the wasted-call detector


def _polling_run() -> RunRecord:
    """A model that polls a job three times; each poll brings a new status, so no call is wasted."""
    statuses = iter(["running (1 of 3 steps done)", "running (2 of 3 steps done)", "done"])
    poll = {"content": None, "tool_calls": [{"id": "call_1", "name": "job_status", "arguments": {"job": 7}}],
            "finish_reason": "tool_calls"}
    answer = {"content": "Job 7 is done.", "tool_calls": [], "finish_reason": "stop"}
    return run_loop(ScriptedModel([poll, poll, poll, answer]),
                    {"job_status": lambda args: next(statuses, "done")}, label="polling")


def _paging_run() -> RunRecord:
    """Every page returns the same text; asking for page 2 once is new, asking again is not."""
    def page(number: int) -> dict[str, Any]:
        return {"content": None, "tool_calls": [{"id": f"call_{number}", "name": "read_page",
                                                 "arguments": {"page": number}}], "finish_reason": "tool_calls"}
    answer = {"content": "The report has two pages.", "tool_calls": [], "finish_reason": "stop"}
    return run_loop(ScriptedModel([page(1), page(2), page(2), page(2), answer]),
                    {"read_page": "(a page of report.txt)"}, label="paging")


CRAFTED_RUNS: dict[str, Callable[[], RunRecord]] = {
    N_("polling (new status each time)"): _polling_run,
    N_("paging (same text, another page)"): _paging_run,
}
"""Runs where 'the same response' is not enough to call a call wasted."""


def _repeats(record: RunRecord) -> str:
    steps = [str(r.step) for r in record.rounds if r.repeated]
    if not steps:
        return _("none")
    return ngettext("call {steps}", "calls {steps}", len(steps)).format(steps=", ".join(steps))


def call_log(record: RunRecord) -> tuple[LoggedCall, ...]:
    """The run's calls without the loop's own judgement (``Round.repeated``), so a count must be worked out."""
    return tuple(LoggedCall(r.step, tuple(r.request), r.new_from, r.response) for r in record.rounds)


def _wasted_records(name: str) -> list[RunRecord]:
    """The runs of one ``q3`` case: a scenario under every criterion, or one crafted run."""
    if name in CRAFTED_RUNS:
        return [CRAFTED_RUNS[name]()]
    return [run(name, c) for c in CRITERION_NAMES]


def wasted_outputs(function: Callable[[tuple[LoggedCall, ...]], Any], name: str) -> Encoded:
    """Worker side: the learner's count on each run of the case (or the exception it raised)."""
    counts: list[Any] = []
    for record in _wasted_records(name):
        try:
            counts.append(outputs.encode(function(call_log(record))))
        except Exception as exc:
            counts.append(describe_raised(exc))
            break
    return Encoded(counts)


def judge_wasted(raw: Any, name: str) -> Verdict:
    """Compare the learner's count with ``RunRecord.wasted_calls`` on each run of one case."""
    records = _wasted_records(name)
    if type(raw) is not list or not raw:
        raise LearnerError(_("the checker's worker sent something it never sends; return your answer instead"))
    counts = []
    for record, value in zip(records, raw):
        where = f"{record.scenario} × {record.criterion}" if len(records) > 1 else record.scenario
        if outputs.tag(value) == "raised":
            raise LearnerError(_("on {run} your function raised {error}").format(run=where, error=raised_text(value)))
        if type(value) is not int:
            raise LearnerError(_("on {run} your function returned {value}; expected an int: the number of wasted "
                                 "calls").format(run=where, value=outputs.show(value)))
        if value != record.wasted_calls:
            return False, _("under {criterion}: you counted {count}; RunRecord.wasted_calls is {wasted} (repeats: "
                            "{repeats}; {steps} calls in all, {cell})").format(
                                criterion=record.criterion, count=value, wasted=record.wasted_calls,
                                repeats=_repeats(record), steps=record.steps, cell=cell(record))
        counts.append(f"{record.criterion} {value}")
    if len(counts) < len(records):
        raise LearnerError(_("the checker's worker sent too few counts; return your answer instead"))
    return True, _("matches RunRecord.wasted_calls: {counts}").format(counts=", ".join(counts))


def _wasted_cases(function: Callable[..., Any]) -> list[Case]:
    names = [s.name for s in list_scenarios(list(SCENARIO_GROUPS))] + list(CRAFTED_RUNS)
    return [Case(case_label(name), partial(wasted_outputs, function, name), partial(judge_wasted, name=name))
            for name in names]


# --------------------------------------------------------------------------- q2b: one wasted call

PAIR_RUNS: tuple[tuple[str, str], ...] = (("truncated", "content"), ("cut-off-arguments", "content"),
                                          ("normal", "correct"), ("talk-and-call", "correct"))
"""(scenario, criterion) runs whose consecutive calls ``q2b`` is checked on, before the crafted runs."""


def _rephrasing_run() -> RunRecord:
    """New words, nothing new learned: the model rephrases its call, then repeats it word for word."""
    def ask(content: str | None) -> dict[str, Any]:
        return {"content": content, "finish_reason": "tool_calls",
                "tool_calls": [{"id": "call_1", "name": "read_file", "arguments": {"path": "notes.txt"}}]}
    answer = {"content": "notes.txt has 42 lines.", "tool_calls": [], "finish_reason": "stop"}
    return run_loop(ScriptedModel([ask(None), ask("Let me read it again."), ask("Let me read it again."), answer]),
                    {"read_file": "(notes.txt)"}, label="rephrasing")


def _pair_records() -> dict[str, RunRecord]:
    records = {f"{s} × {c}": run(s, c) for s, c in PAIR_RUNS}
    crafted = {name: make() for name, make in CRAFTED_RUNS.items()}
    return records | crafted | {N_("rephrasing (new words, nothing new learned)"): _rephrasing_run()}


def call_pairs() -> list[tuple[str, str, int]]:
    """Every case of ``q2b``: (case name, run, index of the later call), one per pair of consecutive calls."""
    return [(_("{run} · call {step}").format(run=case_label(name), step=r.step), name, r.step - 1)
            for name, record in _pair_records().items() for r in record.rounds[1:]]


def _pair(name: str, index: int) -> tuple[RunRecord, LoggedCall, LoggedCall]:
    record = _pair_records()[name]
    log = call_log(record)
    return record, log[index - 1], log[index]


def pair_outputs(function: Callable[[LoggedCall, LoggedCall], Any], name: str, index: int) -> Any:
    """Worker side: the learner's verdict on one pair of consecutive calls."""
    _record, before, now = _pair(name, index)
    return guarded_call(function, before, now)


def judge_pair(raw: Any, name: str, index: int) -> Verdict:
    """Compare the learner's verdict with the loop's own (``Round.repeated``)."""
    record, before, now = _pair(name, index)
    expected = record.rounds[index].repeated
    if outputs.tag(raw) == "raised":
        raise LearnerError(_("your function raised {error} on calls {before} and {now}").format(
            error=raised_text(raw), before=before.step, now=now.step))
    value = outputs.exact(raw, bool, _("True (wasted) or False"))
    same = now.response.same_as(before.response)
    why = (_("the same response, and nothing new was sent in between") if expected else
           _("a different response") if not same else
           _("the same response, but a tool result it had not seen was sent"))
    if value == expected:
        return True, _("{answer} — {why}").format(answer=value, why=why)
    return False, _("you said {answer} for call {step}; expected {expected} — {why}").format(
        answer=value, step=now.step, expected=expected, why=why)


def _pair_cases(function: Callable[..., Any]) -> list[Case]:
    return [Case(case, partial(pair_outputs, function, name, index), partial(judge_pair, name=name, index=index))
            for case, name, index in call_pairs()]


q2b = Exercise(
    id="one-wasted-call",
    number=2,
    set_name="stopping",
    handle="q2b",
    title=N_("spot one wasted call"),
    variable="is_wasted",
    arguments=("before", "now"),
    noun="pairs of calls",
    prompt=N_(
        "Write is_wasted(before, now) -> bool for two consecutive calls of a run (LoggedCall: .response, "
        ".request, .new_from). Return True when now's response says the same as before's "
        "(now.response.same_as(before.response)) and nothing new was sent in between: no tool result in "
        "now.request[now.new_from:] that before.request did not already hold with the same tool, arguments and "
        "text (tool_results(messages) lists them as (tool, arguments, text)). Exercise 3 then only counts."
    ),
    hints=(
        N_("Two conditions, both needed: the same response, and no news. A poll that brings a new status is news."),
        N_("Same: now.response.same_as(before.response). Sent in between: now.request[now.new_from:]."),
        N_("new = set(tool_results(now.request[now.new_from:])) - set(tool_results(before.request)); "
        "return same and not new"),
    ),
    build_cases=_pair_cases,
)


q3 = Exercise(
    id="wasted-calls",
    number=3,
    set_name="stopping",
    title=N_("write the wasted-call detector"),
    variable="count_wasted",
    arguments=("rounds",),
    noun="runs",
    hints=(
        N_("A call is wasted when two things hold: its response says the same as the previous call's, and "
        "nothing new was sent to the model in between. The first call is never wasted."),
        N_("Walk pairs: for before, now in zip(rounds, rounds[1:]). 'Same' is now.response.same_as(before.response). "
        "What was sent in between is now.request[now.new_from:]; only tool results can be new there."),
        N_("new = set(tool_results(now.request[now.new_from:])) - set(tool_results(before.request)) — a result is "
        "new when that tool never returned that text for those arguments before. Count the pairs with "
        "same_as and no new result."),
    ),
    build_cases=_wasted_cases,
)

__all__ = ["CountingModel", "LoggedCall", "q1", "q2", "q2b", "q3", "run_tool", "tool_results"]
