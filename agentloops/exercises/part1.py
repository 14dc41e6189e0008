"""Part 1 exercises — one short exercise per lesson, embedded in notebooks 01–05.

Each exercise object is imported into its lesson; the learner defines one
function, runs ``q.check()``, and may ask ``q.task()`` (the rules in full),
``q.hint()`` and ``q.solution()``. What each learner function receives and
returns:

- ``q01_split`` (notebook 01) — ``splitting_round(done_test, going_test) -> al.Response``.
  Receives two names of naive stop tests (``"content"``, ``"finish_reason"``,
  ``"tool_calls"``); returns one round on which ``done_test`` says *done* and
  ``going_test`` says *go on*. Checked on all six ordered pairs: a happy path
  cannot tell the tests apart, a round built for it can.
- ``q02_stop_test`` (notebook 02) — ``my_stop_test(response) -> bool``.
  Receives one :class:`~agentloops.response.Response`; returns ``True`` (stop
  and answer with the round's text) or ``False`` (go on). Checked by running
  it as the loop's criterion on the scenarios 01 and 02 teach (normal,
  talk-and-call, talk-only, tool-call-with-stop); the truncated round is 03's.
- ``q03_wasted`` (notebook 03) — ``wasted_calls(log) -> int``. Receives a run
  as a request log: a list of dicts, one per model call, ``{"call": n,
  "new_messages": [...], "response": {...}}`` (see :func:`request_log`); returns
  how many calls were wasted. The log carries no verdict to add up.
- ``q04_decide`` (notebook 04) — ``my_decide(response) -> al.Continue | al.Finish | al.Abort``.
  Receives one response; returns the correct loop's decision. Checked against
  :func:`agentloops.criteria.correct` itself (the answer key is the code) on every
  round of every shipped scenario and on crafted ones (tool calls with ``length``,
  tool calls with ``stop``…) that the lesson's two rules decide; the rounds that
  need the rarer rules its section 3 teaches (cut-off arguments, ``pause``) are left out.
- ``q05_respond`` (notebook 05) — ``respond(record, setup) -> Setup | None``.
  Receives a failed run (:class:`~agentloops.record.RunRecord`) and the
  :class:`~agentloops.stop_cases.Setup` it ran with; returns the setup of the next
  attempt, or ``None`` when nothing automatic helps. The next attempt is run.

In a notebook::

    from agentloops.exercises.part1 import q01_split
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from agentloops.criteria import CRITERIA, NAIVE_CRITERIA, Abort, Continue, Decision, Finish, correct
from agentloops.exercises import outputs
from agentloops.exercises.checking import Case, LearnerError, Verdict, guarded_call
from agentloops.exercises.exercise import Exercise
from agentloops.exercises.failures import raised_text
from agentloops.exercises.outputs import JSON, Encoded, WrongValue
from agentloops.exercises.results import case_label
from agentloops.exercises.stopping import (
    CRAFTED_RUNS,
    criterion_outputs,
    describe_ending,
    error_reason,
    replay_criterion,
)
from agentloops.i18n import N_, _, shown
from agentloops.loop import run
from agentloops.messages import Message
from agentloops.record import RunRecord
from agentloops.response import Response, ToolCall
from agentloops.retry import failing_tools
from agentloops.scenario import list_scenarios, load_scenario
from agentloops.stop_cases import CASES, Setup, attempt
from agentloops.stops import ABORT_CODES

__all__ = ["NAIVE_TESTS", "Setup", "failing_tools", "q01_split", "q02_stop_test", "q03_wasted", "q04_decide",
           "q05_respond", "request_log"]

NAIVE_TESTS: tuple[str, ...] = NAIVE_CRITERIA
"""The three naive stop tests by name: ``content``, ``finish_reason``, ``tool_calls``."""


def _kind(decision: Decision) -> str:
    return type(decision).__name__


def _said(name: str, decision: Decision) -> str:
    if isinstance(decision, Finish):
        text = _("{test} says done ({reason})")
    elif isinstance(decision, Continue):
        text = _("{test} says go on ({reason})")
    else:
        text = _("{test} says abort ({reason})")
    return text.format(test=name, reason=shown(decision.reason))


# --------------------------------------------------------------------------- 01: a round that splits two tests


def judge_split(raw: JSON, done_test: str, going_test: str) -> Verdict:
    """Both named naive tests, run here on the learner's round: one must finish, the other go on."""
    if outputs.tag(raw) == "raised":
        raise LearnerError(_("your function raised {error}").format(error=raised_text(raw)))
    round_ = outputs.response(raw)
    done, going = CRITERIA[done_test](round_), CRITERIA[going_test](round_)
    right = _kind(correct(round_))
    if isinstance(done, Finish) and isinstance(going, Continue):
        return True, _("{done}; {going}; the correct loop: {decision}").format(
            done=_said(done_test, done), going=_said(going_test, going), decision=right)
    return False, _("on your round ({round}) {done} and {going}; expected {done_test} to say done and "
                    "{going_test} to say go on").format(round=round_.summary(), done=_said(done_test, done),
                                                        going=_said(going_test, going), done_test=done_test,
                                                        going_test=going_test)


def _split_cases(function: Callable[..., Any]) -> list[Case]:
    pairs = [(a, b) for a in NAIVE_TESTS for b in NAIVE_TESTS if a != b]
    return [Case(_("{a} done, {b} goes on").format(a=a, b=b), partial(guarded_call, function, a, b),
                 partial(judge_split, done_test=a, going_test=b)) for a, b in pairs]


q01_split = Exercise(
    id="split-the-tests",
    number=1,
    set_name="part1",
    handle="q01_split",
    title=N_("build a round on which two naive stop tests disagree"),
    variable="splitting_round",
    arguments=("done_test", "going_test"),
    noun="pairs of tests",
    prompt=N_(
        "On the normal run the three naive stop tests agree, so a happy-path test cannot tell them apart. "
        "Write splitting_round(done_test, going_test) that returns one al.Response on which the test named "
        "done_test says done and the test named going_test says go on. The names are 'content' (non-empty "
        "text means done), 'finish_reason' (finish_reason 'stop' means done) and 'tool_calls' (no tool calls "
        "means done). It is checked on all six ordered pairs; the tests themselves judge your round."
    ),
    hints=(
        N_("Each naive test watches one field. Make the field done_test watches say 'done' and the field "
        "going_test watches say 'go on'; the third field can stay as it is."),
        N_("Done: content non-empty / finish_reason 'stop' / no tool calls. Go on: content None / finish_reason "
        "'length' / a tool call such as al.ToolCall(id='call_1', name='read_file', arguments='{}')."),
        N_("Start from al.Response(content=None, tool_calls=[], finish_reason='stop') and change two fields, one "
        "per test: look up what done_test needs for 'done' and what going_test needs for 'go on'."),
    ),
    build_cases=_split_cases,
)


# --------------------------------------------------------------------------- 02: your own stop test

STOP_TEST_SCENARIOS = ("normal", "talk-and-call", "talk-only", "tool-call-with-stop")
"""The scenarios 01 and 02 teach. ``truncated`` is left out: a True/False test cannot get it right, and the
round cut off by the token limit is 03's lesson (04's exercise checks it), so 02 asks only what it taught."""


def judge_stop_test(raw: JSON, scenario: str) -> Verdict:
    """Replay the learner's True/False answers in the loop; right when the run ends as the correct loop's does.

    Where the correct loop raises, a True/False test cannot: it is right when it reports no answer at all.
    """
    expected = run(scenario, "correct")
    got = replay_criterion(raw, scenario, read=outputs.boolean, name="my_stop_test")
    if expected.error is None:
        same = (got.outcome, got.answer, got.steps, got.tools_executed) == (
            expected.outcome, expected.answer, expected.steps, expected.tools_executed)
        if same:
            return True, _("{ending}, like the correct loop").format(ending=describe_ending(got))
        return False, _("{ending}; expected: {expected}").format(ending=describe_ending(got),
                                                                 expected=describe_ending(expected))
    if got.error is not None:
        return True, _("{ending} — no answer reported, the best True/False can do here; the correct loop "
                       "{expected} (notebook 04)").format(ending=describe_ending(got),
                                                          expected=describe_ending(expected))
    reason = error_reason(expected)
    return False, _("{ending}; expected no answer at all — {reason}, so True here reports a broken round as the "
                    "answer").format(ending=describe_ending(got), reason=reason)


def _stop_test_cases(function: Callable[..., Any]) -> list[Case]:
    return [Case(name, partial(criterion_outputs, function, name, read=outputs.boolean),
                 partial(judge_stop_test, scenario=name)) for name in STOP_TEST_SCENARIOS]


q02_stop_test = Exercise(
    id="my-stop-test",
    number=2,
    set_name="part1",
    handle="q02_stop_test",
    title=N_("write a True/False stop test that never stops early"),
    variable="my_stop_test",
    arguments=("response",),
    noun="scenarios",
    prompt=N_(
        "Write my_stop_test(response) -> bool. True means: stop, and answer with this round's text; False "
        "means: go on (run the round's tool calls and ask the model again). It runs as the loop's criterion "
        "on normal, talk-and-call, talk-only and tool-call-with-stop, with a cap of 8 calls that raises. It is "
        "right when every run ends the way the correct loop's does: the same answer after the same tools. "
        "Return exactly True or False."
    ),
    hints=(
        N_("Two fields can each be wrong alone: text arrives alongside a tool call, and a tool call can arrive "
        "with finish_reason 'stop'. Which field really says whether work is left?"),
        N_("Done means: no tool calls left to run, whatever the text and the finish value say."),
        N_("return not response.tool_calls"),
    ),
    build_cases=_stop_test_cases,
)


# --------------------------------------------------------------------------- 03: wasted calls, from a log


def _call_dicts(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    return [{"name": c.name, "arguments": c.arguments} for c in calls]


def _message_dict(message: Message, arguments: dict[str, str]) -> dict[str, Any]:
    if message.role == "assistant":
        return {"role": "assistant", "content": message.content, "tool_calls": _call_dicts(message.tool_calls)}
    if message.role == "tool":
        return {"role": "tool", "name": message.name, "arguments": arguments.get(message.tool_call_id or "", "?"),
                "content": message.content}
    return {"role": message.role, "content": message.content}


def request_log(record: RunRecord) -> list[dict[str, Any]]:
    """A run as a request log shows it: per call, the messages new since the last call and the response.

    ``{"call": 2, "new_messages": [{"role": "assistant", …}, {"role": "tool", "name": "read_file",
    "arguments": "{…}", "content": "…"}], "response": {"content": …, "tool_calls": [{"name", "arguments"}],
    "finish_reason": "stop"}}`` — tool-call ids left out, no verdict on any call.
    """
    arguments: dict[str, str] = {}
    log = []
    for r in record.rounds:
        for message in r.request:
            if message.role == "assistant":
                arguments.update({c.id: c.arguments for c in message.tool_calls})
        log.append({"call": r.step,
                    "new_messages": [_message_dict(m, arguments) for m in r.request[r.new_from:]],
                    "response": {"content": r.response.content, "tool_calls": _call_dicts(r.response.tool_calls),
                                 "finish_reason": r.response.finish_reason}})
    return log


def _log_records(name: str) -> list[RunRecord]:
    if name in CRAFTED_RUNS:
        return [CRAFTED_RUNS[name]()]
    return [run(name, c) for c in CRITERIA]


def log_outputs(function: Callable[[list[dict[str, Any]]], Any], name: str) -> Encoded:
    """Worker side: the learner's count on each run's log (stopping at an exception)."""
    counts: list[JSON] = []
    for record in _log_records(name):
        value = guarded_call(function, request_log(record))
        counts.append(outputs.encode(value))
        if outputs.tag(counts[-1]) == "raised":
            break
    return Encoded(counts)


def judge_log(raw: JSON, name: str) -> Verdict:
    """Compare the learner's counts with ``RunRecord.wasted_calls``."""
    records = _log_records(name)
    if type(raw) is not list or len(raw) > len(records) or not raw:
        raise LearnerError(_("the checker's worker sent something it never sends; return your answer instead"))
    said = []
    for record, value in zip(records, raw):
        where = f"{record.scenario} × {record.criterion}" if len(records) > 1 else record.scenario
        if outputs.tag(value) == "raised":
            raise LearnerError(_("on {run} your function raised {error}").format(run=where, error=raised_text(value)))
        count = outputs.exact(value, int, _("an int: the number of wasted calls"))
        if count != record.wasted_calls:
            repeats = [str(r.step) for r in record.rounds if r.repeated] or [_("none")]
            return False, _("on {run} you counted {count}; {wasted} calls were wasted (calls: {calls}, of {steps})"
                            ).format(run=where, count=count, wasted=record.wasted_calls, calls=", ".join(repeats),
                                     steps=record.steps)
        said.append(f"{record.criterion} {count}" if len(records) > 1 else str(count))
    if len(said) < len(records):
        raise LearnerError(_("the checker's worker sent too few counts; return your answer instead"))
    return True, _("counted right: {counts}").format(counts=", ".join(said))


def _log_cases(function: Callable[..., Any]) -> list[Case]:
    names = [s.name for s in list_scenarios(["article", "extra"])] + list(CRAFTED_RUNS)
    return [Case(case_label(name), partial(log_outputs, function, name), partial(judge_log, name=name))
            for name in names]


q03_wasted = Exercise(
    id="wasted-from-a-log",
    number=3,
    set_name="part1",
    handle="q03_wasted",
    title=N_("count the wasted calls in a request log"),
    variable="wasted_calls",
    arguments=("log",),
    noun="runs",
    prompt=N_(
        "Write wasted_calls(log) -> int. The log is a list with one dict per model call: 'call' (1, 2, …), "
        "'new_messages' (what this call sent that the previous call did not: the assistant's last reply and "
        "the tool results, each {'role', 'content'}, tool results also with 'name' and 'arguments') and "
        "'response' ({'content', 'tool_calls': [{'name', 'arguments'}], 'finish_reason'}). A call is wasted "
        "when its response is identical to the previous call's and nothing new was sent in between: no tool "
        "result among its new_messages that the run had not already seen with the same name, arguments and "
        "content. The first call is never wasted. Checked on every scenario under all four criteria, and on "
        "a polling run and a paging run."
    ),
    hints=(
        N_("Walk the log in pairs (previous call, this call). Two things must both hold for a waste."),
        N_("Same response: this['response'] == previous['response']. Something new: a tool message in "
        "this['new_messages'] whose (name, arguments, content) was not in any earlier call's new_messages."),
        N_("Keep a set `seen` of (name, arguments, content) tuples; for each call, compute `fresh` = its tool "
        "results not in seen, add them to seen, and count the call when the response repeats and fresh is empty."),
    ),
    build_cases=_log_cases,
)


# --------------------------------------------------------------------------- 04: the correct loop's decision


def _call(arguments: str = '{"path": "notes.txt"}') -> ToolCall:
    return ToolCall(id="call_1", name="read_file", arguments=arguments)


CRAFTED_ROUNDS: dict[str, Response] = {
    N_("tool calls with length"): Response(content=None, tool_calls=(_call(),), finish_reason="length"),
    N_("tool calls with stop"): Response(content=None, tool_calls=(_call(),), finish_reason="stop"),
    N_("talk and a tool call"): Response(content="Let me look.", tool_calls=(_call(),), finish_reason="tool_calls"),
    "pause": Response(content=None, finish_reason="pause"),
    N_("a filtered round with a tool call"): Response(content=None, tool_calls=(_call(),),
                                                  finish_reason="content_filter"),
    N_("a refusal"): Response(content="I can't help with that.", finish_reason="refusal"),
    N_("an unknown stop value"): Response(content="?", finish_reason="unknown", raw_finish_reason="END_OF_WORLD"),
    N_("finish_reason tool_calls, no call"): Response(content=None, finish_reason="tool_calls"),
    N_("arguments cut off, with stop"): Response(content=None, tool_calls=(_call('{"path": "no'),),
                                            finish_reason="stop"),
    N_("arguments that are not JSON"): Response(content=None, tool_calls=(_call("path=notes.txt"),),
                                           finish_reason="tool_calls"),
    N_("an empty stop"): Response(content="", finish_reason="stop"),
    N_("text with length"): Response(content="The file has", finish_reason="length"),
}
"""Rounds the scenarios do not show directly."""


def two_rules(response: Response) -> Decision:
    """The decision notebook 04 teaches before its exercise: rule 1, an abnormal end aborts with its code;
    rule 2, any tool call goes on; otherwise the text is the answer."""
    if response.finish_reason in ABORT_CODES:
        return Abort(ABORT_CODES[response.finish_reason], "abnormal end")
    return Continue() if response.tool_calls else Finish(response.content)


def _same(a: Decision, b: Decision) -> bool:
    return type(a) is type(b) and getattr(a, "code", None) == getattr(b, "code", None)


def decide_rounds(*, taught_only: bool = True) -> list[tuple[str, Response]]:
    """Every round ``q04`` is checked on: the crafted ones, then each distinct response of a shipped scenario.

    With ``taught_only`` (the check's choice), only the rounds the lesson's two rules decide as
    :func:`~agentloops.criteria.correct` does: a round that needs a rule 04 teaches later (arguments cut
    off or not JSON, a ``pause``, ``tool_calls`` with nothing to call) is not asked before it is taught.
    """
    found = list(CRAFTED_ROUNDS.items())
    seen = {r.summary() for _name, r in found}
    for scenario in list_scenarios():
        for index, response in enumerate(load_scenario(scenario).responses, 1):
            if response.summary() not in seen:
                seen.add(response.summary())
                found.append((_("{scenario} · response {index}").format(scenario=scenario.name, index=index),
                              response))
    return [(name, r) for name, r in found if not taught_only or _same(two_rules(r), correct(r))]


def judge_decide(raw: JSON, response: Response) -> Verdict:
    """Compare the learner's decision with :func:`agentloops.criteria.correct` on the same round."""
    expected = correct(response)
    if outputs.tag(raw) == "raised":
        raise LearnerError(_("on {round} your function raised {error}").format(round=response.summary(),
                                                                              error=raised_text(raw)))
    try:
        got = outputs.decision(raw, allow_bool=False)
    except WrongValue as exc:
        raise LearnerError(_("on {round} your function {problem}").format(round=response.summary(),
                                                                         problem=exc)) from None
    assert not isinstance(got, bool)
    same = type(got) is type(expected) and (
        not isinstance(expected, Abort) or getattr(got, "code", None) == expected.code) and (
        not isinstance(expected, Finish) or (getattr(got, "answer", None) or "") == (expected.answer or ""))
    want = _shown(expected)
    if same:
        return True, _("{decision} — {reason}").format(decision=want, reason=shown(expected.reason))
    return False, _("you said {said} on {round}; the correct loop says {decision} — {reason}").format(
        said=_shown(got), round=response.summary(), decision=want, reason=shown(expected.reason))


def _shown(decision: Decision) -> str:
    if isinstance(decision, Abort):
        return f"Abort({decision.code!r})"
    if isinstance(decision, Finish):
        return f"Finish({outputs.show_short(decision.answer)})"
    return "Continue()"


def _decide_cases(function: Callable[..., Any]) -> list[Case]:
    return [Case(case_label(name), partial(guarded_call, function, response), partial(judge_decide, response=response))
            for name, response in decide_rounds()]


q04_decide = Exercise(
    id="decide-like-the-correct-loop",
    number=4,
    set_name="part1",
    handle="q04_decide",
    title=N_("decide each round as the correct loop does"),
    variable="my_decide",
    arguments=("response",),
    noun="rounds",
    prompt=N_(
        "Write my_decide(response) that returns al.Continue(), al.Finish(answer) or al.Abort(code, reason) — "
        "never True/False. The order of the two rules is the lesson. Rule 1, how did the round end: an abnormal "
        "end aborts before anything runs, whatever tool calls the round carries; agentloops.stops.ABORT_CODES "
        "maps each abnormal finish_reason to its code ('length' → 'truncated', 'content_filter', …). Rule 2, is "
        "there work left: any tool call → Continue, even with finish_reason 'stop'; no tool call → "
        "Finish(response.content). Checked against al.criteria.correct on every round of every shipped scenario, "
        "and on crafted ones, that these two rules decide (the rarer rounds come after the exercise)."
    ),
    hints=(
        N_("Ask 'how did it end?' before 'is there work left?'. A round cut off by the token limit may carry "
        "tool calls — they are not safe to run."),
        N_("from agentloops.stops import ABORT_CODES; if response.finish_reason in ABORT_CODES: return "
        "al.Abort(ABORT_CODES[response.finish_reason], …)."),
        N_("After the abnormal ends: if response.tool_calls: return al.Continue(); else return "
        "al.Finish(response.content)."),
    ),
    build_cases=_decide_cases,
)


# --------------------------------------------------------------------------- 05: the right response to each stop


def _long_chain_failure() -> tuple[RunRecord, Setup]:
    record = run("long-chain", "correct")
    return record, Setup(max_tokens=256, prompt=load_scenario("long-chain").prompt)


RESPOND_SITUATIONS: tuple[str, ...] = ("truncated", "content_filter", "failing_tool", N_("a chain longer than the cap"))
"""The failed runs ``q05`` shows: the three stops of notebook 05, and a cap reached with no tool failing."""


def _situation(name: str) -> tuple[RunRecord, Setup]:
    if name in CASES:
        case = CASES[name]
        return attempt(case), case.setup
    return _long_chain_failure()


def respond_call(function: Callable[[RunRecord, Setup], Any], name: str) -> Any:
    """Worker side: what the learner answers to one failed run."""
    record, setup = _situation(name)
    return guarded_call(function, record, setup)


def _setup_of(raw: JSON) -> Setup | None:
    if raw is None:
        return None
    setup = outputs.rebuild(raw, "Setup", Setup, _("a Setup (dataclasses.replace(setup, …)) or None"))
    for field, kind in (("max_tokens", int), ("prompt", str), ("tool_fixed", bool)):
        outputs.exact(getattr(setup, field), kind, _("{field} to be a {kind} in the Setup you returned").format(
            field=field, kind=kind.__name__))
    return setup


def _knob_problem(name: str, setup: Setup, new: Setup) -> str:
    """Why ``new`` is the wrong response to the stop of situation ``name`` ("" when it is the right kind)."""
    if new == setup:
        return _("that is the same request again — a blind retry pays the whole bill again for the same stop")
    if name == "truncated" and not (new.max_tokens > setup.max_tokens and new.prompt == setup.prompt):
        return _("a cut-off calls for a higher max_tokens, with the same prompt")
    if name == "content_filter" and not (new.prompt != setup.prompt and new.max_tokens == setup.max_tokens):
        return _("a filtered reply calls for another input (prompt), with the same max_tokens")
    if name == "failing_tool" and not (new.tool_fixed and new.prompt == setup.prompt):
        return _("the tool keeps failing: fix the tool (tool_fixed=True); the prompt and the limit are not the "
                 "problem")
    return ""


def judge_respond(raw: JSON, name: str) -> Verdict:
    """Check the learner's next setup: the right knob for the stop, and the next attempt must answer."""
    record, setup = _situation(name)
    if outputs.tag(raw) == "raised":
        raise LearnerError(_("your function raised {error} on a run that ended with {stop}").format(
            error=raised_text(raw), stop=record.error))
    new = _setup_of(raw)
    if name not in CASES:
        if new is None:
            return True, _("None — no tool failed: the task needs more steps or a split, a person decides on "
                           "purpose")
        return False, _("you returned {setup}; expected None — the run raised max_steps with no tool failing, so "
                        "nothing automatic helps: raising the cap is a decision, not a retry").format(
                            setup=new.describe())
    if new is None:
        return False, _("you returned None; a run that ended with {stop} has a response: {advice}").format(
            stop=record.error, advice=_(ADVICE[name]))
    problem = _knob_problem(name, setup, new)
    if problem:
        return False, _("you returned {setup} after {stop}; {problem}").format(setup=new.describe(),
                                                                               stop=record.error, problem=problem)
    after = attempt(CASES[name], new)
    if not after.succeeded:
        return False, _("you returned {setup}: the right kind of change, but the next attempt still ended with "
                        "{ending}; change it more").format(setup=new.describe(),
                                                           ending=after.error or after.outcome)
    return True, _("{setup} — the next attempt answered in {steps} calls").format(setup=new.describe(),
                                                                                  steps=after.steps)


ADVICE: dict[str, str] = {"truncated": N_("raise max_tokens"), "content_filter": N_("change the prompt"),
                          "failing_tool": N_("fix the tool")}
"""What each retryable stop calls for, in a few words (translated where it is shown)."""


def _respond_cases(function: Callable[..., Any]) -> list[Case]:
    return [Case(case_label(name), partial(respond_call, function, name), partial(judge_respond, name=name))
            for name in RESPOND_SITUATIONS]


q05_respond = Exercise(
    id="respond-to-each-stop",
    number=5,
    set_name="part1",
    handle="q05_respond",
    title=N_("answer each stop with its own response, never a blind retry"),
    variable="respond",
    arguments=("record", "setup"),
    noun="failed runs",
    prompt=N_(
        "Write respond(record, setup) -> Setup | None. record is a failed run (record.error says how it ended: "
        "'truncated', 'content_filter' or 'max_steps'); setup is what it ran with (max_tokens, prompt, "
        "tool_fixed). Return the setup of the next attempt — dataclasses.replace(setup, …) — or None when "
        "nothing automatic helps. The rules: on 'truncated' raise max_tokens and keep the prompt; on "
        "'content_filter' change the prompt (ask for something the filter does not withhold: the action items, "
        "not the phone numbers) and keep max_tokens; on 'max_steps' look at the tools — failing_tools(record) "
        "lists tools whose results were errors: if one failed, fix it (tool_fixed=True); if none did, return "
        "None (raising the cap is a decision for a person). Never return the same setup: that is a blind retry. "
        "Each answer is then run: the next attempt must answer."
    ),
    hints=(
        N_("A retry helps a dropped connection. These stops come back identically: the same limit cuts the same "
        "answer off, the same input is filtered again, the same broken tool fails again."),
        N_("Branch on record.error. 'truncated' → replace(setup, max_tokens=setup.max_tokens * 2). "
        "'content_filter' → replace(setup, prompt=...). 'max_steps' → failing_tools(record)."),
        N_("if record.error == 'max_steps': return replace(setup, tool_fixed=True) if failing_tools(record) "
        "else None. For the filter: replace(setup, prompt='List the action items in notes.txt and who owns each.')"),
    ),
    build_cases=_respond_cases,
)
