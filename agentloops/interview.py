"""The interview drill of notebook 17, and a practice grader that says it is a heuristic.

"Your agent keeps calling tools and never stops: what do you do?" The usual
answer — "set a maximum number of steps" — names the fuse and stops there.
This module holds the drill, in our own words:

- :data:`THIRTY_SECONDS` (at most 80 words) and :data:`TWO_MINUTES` (250–320
  words), and :func:`word_count` that checks both; their Chinese editions
  :data:`THIRTY_SECONDS_ZH` and :data:`TWO_MINUTES_ZH`, sized in characters at
  :data:`SPEAKING_PACE_CPM`, and :func:`script` that returns either by language;
- :data:`FOLLOW_UPS`: six follow-ups, each answered by runs — :func:`follow_up`
  runs them through ``agentloops.controller``'s public API and checks the claim;
- :data:`EVIDENCE`: the six pieces of evidence, each linked to the cell that shows it;
- :data:`FRAMEWORK_FUSES`: how LangGraph, the OpenAI Agents SDK and Pydantic AI
  name the same fuse, with the released version and the source lines it was read from;
- :func:`grade`: the practice grader — sentences, not tokens (see its docstring); a Chinese
  answer, Simplified or Traditional, gets its advice in Chinese from the ``interview`` catalog;
- :func:`practice` and :func:`speaking_timer`: the two widgets (ipywidgets is
  imported only when one is built, so the grader stays light).
"""

from __future__ import annotations

import html
import re
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from agentloops import i18n
from agentloops.errors import UsageError
from agentloops.i18n import N_, _, translate


class DrillError(UsageError, ValueError):
    """The drill was asked for something it does not have (a follow-up number, a script name)."""


QUESTION = "Your agent keeps calling tools and never stops. What do you do?"
QUESTION_ZH = "你的 Agent 如果一直调用工具不结束，怎么办？"

THIRTY_SECONDS = (
    "A step cap is a fuse: it limits damage but does not explain why the loop runs on. Loops run on because "
    "nothing checks what done means, tool results look alike, finished work is forgotten, or every error is "
    "retried. So I keep task state outside the transcript, check each task's completion condition, route errors "
    "by kind, budget time, tokens, tool calls and retries per task type, stop repeats early, and end each run in "
    "a named status."
)
"""The 30-second answer (at most 80 words: about 30 s at 150–160 words a minute)."""

TWO_MINUTES = (
    "A loop that never stops is rarely a bug in the while loop. It lacks something it needs to converge: a goal it "
    "can check, tool results it can tell apart, a memory of what is done, or an error policy with more than one "
    "branch. The step cap is a fuse: I keep it and read the runs that hit it, but it is not the fix.\n\n"
    "I control the loop in three layers. First, business state. Each task type turns its goal into items and a "
    "completion condition, checked over a task state kept outside the transcript and shown to the model every "
    "turn. A reply without tool calls is only a claim: the run succeeds when the condition holds; otherwise the "
    "model is told what is still missing.\n\n"
    "Second, budgets. Steps, wall time, model calls, tool calls, tokens and retries each have a limit per task "
    "type, derived from measured runs. Retries are one budget for the whole task, and a switch to a fallback tool "
    "spends it too, so fallbacks cannot hide a retry storm.\n\n"
    "Third, progress. I fingerprint each action by tool, normalised arguments and the task's progress version, "
    "which a failure does not move. The same fingerprint with nothing new stops the run as no progress, before "
    "the cap; after a timeout it is a retry, bounded by the retry budget.\n\n"
    "Errors route by meaning: a timeout is retried within budget, bad arguments are repaired once, a missing "
    "parameter becomes a question for the user, and a permission denial stops the run.\n\n"
    "Every run ends in a named status, such as waiting for the user or partially completed, told to the user as "
    "what is done and missing and kept for the system as a record. Every turn writes a trace line, so to review a "
    "loop I read the trace, fix the cause, replay the same trace and rerun the fault-injection set."
)
"""The 2-minute answer (250–320 words): the three layers, error routing, statuses, traces and replay."""

SCRIPTS: dict[str, tuple[str, float]] = {
    "30-second answer": (THIRTY_SECONDS, 30.0),
    "2-minute answer": (TWO_MINUTES, 120.0),
}
"""The scripts a candidate practises aloud, with their target length in seconds."""

SPEAKING_PACE_WPM = (130, 160)
"""A comfortable interview pace, in words a minute: what the targets above are sized for."""

THIRTY_SECONDS_ZH = (
    "步数上限只是保险丝，能止损，但解释不了循环为什么不停。不停多半是因为没人检查什么算完成、工具结果分不清、"
    "做过的事被忘了、什么错都重试。所以我在对话之外维护任务状态，按任务检查完成条件；错误按类型分流，"
    "耗时、Token 和重试按任务类型设预算；重复动作尽早拦下，最后以明确的停止状态结束。"
)
"""The 30-second answer in spoken Chinese (at most 30 s at the fast end of :data:`SPEAKING_PACE_CPM`)."""

TWO_MINUTES_ZH = (
    "工具调用循环停不下来，问题很少出在 while 本身，而是缺了让它收敛的东西：一个能检查的目标、能区分开的工具结果、"
    "对做过的事的记忆，或者不止“重试”一条路的错误策略。步数上限我会留着，也会去看撞上上限的运行，"
    "但它只是保险丝，不是修复。\n\n"
    "我把循环控制分成三层。第一层是业务状态。每种任务把目标拆成具体事项和完成条件，任务状态在对话之外单独维护，"
    "每轮都发给模型。模型不再调用工具只是一个声明：完成条件成立才算成功，否则就告诉模型还缺什么。\n\n"
    "第二层是预算。步数、耗时、模型调用、工具调用、Token 和重试各有上限，按任务类型从实测运行里定出来。"
    "重试预算整个任务共用一份，换备用工具也从里面扣，这样换工具就藏不住重试风暴。\n\n"
    "第三层是进展。我用工具名、规范化参数和任务的进展版本给每个动作生成指纹；失败不算进展，进展版本保持原样。"
    "同一个指纹又出现、却没有新信息，就在撞上上限之前以无进展停止；如果上一次是超时，就是重试，由重试预算来管。\n\n"
    "错误按含义分流：超时在预算内重试，参数错误修正一次，缺参数就问用户，权限被拒就停止。\n\n"
    "每次运行都以明确的停止状态结束，比如等待用户或部分完成，这样用户知道下一步该做什么。"
    "对用户说清做完了什么、还缺什么，对系统留下结构化记录。每轮写一行轨迹，所以复盘时我先读轨迹、修根因，"
    "再用同一条轨迹回放，并重跑故障注入回归。"
)
"""The 2-minute answer in spoken Chinese: the same three layers, error routing, statuses, traces and replay."""

SCRIPTS_ZH: dict[str, tuple[str, float]] = {
    "30-second answer": (THIRTY_SECONDS_ZH, 30.0),
    "2-minute answer": (TWO_MINUTES_ZH, 120.0),
}
"""The Chinese scripts under the same names (the names are ids; :func:`script_title` shows them translated)."""

SPEAKING_PACE_CPM = (200, 250)
"""A comfortable pace for spoken Mandarin in an interview, in Chinese characters a minute (a Latin word such as
``Token`` counts as one): the figure usually given for ordinary speech, below a newsreader's 250–300. The Chinese
scripts are sized for it as the English ones are for :data:`SPEAKING_PACE_WPM`."""

_SCRIPT_TITLES = {"30-second answer": N_("30-second answer"), "2-minute answer": N_("2-minute answer")}


def _drill_language(language: str | None, where: str) -> i18n.Language:
    """``language`` (``"en"``, ``"zh"`` or a locale such as ``zh_TW``), or the package's language when ``None``."""
    if language is None:
        return i18n.language()
    chosen = i18n.normalize(str(language))
    if chosen is None:
        raise DrillError(f"{where}: language {language!r} is unknown; expected one of: {', '.join(i18n.LANGUAGES)}")
    return chosen


def script(name: str = "30-second answer", *, language: str | None = None) -> str:
    """The script ``name`` (``"30-second answer"`` or ``"2-minute answer"``) in ``language``.

    ``language`` defaults to the package's (:func:`agentloops.i18n.language`), so the Chinese notebook shows
    the Chinese answer. Raises :class:`DrillError` for an unknown name or language.
    """
    scripts = SCRIPTS_ZH if _drill_language(language, "script") == "zh" else SCRIPTS
    if name not in scripts:
        raise DrillError(f"script: {name!r} is unknown; expected one of: {', '.join(scripts)}")
    return scripts[name][0]


def script_title(name: str, *, language: str | None = None) -> str:
    """A script's name as a learner reads it ("2-minute answer", "两分钟回答")."""
    return translate(_SCRIPT_TITLES.get(name, name), _drill_language(language, "script_title"))


def speaking_pace(language: str | None = None) -> tuple[int, int]:
    """The pace the scripts in ``language`` are sized for: words a minute in English, characters in Chinese."""
    return SPEAKING_PACE_CPM if _drill_language(language, "speaking_pace") == "zh" else SPEAKING_PACE_WPM


def speaking_seconds(text: str, *, language: str | None = None) -> tuple[float, float]:
    """How long ``text`` takes at the fast and at the slow end of :func:`speaking_pace`, in seconds."""
    low, high = speaking_pace(language)
    units = word_count(text)
    return units * 60 / high, units * 60 / low


_WORD = re.compile(r"[A-Za-z0-9]+(?:['’_\-][A-Za-z0-9]+)*")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def word_count(text: str) -> int:
    """Spoken words: Latin words (``tool-call``, ``don't`` count once) plus one per Chinese character."""
    return len(_WORD.findall(text)) + len(_CJK.findall(text))


# =========================================================================== follow-ups, answered by runs


Runner = Callable[[str], Any]
"""Runs a shipped controller scenario by name (``agentloops.controller.run_scenario``)."""


@dataclass(frozen=True, slots=True)
class Check:
    """One claim of a follow-up's answer, checked against a run.

    Attributes:
        claim: what the answer says, in English (tests and the English drill read it).
        holds: whether the run shows it.
        seen: what the run showed (status, code, actions…) — data, never translated.
        template: the catalog message ``claim`` was formatted from (empty: ``claim`` is the message).
        values: the values it was formatted with.
    """

    claim: str
    holds: bool
    seen: str
    template: str = ""
    values: tuple[tuple[str, Any], ...] = ()

    def said(self, language: i18n.Language = "en") -> str:
        """The claim as a learner reads it in ``language``."""
        if language == "en":
            return self.claim
        return translate(self.template or self.claim, language).format(**dict(self.values))


def _check(template: str, holds: bool, seen: str, **values: Any) -> Check:
    """A :class:`Check` whose claim is the catalog message ``template`` filled with ``values``."""
    return Check(template.format(**values), holds, seen, template, tuple(values.items()))


@dataclass(frozen=True, slots=True)
class FollowUp:
    """One follow-up question, its answer, and the runs that back the answer.

    Attributes:
        question: the follow-up, in English.
        question_zh: the same in Chinese.
        answer: a short spoken answer in our own words.
        scenarios: the shipped controller scenarios it runs.
        evidence: the controller evidence function that shows the same thing as a table.
        checks: turns the runs (by scenario name) into checked claims.
        answer_zh: the same answer in spoken Chinese (our own words too, not a rendering of ``answer``).
    """

    question: str
    question_zh: str
    answer: str
    scenarios: tuple[str, ...]
    evidence: str
    checks: Callable[[Mapping[str, Any]], list[Check]]
    answer_zh: str = ""

    def question_in(self, language: str | None = None) -> str:
        """The question in ``language`` (default: the package's language)."""
        return self.question_zh if _drill_language(language, "question_in") == "zh" else self.question

    def answer_in(self, language: str | None = None) -> str:
        """The spoken answer in ``language`` (default: the package's language)."""
        chinese = _drill_language(language, "answer_in") == "zh" and self.answer_zh
        return self.answer_zh if chinese else self.answer


@dataclass(frozen=True)
class FollowUpRun:
    """A follow-up answered: the runs and every claim checked; renders as text and as HTML."""

    number: int
    follow_up: FollowUp
    runs: Mapping[str, Any]
    checks: tuple[Check, ...]
    language: i18n.Language = "en"
    """The language it renders in: the question, the answer and the claims (what the runs show stays as data)."""

    @property
    def holds(self) -> bool:
        """Every claim is shown by the runs."""
        return all(check.holds for check in self.checks)

    def failed(self) -> list[Check]:
        """The claims the runs did not show (empty when the answer holds)."""
        return [check for check in self.checks if not check.holds]

    def __str__(self) -> str:
        if self.language == "en":
            lines = [f"Follow-up {self.number}: {self.follow_up.question} / {self.follow_up.question_zh}",
                     f"→ {self.follow_up.answer}", "Shown by runs:"]
        else:
            lines = [self._say(N_("Follow-up {number}: {question}")).format(
                         number=self.number, question=self.follow_up.question_in(self.language)),
                     f"→ {self.follow_up.answer_in(self.language)}", self._say(N_("Shown by runs:"))]
        lines += [f" {'✓' if c.holds else '✗'} {c.said(self.language)} — {c.seen}" for c in self.checks]
        return "\n".join(lines)

    def _say(self, message: str) -> str:
        return translate(message, self.language)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td style='color:{'#1a7f37' if c.holds else '#b35900'}'>{'✓' if c.holds else '✗'}</td>"
                       f"<td style='text-align:left'>{html.escape(c.said(self.language))}</td>"
                       f"<td style='text-align:left'><code>{html.escape(c.seen)}</code></td></tr>"
                       for c in self.checks)
        if self.language == "en":
            head = (f"<b>Follow-up {self.number}: {html.escape(self.follow_up.question)}</b> "
                    f"<span style='color:#555'>{html.escape(self.follow_up.question_zh)}</span>")
        else:
            head = "<b>{}</b>".format(html.escape(self._say(N_("Follow-up {number}: {question}")).format(
                number=self.number, question=self.follow_up.question_in(self.language))))
        claim, shows = self._say(N_("claim")), self._say(N_("what the run shows"))
        return (f"<div>{head}<p>→ {html.escape(self.follow_up.answer_in(self.language))}</p><table><tr><th></th>"
                f"<th>{html.escape(claim)}</th><th>{html.escape(shows)}</th></tr>{rows}</table></div>")


def _record(run: Any) -> Mapping[str, Any]:
    """The run's stop as the system keeps it (a method today; a property would work too)."""
    record = run.system_record
    return record() if callable(record) else record


def _user_text(run: Any) -> str:
    message = run.user_message
    return str(message() if callable(message) else message)


def _steps(run: Any) -> tuple[int, int]:
    """Steps used and the step limit, both read from the run's system record."""
    record = _record(run)
    used = int(record.get("budgets_used", {}).get("steps", 0))
    return used, used + int(record.get("budgets_left", {}).get("steps", 0))


def _ending(run: Any) -> str:
    return f"{run.status} ({run.code})"


def _first_repeat(actions: Sequence[str]) -> int | None:
    """1-based position of the first action that repeats an earlier one, ``None`` if none does."""
    seen: set[str] = set()
    for position, action in enumerate(actions, start=1):
        if action in seen:
            return position
        seen.add(action)
    return None


STATUS_SCENARIOS: dict[str, str] = {
    "succeeded": "weather-normal",
    "partially_completed": "weather-early-claim",
    "waiting_for_user": "order-missing-id",
    "failed_unrecoverable": "refund-permission-denied",
    "system_failure": "weather-provider-outage",
    "budget_exhausted": "weather-timeout-always",
    "no_progress": "weather-reask",
    "cancelled": "weather-cancelled",
    "handed_off": "refund-handoff",
}
"""One shipped scenario per stop status: follow-up 1 runs them all."""


def _other_exits(runs: Mapping[str, Any]) -> list[Check]:
    checks = [_check(N_("a run can end as {status}"), runs[name].status == status, f"{name}: {_ending(runs[name])}",
                     status=status)
              for status, name in STATUS_SCENARIOS.items()]
    capped = [name for name, run in runs.items() if run.code == "budget:steps"]
    checks.append(_check(N_("none of these endings is the step cap"), not capped,
                         ", ".join(capped) or "no budget:steps"))
    return checks


def _why_that_number(runs: Mapping[str, Any]) -> list[Check]:
    used, limit = _steps(runs["weather-normal"])
    recoverable = {name: _steps(runs[name])[0] for name in ("weather-timeout-once", "weather-format-change")}
    return [
        _check(N_("the happy path uses {used} of the {limit} steps"), used < limit, f"weather-normal: {used}/{limit}",
               used=used, limit=limit),
        _check(N_("a recoverable failure still succeeds inside the limit"),
              all(runs[n].status == "succeeded" and s < limit for n, s in recoverable.items()),
              ", ".join(f"{n}: {_ending(runs[n])}, {s}/{limit} steps" for n, s in recoverable.items())),
        _check(N_("the limit leaves room above every normal run"), limit > max([used, *recoverable.values()]),
              f"largest normal run: {max([used, *recoverable.values()])} steps, limit {limit}"),
    ]


def _repeat_or_retry(runs: Mapping[str, Any]) -> list[Check]:
    reask, retried = runs["weather-reask"], runs["weather-timeout-once"]
    used, limit = _steps(reask)
    return [
        _check(N_("the same call that brought nothing new is stopped as no progress"),
              (reask.status, reask.code) == ("no_progress", "repeated_action")
              and any(a.startswith("blocked:") for a in reask.actions), f"weather-reask: {_ending(reask)}"),
        _check(N_("it stops before the step cap"), used < limit, f"{used} of {limit} steps used"),
        _check(N_("the same call after a timeout is a retry, and the run succeeds"),
              retried.status == "succeeded" and "retry:get_weather(city=Beijing)" in retried.actions,
              "weather-timeout-once: " + " → ".join(retried.actions)),
    ]


def _claim_is_a_signal(runs: Mapping[str, Any]) -> list[Check]:
    claimed, normal = runs["weather-early-claim"], runs["weather-normal"]
    return [
        _check(N_("the model claimed it was done more than once"), claimed.actions.count("answer") >= 2,
              "weather-early-claim: " + " → ".join(claimed.actions)),
        _check(N_("the claim is not reported as success"), claimed.status != "succeeded"
              and _record(claimed).get("verified") is False, f"weather-early-claim: {_ending(claimed)}"),
        _check(N_("the user is told what is missing"), "Beijing" in _user_text(claimed),
              next((line.strip() for line in _user_text(claimed).splitlines() if "Beijing" in line), "no Beijing")),
        _check(N_("a claim made when the condition holds succeeds"), normal.status == "succeeded"
              and _record(normal).get("verified") is True, f"weather-normal: {_ending(normal)}"),
    ]


def _keeps_timing_out(runs: Mapping[str, Any]) -> list[Check]:
    timeout, refund = runs["weather-timeout-always"], runs["refund-handoff"]
    left = _record(timeout).get("budgets_left", {})
    return [
        _check(N_("retries stop when the shared retry budget is spent"), timeout.code == "budget:retries"
              and left.get("retries") == 0 and left.get("steps", 0) > 0,
              f"weather-timeout-always: {_ending(timeout)}, left: {dict(left)}"),
        _check(N_("the fallback tool spends the same budget"),
              any(a.startswith("fallback:") for a in timeout.actions), " → ".join(timeout.actions)),
        _check(N_("the verified result is kept for the user"), "Shanghai" in _user_text(timeout),
              " | ".join(_user_text(timeout).splitlines()[:2])),
        _check(N_("a call with side effects goes to a person, not a retry"),
              refund.status == "handed_off" and not any(a.startswith("retry:") for a in refund.actions),
              f"refund-handoff: {_ending(refund)}, " + " → ".join(refund.actions)),
    ]


def _review_a_loop(runs: Mapping[str, Any]) -> list[Check]:
    looped, fixed = runs["weather-no-state"], runs["weather-normal"]
    repeat = _first_repeat(looped.actions)
    return [
        _check(N_("the trace shows where the loop began repeating"), repeat is not None,
              f"weather-no-state: action {repeat} repeats an earlier one: " + " → ".join(looped.actions)),
        _check(N_("the loop was stopped for no progress"), looped.status == "no_progress", _ending(looped)),
        _check(N_("with the task state sent, the same task runs without a repeat"),
              _first_repeat(fixed.actions) is None and fixed.status == "succeeded",
              "weather-normal: " + " → ".join(fixed.actions)),
    ]


FOLLOW_UPS: tuple[FollowUp, ...] = (
    FollowUp("Besides a maximum number of steps, what else stops the loop?", "除了最大步数，还有什么停止条件？",
             "The completion condition, a partial result, waiting for the user, an unrecoverable failure, a system "
             "failure, the other budgets, a repeat with no progress, cancellation and a hand-off to a person — "
             "each its own status.",
             tuple(STATUS_SCENARIOS.values()), "stop_statuses", _other_exits,
             answer_zh="出口有很多种：完成条件成立就是成功；只拿到一部分结果算部分完成；缺信息就等待用户；另外还有"
           "不可恢复的失败、系统故障、其他预算耗尽、重复动作无进展、用户取消和转人工。每一种都有自己的停止状态，"
                       "因为用户和系统接下来要做的事各不相同。"),
    FollowUp("Why that number for the step budget?", "最大步数为什么这样设？",
             "From the task's structure: what the happy path needs, what a recoverable failure adds, checked against "
             "measured runs — and I read the runs that hit it instead of only counting them.",
             ("weather-normal", "weather-timeout-once", "weather-format-change"), "budget_basis", _why_that_number,
             answer_zh="看任务本身的结构：正常路径要几步，一次可恢复的失败会多出几步，再拿实测的运行来核对。"
                       "撞上上限的运行，我会一条条去读，而不是只数有多少条。"),
    FollowUp("How do you tell a repeated call from a retry?", "怎样判断重复调用？",
             "Fingerprint the action: tool, normalised arguments, progress version — a failure is not progress, so "
             "it leaves the fingerprint as it was. The same fingerprint after a call that brought nothing new is "
             "a loop; after a timeout or a rate limit it is a retry, paid from the retry budget.",
             ("weather-reask", "weather-timeout-once"), "repeated_call_trace", _repeat_or_retry,
             answer_zh="给动作算指纹：工具名、规范化参数、进展版本。失败不算进展，所以指纹还是原来那个。"
                       "上一次调用没带来任何新东西，接着又是同一个指纹，那就是在兜圈子；如果上一次是超时或限流，"
                       "那就是重试，从重试预算里扣。"),
    FollowUp("The model says it is done. Why not stop?", "模型说完成了，为什么还不结束？",
             "Because saying so is a signal. The run succeeds when the task's condition holds over the state; "
             "otherwise the model hears what is missing, and the user gets a partial result, not a fake success.",
             ("weather-early-claim", "weather-normal"), "completion_conditions", _claim_is_a_signal,
             answer_zh="因为模型说做完了只是一个信号。要在任务状态上核对完成条件，成立了才算成功；不成立就告诉模型"
                       "还缺什么，最后给用户的是部分结果，而不是一个假装成功的答案。"),
    FollowUp("The tool keeps timing out. Now what?", "工具一直超时怎么办？",
             "Retry with back-off inside one shared retry budget, try an independent fallback (which spends it too), "
             "then stop with what is verified. A call with side effects is never retried blindly: a person decides.",
             ("weather-timeout-always", "refund-handoff"), "error_routing", _keeps_timing_out,
             answer_zh="先带退避地重试，但整个任务只有一份共用的重试预算；再换一个独立的备用工具，它也从这份预算里扣；"
                       "预算耗尽就带着已经验证的结果停下。有副作用的调用绝不盲目重试，交给人来决定。"),
    FollowUp("How do you review a run that looped?", "怎么复盘一次死循环？",
             "Read the trace turn by turn: which actions repeated, which turns changed no state. Name the cause — "
             "goal, tool, state, policy or context — fix it, and replay the same inputs; then rerun the fault set.",
             ("weather-no-state", "weather-normal"), "fault_regression", _review_a_loop,
             answer_zh="逐轮读轨迹：哪些动作在重复，哪些轮次没有改变任何状态。判断根因出在目标、工具、状态、错误策略"
                       "还是上下文，修好以后用同样的输入回放，再把故障注入回归跑一遍。"),
)
"""The six follow-up questions of the drill, in the source article's order."""


def _run_scenario(name: str) -> Any:
    from agentloops.controller import run_scenario

    return run_scenario(name)


def follow_up(number: int, *, runner: Runner | None = None, language: str | None = None) -> FollowUpRun:
    """Answer follow-up ``number`` (1–6) by running its scenarios and checking every claim.

    Args:
        number: which follow-up, 1 to 6.
        runner: runs a scenario by name (default ``agentloops.controller.run_scenario``);
            a test passes its own to see a wrong run fail a claim.
        language: the language the answer and its claims are shown in (``"en"``, ``"zh"``);
            default: the package's (:func:`agentloops.i18n.language`).

    Raises:
        DrillError: ``number`` is not 1–6, or ``language`` is unknown.
    """
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(FOLLOW_UPS):
        raise DrillError(f"follow_up: number {number!r} is not a follow-up; expected 1 to {len(FOLLOW_UPS)}")
    chosen = _drill_language(language, "follow_up")
    run = runner or _run_scenario
    item = FOLLOW_UPS[number - 1]
    runs = {name: run(name) for name in item.scenarios}
    return FollowUpRun(number, item, runs, tuple(item.checks(runs)), chosen)


def evidence_for(number: int) -> Any:
    """The controller's evidence table for follow-up ``number`` (the same fact as a table)."""
    import agentloops.controller as ctl

    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(FOLLOW_UPS):
        raise DrillError(f"evidence_for: number {number!r} is not a follow-up; expected 1 to {len(FOLLOW_UPS)}")
    return getattr(ctl, FOLLOW_UPS[number - 1].evidence)()


# =========================================================================== the six pieces of evidence


@dataclass(frozen=True, slots=True)
class Evidence:
    """One piece of evidence and the notebook cell whose output shows it.

    Attributes:
        name: what it is.
        name_zh: the same in Chinese.
        call: the package call that produces it.
        notebook: the notebook file (relative to ``notebooks/``).
        anchor: the HTML anchor just above the cell.
        heading: the heading of that section.
    """

    name: str
    name_zh: str
    call: str
    notebook: str
    anchor: str
    heading: str

    @property
    def function(self) -> str:
        """The function name the cell calls."""
        return self.call.split("(", 1)[0]

    def link(self, language: i18n.Language = "en") -> str:
        """A Markdown link to the cell: ``[heading](notebook#anchor)``, the heading in ``language`` (the Chinese
        notebooks keep the same file names and anchors)."""
        return f"[{translate(self.heading, language)}]({self.notebook}#{self.anchor})"


EVIDENCE: tuple[Evidence, ...] = (
    Evidence("business completion conditions per task type", "每种任务的业务完成条件", "completion_conditions()",
             "11-when-is-it-done.ipynb", "evidence-completion-conditions", N_("Evidence 1: completion conditions")),
    Evidence("budgets with the basis of every number", "预算的配置依据", "budget_basis(measure=200)",
             "13-budgets-and-no-progress.ipynb", "evidence-budget-basis", N_("Evidence 2: budgets and their basis")),
    Evidence("stop status definitions", "停止状态定义", "stop_statuses()",
             "11-when-is-it-done.ipynb", "evidence-stop-statuses", N_("Evidence 3: stop statuses")),
    Evidence("a repeated-call trace showing why the state did not change", "一条重复调用 Trace",
             "repeated_call_trace()", "13-budgets-and-no-progress.ipynb", "evidence-repeated-call-trace",
             N_("Evidence 4: a repeated-call trace")),
    Evidence("routing of empty, timeout, permission and argument errors", "空结果、超时、权限和参数错误的分流",
             "error_routing()", "12-tool-errors.ipynb", "evidence-error-routing", N_("Evidence 5: error routing")),
    Evidence("fault-injection regression with before/after trajectory differences", "故障注入回归与前后轨迹差异",
             "fault_regression()", "14-traces-and-replay.ipynb", "evidence-fault-regression",
             N_("Evidence 6: fault-injection regression")),
)
"""The six pieces of evidence, in the source article's order."""


def checklist_markdown(language: str | None = None) -> str:
    """The six pieces of evidence as a Markdown checklist, each linked to the notebook cell that produces it.

    In Chinese (``language="zh"``; default: the package's language) each item names the evidence and links
    the Chinese notebook's heading.
    """
    if _drill_language(language, "checklist_markdown") == "zh":
        return "\n".join(f"- [ ] **{i}. {e.name_zh}** — `{e.call}` → {e.link('zh')}"
                         for i, e in enumerate(EVIDENCE, start=1))
    return "\n".join(f"- [ ] **{i}. {e.name}** ({e.name_zh}) — `{e.call}` → {e.link()}"
                     for i, e in enumerate(EVIDENCE, start=1))


# =========================================================================== the same fuse in three frameworks


@dataclass(frozen=True, slots=True)
class FrameworkFuse:
    """How one framework names the step cap, read from the source of one released version.

    Attributes:
        framework: the framework.
        package: the PyPI distribution that was read.
        version: its version.
        setting: where the limit is set.
        default: the default value in that version.
        counts: what one unit of the limit is.
        raises: the exception raised when it is hit.
        source: file:line references inside that version's wheel.
    """

    framework: str
    package: str
    version: str
    setting: str
    default: str
    counts: str
    raises: str
    source: tuple[str, ...]

    def row(self) -> dict[str, str]:
        """One table row (the notebook shows these as a DataFrame)."""
        return {"framework": self.framework, "checked against": f"{self.package} {self.version}",
                "setting": self.setting, "default": self.default, "one unit is": self.counts,
                "when hit": self.raises, "read in": "; ".join(self.source)}


FRAMEWORK_FUSES: tuple[FrameworkFuse, ...] = (
    FrameworkFuse("LangGraph", "langgraph", "1.2.24", "config={'recursion_limit': N} on invoke/stream",
                  "10007 (env LANGGRAPH_DEFAULT_RECURSION_LIMIT)", "one superstep of the graph",
                  "GraphRecursionError (a RecursionError)",
                  ("langgraph/_internal/_config.py:42 DEFAULT_RECURSION_LIMIT",
                   "langgraph/pregel/_loop.py:1923 stop = step + recursion_limit + 1",
                   "langgraph/pregel/main.py:3128 raise GraphRecursionError", "langgraph/errors.py:69")),
    FrameworkFuse("OpenAI Agents SDK", "openai-agents", "0.24.0", "Runner.run(..., max_turns=N); None turns it off",
                  "10 (DEFAULT_MAX_TURNS)", "one model invocation, with the tool calls it makes",
                  "MaxTurnsExceeded, unless error_handlers['max_turns'] handles it",
                  ("agents/run_config.py:45 DEFAULT_MAX_TURNS", "agents/run.py:1598 current_turn > max_turns",
                   "agents/exceptions.py:354")),
    FrameworkFuse("Pydantic AI", "pydantic-ai-slim", "2.68.0",
                  "UsageLimits(request_limit=N, tool_calls_limit=M, …); None turns one off",
                  "request_limit 50, tool_calls_limit None", "a model response (requests); a successful tool call",
                  "UsageLimitExceeded, checked before the request / tool call that would exceed",
                  ("pydantic_ai/usage.py:559 request_limit", "pydantic_ai/usage.py:568 tool_calls_limit",
                   "pydantic_ai/usage.py:633 check_before_request", "pydantic_ai/usage.py:718 check_before_tool_call",
                   "pydantic_ai/exceptions.py:550")),
)
"""The step cap under three names — each a fuse, and none of them a completion condition."""


def framework_rows() -> list[dict[str, str]]:
    """:data:`FRAMEWORK_FUSES` as table rows."""
    return [fuse.row() for fuse in FRAMEWORK_FUSES]


# =========================================================================== the practice grader: what it looks for


Language = Literal["en", "zh-Hans", "zh-Hant", "none"]
"""The language of an answer, and so of the grader's advice."""

PointStatus = Literal["covered", "partly", "named", "missed"]


@dataclass(frozen=True, slots=True)
class Concept:
    """One idea a point is made of, and the phrasings that count as stating it.

    Attributes:
        name: the idea in a few words, in English: its id, and the catalog message a learner reads.
        patterns: regular expressions, English (case-insensitive) and Simplified Chinese
            (a Traditional answer is converted to Simplified by :func:`to_simplified` before matching).
        negatable: ``False`` for a mention that counts even under a negation ("the cap
            does not explain *why it loops*" still points at the root cause).
    """

    name: str
    patterns: tuple[str, ...]
    negatable: bool = True

    @property
    def name_zh(self) -> str:
        """The name in (Simplified) Chinese, from the ``interview`` catalog."""
        return translate(self.name, "zh")


@dataclass(frozen=True, slots=True)
class Point:
    """One point of the 2-minute answer.

    Attributes:
        key: identifier.
        title: the point in English (the catalog message; :attr:`title_zh` is its translation).
        concepts: the ideas it is made of.
        need: how many different concepts make it complete.
        advice: what to add while it is not covered, in English (translated the same way).
        core: counts toward the score (bonus points do not).
    """

    key: str
    title: str
    concepts: tuple[Concept, ...]
    need: int
    advice: str
    core: bool = True

    @property
    def title_zh(self) -> str:
        """The title in (Simplified) Chinese, from the ``interview`` catalog."""
        return translate(self.title, "zh")

    @property
    def advice_zh(self) -> str:
        """The advice in (Simplified) Chinese, from the ``interview`` catalog."""
        return translate(self.advice, "zh")


def _c(name: str, *patterns: str, negatable: bool = True) -> Concept:
    return Concept(name, patterns, negatable)


POINTS: tuple[Point, ...] = (
    Point("fuse", N_("A step cap is a fuse, not the fix"), (
        _c(N_("names the step cap"),
           r"\bmax(imum)?[ _-]?(number of )?(steps?|iterations?|turns?|loops?|rounds?|calls?)\b",
           r"\b(step|iteration|loop|turn|round)s? ?(cap|limit|count)s?\b", r"\bcaps?\b", r"\bmax_(steps|turns)\b",
           r"\brecursion[_ ]limit\b", r"\blimits? (on|to) (the )?(number of )?(steps|turns|iterations|rounds|calls)\b",
           r"\bhard (limit|stop)\b", "最大步数", "步数上限", "最大循环", "(循环|回圈)次数", "最大轮数", "上限",
           "步数限制",
           "最大迭代", "迭代(次数|上限)", "(轮数|次数|调用)上限", "最多(调用|跑|执行|循环|迭代)",
           negatable=False),
        _c(N_("calls it a last resort"),
           r"\bfuses?\b", r"\bsafety net\b", r"\blast (line|resort)\b", r"\bbackstop\b", r"\bcircuit[- ]breaker",
           r"\blimits? (the )?damage\b", r"\bnot (the|a) (fix|solution|cure)\b", r"\bemergency brake\b",
           r"\b(doesn't|does not|won't|will not) fix\b", r"\bsymptoms?\b", "保险丝", "止损", "兜底", "最后一道",
           "治标", "不能解决",
           "安全网", "防线", "解决不了", "不解决(根本)?问题", "治不了本", "止血", "熔断", "只能(防止|限制|避免)"),
        _c(N_("looks for the root cause"),
           r"\broot[- ]causes?\b", r"\bwhy (it|the agent|the loop|the model) (loops|keeps|runs|doesn|won|never)",
           r"\bdiagnos", r"\bunderlying\b", r"\bthe real (problem|cause|issue|reason)\b",
           r"\b(find|figure out|understand|ask) why\b", r"\bwhat caus(es|ed) (it|the loop)\b", "根因", "根本原因",
           "为什么(会)?(一直|不停|停不下来|循环)", "找出原因",
           "为什么(会)?(停不了|不结束|不收敛|死循环|不会停|停不下)", "真正的原因", "问题的本质",
           "(排查|定位|分析)(根本)?原因",
           "原因在于", "病根",
           negatable=False),
    ), 2, N_("Keep the cap, but call it what it is — a fuse that limits damage — and say the fix lies in the goal, "
          "the tool feedback, the state and the error policy.")),
    Point("completion", N_("Business completion conditions; no tool calls is not success"), (
        _c(N_("a checkable completion condition"),
           r"\bcompletion (condition|criteri|check|test)", r"\b(done|success|exit|termination|stopping|stop|finish) "
           r"(condition|criteri|check|test|rule)", r"\bdefinition of done\b",
           r"\bwhat (done|finished|success|complete) (means|looks like)\b", r"\bbusiness (condition|rule|success|goal)",
           r"\bacceptance (criteri|test)", r"\b(really|actually|truly) (done|finished|complete)\b",
           r"\bwhat counts as (done|finished|complete|success)\b", "完成条件", "成功条件", "业务完成", "业务成功",
           "完成标准", "完成判断", "什么算完成", "真的完成", "是否完成",
           "(终止|结束|退出|停止)(条件|判据)", "完成的?(定义|标准|判据)", "验收(标准|条件)",
           "(怎样|怎么|什么)(才)?算(完成|做完|成功|结束)", "目标(是否)?达成", "完成判据"),
        _c(N_("no tool calls is only a claim"),
           r"\bno (more )?tool calls?\b", r"\bstops? (calling|using) tools\b", r"\bwithout (any )?tool calls?\b",
           r"\bclaims?\b", r"\b(says|said|thinks|declares?|believes) (that )?(it('s| is) )?(done|finished|complete)",
           r"\bsignal\b", r"\bopinion\b", r"\bnot proof\b", r"\btake (its|the model's) word\b", "不再?(返回|调用)工具",
           "没有(返回)?工具调用", "没有返回 ?tool_calls", "模型声明", "声称", "宣布完成", "说(它)?完成", "说做完",
           "信号", "自认为",
           "(不再|没有|不)调(用)?工具", "tool_calls ?(为空|是空的)", "自称",
           "(模型|它)(自己)?(说|认为|觉得|宣称)(自己)?(已经)?(完成|做完|结束|好了)"),
        _c(N_("verifies against evidence"),
           r"\bverif(y|ies|ied|ication)\b", r"\bvalidat", r"\bevidence\b",
           r"\bcheck(s|ed|ing)? (it |that |this )?(against|over)\b", r"\bsources?\b", r"\bconfirm", r"\bprove\b",
           r"\bdouble[- ]check", r"\btests? pass", "验证", "校验", "证据", "来源", "确认", "核对", "核实",
           "检验", "测试通过", "检查结果", "对照"),
    ), 2, N_("Define, per task type, a completion condition the system checks over state and evidence; treat a reply "
          "without tool calls as a claim to verify.")),
    Point("state", N_("Task state outside the transcript, changing every turn"), (
        _c(N_("keeps task state"),
           r"\btask state\b", r"\bstate (object|store|machine|summary|tracking|block|record)\b",
           r"\btrack(s|ing)? (of )?(what|progress)",
           r"\bwhat('s| is| has been| was)? (already )?(done|finished|completed)\b",
           r"\bwhat('s| is) (still )?(missing|left|pending|open)\b",
           r"\b(running |separate )?(record|list|checklist|ledger|notes?) of (what|the work|progress|results)\b",
           "任务状态", "状态摘要", "已完成", "还缺", "缺什么", "未完成事项", "做过什么", "查过什么", "进度",
           "状态机", "待办", "已经(做|查|完成)", "剩下(什么|哪些|的)", "还差", "记(录)?下(哪些|什么)"),
        _c(N_("outside the transcript, versioned"),
           r"\boutside (of )?(the )?(transcript|context|messages|prompt|conversation|chat)\b",
           r"\bseparate(ly)? (from |of )?(the )?(transcript|context|messages|chat|conversation)",
           r"\bstate versions?\b", r"\bversion(ed|s)?\b",
           r"\bnot (just |only )?(in|buried in) the (chat|transcript|history)",
           "状态版本", "单独维护", "独立维护", "版本", "上下文之外", "对话之外",
           "对话(历史|记录)?(之外|以外|外面)", "独立(存储|保存|记录)", "不依赖(对话|上下文|聊天记录)",
           "单独(存|记录|保存)", "外部状态"),
        _c(N_("each turn must change the state"),
           r"\bobservations?\b",
           r"\b(each|every) (turn|step|round|iteration)\b[^.]{0,60}\b(chang|updat|progress|new|add)",
           r"\bstate (change|delta|diff)", r"\bnew (information|facts?|data)\b",
           r"\b(adds?|brings?|learns?) (something|anything) new\b", r"\bnothing new\b", "状态变化", "状态差异",
           "每轮", "新增信息", "没有?新的?(信息|观察|变化|进展|东西|结果)", "新信息", "有没有变化",
           "每一轮", "每一步", "每步", "新的?(观察|结果|进展|事实)"),
    ), 2, N_("Keep what is done and what is missing in a versioned task state outside the transcript, send it each "
          "turn, and expect every useful turn to change it.")),
    Point("errors", N_("Tool errors are classified and routed differently"), (
        _c(N_("classifies tool results"),
           r"\berror (types?|class(es)?|categor|semantic|kinds?|codes?)", r"\bstatus (codes?|class(es)?)\b",
           r"\bclassif", r"\b(kind|type|sort|cause) of (the )?(error|failure|problem)",
           r"\bwhy (it|the tool|the call) failed",
           r"\b(each|every|different) (error|failure)s?\b", "错误类型", "错误语义", "状态类别", "错误分类", "分流",
           "区分错误", "错误原因", "哪种错误", "按错误",
           "错误(码|类别|种类)", "区分(不同的?)?(错误|失败)", "失败原因", "(不同|各种|各类)(的)?错误"),
        _c(N_("retries transient failures"),
           r"\btime ?outs?\b", r"\btimed out\b", r"\btransient\b", r"\brate[- ]limit", r"\btemporar", r"\bflaky\b",
           r"\b(try|tries|trying|tried) (it )?again\b", "超时", "限流", "短暂", "临时", "再试",
           "网络抖动", "瞬时", "偶发", "逾时", "暂时性"),
        _c(N_("asks the user for a missing parameter"),
           r"\bmissing (parameters?|arguments?|inputs?|info|information|details?|fields?|values?)\b",
           r"\bask(s|ing)? (the )?(user|person|customer|human)\b", r"\bclarif", r"\bwaiting[ _]for[ _](the )?user\b",
           r"\b(order|account) (id|number)\b", "澄清", "询问用户", "问用户", "缺少参数", "参数缺失", "向用户确认",
           "等待用户", "让用户(补充|确认|提供)", "缺少?(订单号|参数|信息)",
           "追问用户", "问一下用户", "请用户(补充|提供|确认)", "信息不足", "缺(少)?信息", "缺(少)?订单号", "反问用户"),
        _c(N_("stops on a permission denial"),
           r"\bpermissions?\b", r"\bunauthori[sz]ed\b", r"\bforbidden\b", r"\baccess (is )?(denied|refused)\b",
           r"\bnot allowed\b", r"\bauthori[sz]ation\b", r"\bno (access|rights)\b", "权限(被)?拒绝?", "授权", "无权",
           "拒绝访问",
           "没有权限", "权限不足", "403"),
        _c(N_("treats an empty result with care"),
           r"\bempty (results?|responses?|outputs?|lists?|answers?)\b", r"\bno results?\b", r"\bnot found\b",
           r"\bnone found\b", r"\bfound nothing\b", r"\bcomes? back empty\b", "空结果", "无结果", "未找到",
           "没有结果", "找不到", "没找到", "返回空",
           "结果为空", "空(的)?返回", "查不到", "搜不到"),
        _c(N_("repairs invalid arguments once"),
           r"\binvalid (arguments?|parameters?|inputs?|args)\b",
           r"\b(bad|wrong) (arguments?|parameters?|inputs?|args)\b",
           r"\bschema\b", r"\b(argument|input) validation\b", r"\brepair", r"\bmalformed\b",
           r"\bfix(es|ed)? (the )?(arguments|parameters|input|call)\b", "参数错误", "参数格式", "校验器", "修正",
           "格式错误", "参数不合法",
           "参数(不合法|非法|校验|有误)", "schema", "修复参数", "改正参数"),
        _c(N_("falls back or degrades"),
           r"\bfall ?backs?\b", r"\bdegrad", r"\bbackup (tool|service|provider|source)",
           r"\bswitch(es|ing)? (to )?(another|a different|the backup|an alternative|a second) "
           r"(tool|service|provider|source)",
           r"\bpartial (results?|answers?)\b", r"\banother (tool|source|service|route)\b", "降级", "换路", "备用",
           "切换工具", "换工具", "换一个工具", "部分结果",
           "备选", "替代(工具|方案|服务)", "兜底方案", "换(个|一个)(服务|接口|数据源)"),
        _c(N_("never retries side effects blindly"),
           r"\bside[- ]effects?\b", r"\bidempoten", r"\bwrite (actions?|operations?)\b",
           r"\b(charges?|pays?|refunds?) (someone |the customer )?twice\b", "副作用", "幂等", "写操作", "重复扣款",
           "扣款", "退款", "下单", "支付", "不可逆"),
    ), 3, N_("Give every tool result a status class and route each class its own way: retry transient errors within "
          "a budget, repair invalid arguments once, ask about missing parameters, stop on permission denials, "
          "treat empty results per task, and never retry side effects blindly.")),
    Point("budgets", N_("Several budgets, sized per task type, one shared retry budget"), (
        _c(N_("budgets beyond steps"),
           r"\b(time|token|cost|tool[- ]calls?|wall[- ]?clock|wall[- ]time|context|model[- ]calls?|latency|spend|money"
           r"|call) (budgets?|limits?|caps?|allowance)\b", r"\bbudgets\b", r"\bdeadlines?\b",
           r"\btotal (time|tokens|cost)\b",
           r"\b(limits?|caps?) (on|for) (time|tokens|cost|tool calls|calls|spend|money)",
           r"\bhow (long|much) it (may|can) (run|spend|take)\b", r"\btokens\b", "预算", "耗时", "token", "成本",
           "调用次数", "时间限制", "花费", "费用",
           "时长", "(时间|时长|成本)(上限|限制|预算)", "超时预算"),
        _c(N_("one shared retry budget"),
           r"\bretry budgets?\b", r"\b(shared|global|unified|task[- ]level|single|one|common|overall|total) (retry )?"
           r"(budget|allowance|limit|count)", r"\bretries\b[^.]{0,40}\b(budget|allowance|limit|cap)",
           r"\b(budget|allowance)\b[^.]{0,40}\bretr", r"\bback-?off\b", r"\bexponential\b",
           r"\b(a few|a couple of|two|three|limited) (retries|tries|attempts)\b", "重试预算", "统一预算", "统一核算",
           "退避", "重试次数", "有限重试", "重试(上限|限制)",
           "重试总次数", "(统一|共享|共用|全局)(的)?(一份)?(重试)?(预算|上限|次数)", "有限次(重试)?", "最多重试",
           r"重试\s*\d+\s*次",
           "重试[^。，,；;]{0,6}(预算|上限)"),
        _c(N_("sized per task type, with a basis"),
           r"\bper[- ](task|kind|type)\b", r"\btask types?\b", r"\b(each|every|different) (kind|type|sort) of "
           r"(task|job|request)", r"\b(p9[059]|percentiles?|distribution|baseline|happy path)\b",
           r"\bnormal (runs?|trajector(y|ies)|paths?|tasks?)\b",
           r"\bnot a (magic|fixed|universal|single|random) number\b",
           r"\b(measured|real|past|observed) (runs|tasks|traffic|data)\b", r"\bbasis\b",
           r"\b(based|derived) (on|from) (data|measure|what|real|how|runs)", "任务类型", "真实任务", "分布",
           "正常轨迹", "基线", "固定数字", "按任务", "配置依据", "每种任务", "不同任务", "任务统计",
           "任务(类别|种类)", "不同(类型的?)?任务", "按(任务|场景)", "历史数据", "统计数据", "P9[059]", "百分位",
           "分位数", "实测"),
    ), 2, N_("Name the budgets (steps, time, tokens, tool calls, retries), size each per task type from measured runs, "
          "and make retries one budget for the whole task so fallbacks cannot multiply them.")),
    Point("progress", N_("Repeat and no-progress detection by fingerprint"), (
        _c(N_("detects repeats before the cap"),
           r"\brepeat(ed|s|ing)? (actions?|calls?|tool calls?|steps?|the same)\b",
           r"\bsame (tool|action|call|arguments|inputs|request|query|search)\b", r"\bduplicate (calls?|actions?)\b",
           r"\bloop detection\b", r"\bno[- ]progress\b", r"\bstuck\b", r"\bgoing in circles\b",
           r"\b(detect|notice|spot|catch)(s|es|ed|ing)? (loops?|repeats?|repetition|cycles?)", r"\brepetition\b",
           r"\bnothing (has )?changed\b", "重复", "无进展", "没有进展", "原地打转", "兜圈子", "没有变化",
           "同样的(调用|请求|动作|参数)", "相同的?(调用|请求|动作)", "一样的(调用|参数|请求)", "打转"),
        _c(N_("an action fingerprint"),
           r"\bfingerprints?\b", r"\bhash(es|ed|ing)?\b", r"\bnormali[sz]ed (arguments|args|parameters|params|inputs)",
           r"\btool name\b",
           r"\b(tool|name) (and|\+|,|with) (its |the )?(normali[sz]ed )?(arguments|args|parameters|inputs)",
           r"\bsame (inputs|arguments|parameters)\b", "指纹", "规范化参数", "参数规范化", "哈希", "工具名", "相同参数",
           "同样的参数",
           "签名", r"工具名?(称)?(和|加|\+|、|与)(规范化的?)?参数", "参数哈希", "去重键"),
        _c(N_("lets a legitimate retry through"),
           r"\blegitimate retr", r"\breasonable retr", r"\bvalid retr", r"\bretryable\b",
           r"\b(a|one|first|second) (timeout|failure|try|attempt)\b[^.]{0,60}\b(succe|fine|ok|allowed|works)",
           r"\bnot every repeat\b", r"\bdistinguish\b[^.]{0,40}\bretr", r"\bretr(y|ies)\b[^.]{0,30}\bnot (a )?loops?",
           r"\b(second|another) (try|attempt) after a (timeout|failure)\b",
           r"\bretr(y|ies) after a (timeout|failure)\b",
           "合理重试", "可重试", "误判", "超时后的?重试", "允许有限重试",
           "正常(的)?重试", "允许(一次|少量|有限|几次)?重试", "超时(之)?后(再|的)?(试|重试)", "区分(重试|重复)"),
    ), 2, N_("Fingerprint each action (tool, normalised arguments, progress version) and stop when it repeats with no "
          "new observation — while letting a retry after a transient failure through.")),
    Point("statuses", N_("Distinct stop statuses, for the user and for the system"), (
        _c(N_("names several endings"),
           r"\bwaiting[ _]for[ _](the )?(user|input|an answer)\b", r"\bpartial(ly)?[ _]complet",
           r"\bpartial (results?|success|answers?)", r"\bhand(ed|s)?[ _-]?off\b",
           r"\bhand(ed|s)? (it )?(over|off) to\b", r"\b(to|for) a (human|person)\b",
           r"\bhuman[- ](in[- ]the[- ]loop|review|takeover|handoff)\b", r"\bescalat", r"\bcancel",
           r"\bbudget[ _]exhausted\b", r"\b(stop|exit|terminal|end(ing)?) (status(es)?|states?|reasons?)\b",
           r"\bunrecoverable\b", r"\bgive up\b|\bgave up\b", r"\bnamed status\b", "等待用户", "部分完成", "转人工",
           "人工接管", "取消", "预算耗尽", "停止原因", "停止状态", "不可恢复", "交给人",
           "人工介入", "人工处理", "交给人工", "(升级|上报)(给|到)人工?", "失败状态", "终止状态", "结束状态",
           "退出状态", "状态码"),
        _c(N_("renders a stop for the user and for the system"),
           r"\buser[- ]facing\b", r"\b(tell|tells|show|explain to|inform|give) the (user|person|customer)\b",
           r"\btold to the user\b", r"\buser messages?\b", r"\bstructured (records?|logs?|status|reasons?)\b",
           r"\bactionable\b", r"\bfor (ops|operators|engineers|the system|the user|the team|on-call)\b",
           r"\b(user|person) can act on\b", r"\bsystem can (count|store|replay)\b",
           r"\b(log|record)(s|ed)? the (reason|cause|status)\b",
           r"\bwhat (got|was|is) done and what('s| is)? (missing|left)\b", "面向用户", "告诉用户", "用户说明",
           "结构化", "可统计", "系统记录", "给用户", "对用户", "对系统",
           "告知用户", "通知用户", "提示用户", "结构化(日志|记录|状态)", "用户(能|可以)?看(得)?懂"),
        _c(N_("never dresses a stop up as success"),
           r"\b(not|never|don't|do not|no|won't|instead of|rather than)\b[^.]{0,50}\b(pretend|fake|dress|disguise|wrap"
           r"|pass\w* off|report|claim|present)\w*\b[^.]{0,30}\b(success|answer|done|succeeded|complete)",
           r"\b(fake|false|pretend(ed)?|dressed[- ]up) (success|answers?)\b", r"\bhonest", "伪成功",
           "(不能|不要|别|不)[^。]{0,12}(包装成|假装|冒充|说成)", "如实",
           "假成功", "伪装成", "当(成|作)成功", "谎报", "装作成功"),
    ), 2, N_("End every run in a named status — succeeded, partially completed, waiting for the user, failed, budget "
          "exhausted, no progress, cancelled, handed off — shown to the user as what is done and missing, and kept "
          "for the system as a structured record; never as a dressed-up answer.")),
    Point("traces", N_("Structured traces, replay and fault-injection regression"), (
        _c(N_("a structured trace per turn"),
           r"\btrac(e|es|ing)\b", r"\blog(s|ging)? (each|every) (turn|step|round)", r"\bstructured (logs?|logging)",
           r"\btrace[_ ]ids?\b", r"\baudit (log|trail)\b",
           r"\b(log|record)(s|ed|ing)? (every|each) (turn|step|round|call|action)",
           "trace", "轨迹", "日志", "每轮记录", "记录每轮", "记下每",
           "链路追踪", "埋点", "trace_id", "记录(下)?每(一)?(轮|步)"),
        _c(N_("replays the same trace"),
           r"\breplay", r"\breproduc", r"\bre-?run (it |them )?(on|with|against) the same\b",
           r"\bsame (inputs?|tool results?|trace)\b", r"\bplay (it )?back\b", "回放", "复现", "重放", "重跑",
           "重演", "重新运行", "再跑一遍", "重放"),
        _c(N_("fault injection and regression"),
           r"\bfault[- ]injection\b", r"\binject(s|ed|ing)? (faults?|failures?|errors?|timeouts?)", r"\bchaos\b",
           r"\bregression", r"\bbefore and after\b", r"\bbefore/after\b", r"\bdiff(s|ing)?\b",
           r"\bsimulat\w* (failures|timeouts|errors|faults|outages)", r"\bfault set\b", "故障注入", "注入故障", "回归",
           "修改前后", "前后对比", "轨迹差异", "模拟(故障|超时|错误)",
           "混沌", "回归测试", "故障演练", "模拟(故障|超时|错误|失败)"),
    ), 2, N_("Write a structured line per turn (state version, action, tool status, state delta, budgets, decision); "
          "review a looping run from its trace, replay the same trace after the fix, and keep a fault-injection "
          "regression set.")),
    Point("context", N_("Context growth and safe compaction"), (
        _c(N_("controls the context"),
           r"\bcontext (growth|window|bloat|size|length|budget)\b", r"\bcompact", r"\bsummari[sz]",
           r"\btrim(s|med|ming)?\b", r"\b(store|keep)s? (large|big) (outputs?|results?) (outside|externally)",
           r"\breferences?\b", "上下文", "压缩", "摘要", "裁剪", "外部存储"),
        _c(N_("keeps constraints through compaction"),
           r"\bhard constraints?\b", r"\bconstraints?\b", r"\bcompaction (check|drops?|loses?)", "硬约束", "约束",
           "不可违反"),
    ), 1, N_("Bonus: say how you keep the context small (store big outputs outside, compact) and that a compaction "
          "must keep the goal, hard constraints, facts with sources and open items."),
          core=False),
    Point("parallel", N_("Parallel calls, late and duplicate results"), (
        _c(N_("handles parallel calls"),
           r"\bparallel\b", r"\bconcurren", r"\bjoin (rule|node|point)\b", r"\bcall ids?\b", "并行", "并发", "汇合"),
        _c(N_("ignores late and duplicate results"),
           r"\blate (results?|events?|arrivals?)\b", r"\barriv\w* late\b", r"\bduplicate (events?|deliver\w*|results?)",
           r"\bidempoten", r"\bcancel(s|led|ling)? (running|in-flight|the) calls?\b", "迟到", "重复投递", "幂等",
           "取消信号"),
    ), 1, N_("Bonus: with parallel calls, give every call an id and a state, join by a rule, cancel what is still "
          "running, and record late or duplicate results without applying them."),
          core=False),
)
"""The points of the 2-minute answer the grader looks for (the last two are bonus points)."""


# =========================================================================== the practice grader: how it reads

MAX_CHARS = 20_000
"""Only the first 20,000 characters of an answer are read (an interview answer is far shorter)."""

LENGTH_FLOOR = 30
"""Fewer spoken words than this (about 12 s) is too short to make a point with its reason: points cap at partly."""

DENSITY_CEILING: dict[str, float] = {"en": 0.6, "zh": 0.7}
"""Above this share of key terms (words in English, characters in Chinese) an answer reads as a keyword list:
points cap at named. Sound answers in our tests stay well below (see tests/test_interview.py)."""

ENUMERATION = 4
"""A sentence that names this many points at once is a list: its names count, its connective explains none."""

_TAIWAN_WORDS = {"调用": "呼叫", "循环": "回圈", "声明": "宣告", "类型": "型别", "参数": "引数", "信息": "资讯",
                 "用户": "使用者", "超时": "逾时", "检测": "侦测", "代码": "程式码", "程序": "程式", "数据": "资料",
                 "默认": "预设", "运行": "执行"}
"""Words Taiwan writes differently (after :func:`to_simplified`, which converts characters, not vocabulary):
a Chinese pattern accepts both, so "詢問使用者" counts as "询问用户"."""
_TAIWAN = re.compile("|".join(_TAIWAN_WORDS))


def _compile(pattern: str) -> re.Pattern[str]:
    """A concept's pattern. An English one reads ``\\b`` and ``\\w`` as ASCII, so "用max_steps兜底" still
    matches; a Chinese one also accepts Taiwan's words (:data:`_TAIWAN_WORDS`)."""
    if not _CJK.search(pattern):
        return re.compile(pattern, re.IGNORECASE | re.ASCII)
    return re.compile(_TAIWAN.sub(lambda m: f"(?:{m[0]}|{_TAIWAN_WORDS[m[0]]})", pattern), re.IGNORECASE)


_COMPILED: dict[str, list[tuple[Concept, list[re.Pattern[str]]]]] = {
    point.key: [(c, [_compile(p) for p in c.patterns]) for c in point.concepts] for point in POINTS
}

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|[。！？；;\n]+|(?<=[.!?])$")
_EN_NEGATION = re.compile(
    r"\b(not(?! (only|just))|never|no(?! (matter|more than))|don't|do not|doesn't|does not|didn't|won't|wouldn't|"
    r"shouldn't|can't|cannot|isn't|aren't|without|needn't|avoid|skip|neither|nor|forget about|pointless|"
    r"unnecessary|overkill|instead of|rather than)\b", re.IGNORECASE)
_EN_SCOPE_END = re.compile(r"[,:()]|\b(but|however|instead(?! of)|rather(?! than)|so|because|which|then|and|while|"
                           r"although|though|yet|unless|if|when)\b", re.IGNORECASE)
_EN_DIAGNOSIS = re.compile(r"\b(because|since|due to|caused by|comes? from|stems? from|results? from|lacks?|"
                           r"(usually|often|typically) (have|has))\b", re.IGNORECASE)
_ZH_NEGATION = re.compile(r"不需要?|不要|不用|无需|无须|不必|没有?必要|用不[着著]|别|从不|绝不|永远不|不会|不能|"
                          r"不应|不该|"
           r"不可|不设|不加|不做|不去|不考虑|不搞|不管|不使用|而不是|(?<!有)没有?|不(?=[^同断仅少久论停止结过但光])")
_ZH_SCOPE_END = re.compile(r"[，,；：:（）()]|但|不过|而是|只|就|所以|因为|然后|再|否则|代替|替代|取代")
_ZH_DIAGNOSIS = re.compile(r"因为|由于|来自|源于|常因|往往|通常|导致|缺少|缺乏|根因|原因是|问题是|出在|多半|大多|常常|"
                           r"一般是|主要是|在于")
_CLAUSE_MARK = re.compile(r"[,，;；:：]")
_EN_WINDOW, _ZH_WINDOW = 7, 10
"""How far a negation reaches: words in English, characters in Chinese."""

_EN_AUX = (
    "is are was were be been being am has have had do does did can could will would shall should may might must "
    "need needs let lets i'd we'd i'll we'll it's that's i'm we're they're don't doesn't won't can't isn't")
_EN_VERBS = (
    "keep check stop retry ask log record track define detect use set count add route replay compare mark save end "
    "fail return treat give tell show make run call send store write read verify look find decide handle limit cap "
    "block pause hand escalate cancel wait try switch fall degrade spend pay reset repair fix reject accept allow "
    "raise report explain say mean know want split size measure derive base tie attach carry put take get go come "
    "change update grow trim compact summarise summarize rerun inject test review inspect notice catch flag guard "
    "wrap hide pretend classify label tag map hash fingerprint stamp persist resume abort quit finish complete "
    "succeed loop spin repeat matter help cost burn waste turn lack forget look hit stay lose tell learn bring "
    "pass sit leave let require happen work own keep believe think claim sound move")
"""Auxiliaries and verbs: a sentence keeps one of them once its key terms are blanked, or it is a list."""
_EN_REASON = re.compile(
    r"\b(because|since|so|otherwise|instead|unless|then|if|when|whenever|until|rather than|means?|meaning|therefore|"
    r"thus|hence|that way|in order to|to avoid|to keep|to stop|else|only when|as long as|before|after|once|"
    r"whereas|as a result|given|which)\b", re.IGNORECASE)
_ZH_VERBS = re.compile(
    r"是|要|会|能|应|该|需|用|让|把|给|做|看|查|问|停|试|换|记|写|读|算|设|加|保|存|留|判|检|验|区分|进入|返回|结束|"
    r"继续|转|交|等|拒|允许|呼叫|定义|维护|追踪|比较|发现|报|告诉|提示|说|标|控制|限制|拆|确认|调|执行|处理|有|拿|放|送|"
    r"跑|管|防|避免|识别|分|走|回|带|列|拦|阻止|切|计|消耗|花|扣|重置|保证|解释|汇总|修|改|定|取|达到|超过|得到|变|出")
_ZH_REASON = re.compile(r"因为|由于|所以|因此|否则|不然|然后|如果|若|一旦|就|才|而是|以免|以便|这样|直到|只有|除非|"
                        r"再|从而|为了|则|时|之后|后|避免|防止|而不是|但|导致|于是|既然|只要|以防|当")


def _as_text(answer: Any) -> str:
    """Any input as text: ``None`` → empty, bytes decoded leniently, anything else through ``str``."""
    if answer is None or answer is ...:
        return ""
    if isinstance(answer, (bytes, bytearray, memoryview)):
        return bytes(answer).decode("utf-8", errors="replace")
    if isinstance(answer, str):
        return answer
    if isinstance(answer, Sequence):
        try:
            return "\n".join(_as_text(part) for part in answer)
        except RecursionError:
            return ""
    try:
        return str(answer)
    except Exception:  # an object whose __str__ fails: grade nothing rather than crash the notebook
        return ""


def _units(text: str) -> int:
    """Spoken length in words: Latin words, plus one word per two Chinese characters."""
    return len(_WORD.findall(text)) + (len(_CJK.findall(text)) + 1) // 2


def _language(text: str) -> Language:
    latin, cjk = sum(1 for w in _WORD.findall(text) if not w.isdigit()), len(_CJK.findall(text))
    if not latin and not cjk:
        return "none"
    if cjk < 2 * latin:
        return "en"
    hant = sum(1 for ch in text if ch in _HANT_ONLY)
    hans = sum(1 for ch in text if ch in _HANS_ONLY)
    return "zh-Hant" if hant > hans else "zh-Hans"


def _is_zh(language: str) -> bool:
    return language.startswith("zh")


@dataclass(frozen=True, slots=True)
class _Sentence:
    start: int
    end: int
    hits: tuple[Hit, ...]
    claim: bool
    reason: bool

    @property
    def points(self) -> frozenset[str]:
        return frozenset(h.point for h in self.hits if not h.negated)


@dataclass(frozen=True, slots=True)
class Hit:
    """Where the answer states (or negates) one concept.

    Attributes:
        point: the point's key.
        concept: the concept's name.
        start: offset in the graded text.
        end: end offset.
        words: the answer's own words there.
        negated: inside the reach of a negation ("never", "不需要"…), so it does not count.
    """

    point: str
    concept: str
    start: int
    end: int
    words: str
    negated: bool


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        if match.start() > start:
            spans.append((start, match.start()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def _negated(sentence: str, start: int) -> bool:
    """Is a key term at ``sentence[start:]`` in the reach of a negation in its own clause?

    A negation reaches a few words forward ("never use *a retry budget*", "不需要*重试预算*") and stops at a
    clause boundary or a connective ("not the cap, but *a completion condition*"). A negation that describes
    a cause does not count ("loops run on because there is no *completion check*").
    """
    words = [m.start() for m in re.finditer(r"\S+", sentence[:start])]
    en_from = words[-_EN_WINDOW] if len(words) >= _EN_WINDOW else 0
    return (_in_reach(sentence, start, max(0, start - _ZH_WINDOW), _ZH_NEGATION, _ZH_SCOPE_END, _ZH_DIAGNOSIS)
            or _in_reach(sentence, start, en_from, _EN_NEGATION, _EN_SCOPE_END, _EN_DIAGNOSIS))


def _in_reach(sentence: str, start: int, window_from: int, cues: re.Pattern[str], scope_end: re.Pattern[str],
              diagnosis: re.Pattern[str]) -> bool:
    last = None
    for cue in cues.finditer(sentence, window_from):
        if cue.end() > start:
            break
        last = cue
    if last is None or scope_end.search(sentence, last.end(), start):
        return False
    clause_start = max((m.end() for m in _CLAUSE_MARK.finditer(sentence, 0, last.start())), default=0)
    return not diagnosis.search(sentence, clause_start, last.start())


def _hits(folded: str, original: str, start: int, end: int) -> list[Hit]:
    """Every key term in the sentence ``folded[start:end]``, each marked negated or not.

    Negations are looked for outside the key terms themselves, so the "without" of "a reply *without tool
    calls* is only a *claim*" negates nothing.
    """
    sentence = folded[start:end]
    matches = [(point.key, concept, m) for point in POINTS for concept, patterns in _COMPILED[point.key]
               for pattern in patterns for m in pattern.finditer(sentence)]
    chars = list(sentence)
    for *_where, m in matches:
        chars[m.start():m.end()] = " " * (m.end() - m.start())
    blanked = "".join(chars)
    return [Hit(key, concept.name, start + m.start(), start + m.end(),
                " ".join(original[start + m.start():start + m.end()].split())[:60],
                concept.negatable and _negated(blanked, m.start()))
            for key, concept, m in matches]


def _rest(text: str, start: int, end: int, hits: Iterable[Hit]) -> str:
    """The sentence with every key term blanked: what is left must carry the verb and the reason."""
    chars = list(text[start:end])
    for hit in hits:
        chars[hit.start - start:hit.end - start] = " " * (hit.end - hit.start)
    return "".join(chars)


_AUX_SET, _VERB_SET = frozenset(_EN_AUX.split()), frozenset(_EN_VERBS.split())


_SUBJECT = re.compile(r"\b(i|we|you|it|they|the (system|agent|loop|controller|model|code|run))\b|我|你|它|咱|系统|模型|"
                      r"agent|智能体|控制器|程序|代码|循环|工具|错误|用户", re.IGNORECASE)
"""A subject: with one, a key term may itself be the verb ("we *retry* timeouts", "我*回放*轨迹", "错误按类型*分流*":
Chinese often fronts the topic instead of naming who acts)."""


def _has_verb(text: str) -> bool:
    if _ZH_VERBS.search(text):
        return True
    for word in _WORD.findall(text.lower()):
        stems = {word, word[:-1], word[:-2], word[:-3], word[:-3] + "y", word[:-2] + "e", word[:-3] + "e"}
        if word in _AUX_SET or stems & _VERB_SET:
            return True
    return False


def _is_claim(sentence: str, rest: str) -> bool:
    """A statement, not a list: a verb outside the key terms, or a subject and a verb anywhere."""
    return _has_verb(rest) or (bool(_SUBJECT.search(rest)) and _has_verb(sentence))


def _read(folded: str, original: str) -> tuple[list[_Sentence], int, int]:
    """Sentences with their key terms, and how many were dropped as repeats and as copies of the question."""
    seen: set[str] = set()
    sentences, repeats, copies = [], 0, 0
    for start, end in _sentence_spans(folded):
        key = " ".join(_WORD.findall(folded[start:end].lower())) + "".join(_CJK.findall(folded[start:end]))
        if not key or key in seen or _copies_question(key):
            repeats += key in seen
            copies += bool(key) and key not in seen
            continue
        seen.add(key)
        hits = tuple(_hits(folded, original, start, end))
        rest = _rest(folded, start, end, hits)
        sentences.append(_Sentence(start, end, hits, _is_claim(folded[start:end], rest),
                                   bool(_EN_REASON.search(rest) or _ZH_REASON.search(rest))))
    return sentences, repeats, copies


_QUESTION_WORDS = frozenset(_WORD.findall(QUESTION.lower())) | frozenset(_CJK.findall(QUESTION_ZH))


def _copies_question(key: str) -> bool:
    words = _WORD.findall(key) + _CJK.findall(key)
    return len(words) >= 3 and sum(w in _QUESTION_WORDS for w in words) >= 0.8 * len(words)


# =========================================================================== the practice grader: the grade


@dataclass(frozen=True, slots=True)
class PointResult:
    """How one point fared.

    Attributes:
        point: the point.
        score: 0–1 — the share of its concepts stated in a sentence, halved when no sentence says why.
        status: covered (1), partly (at least ½), named (less) or missed (0).
        found: (concept name, the answer's words) for each concept stated.
        missing: names of the concepts not stated.
        negated: the answer's words where it argued against this point.
        explained: a sentence stating it also gives a reason or a consequence.
    """

    point: Point
    score: float
    status: PointStatus
    found: tuple[tuple[str, str], ...]
    missing: tuple[str, ...]
    negated: tuple[str, ...]
    explained: bool


Flag = Literal["question", "keywords", "short", "negated", "repeated", "enumeration"]


def _status(score: float) -> PointStatus:
    return "covered" if score >= 1 else "partly" if score >= 0.5 else "named" if score > 0 else "missed"


def _point_result(point: Point, sentences: Sequence[_Sentence], cap: float) -> PointResult:
    found: dict[str, str] = {}
    explained = False
    negated = []
    for sentence in sentences:
        for hit in (h for h in sentence.hits if h.point == point.key):
            if hit.negated:
                negated.append(hit.words)
            elif sentence.claim:
                found.setdefault(hit.concept, hit.words)
                explained |= sentence.reason and len(sentence.points) < ENUMERATION
    coverage = min(len(found), point.need) / point.need
    score = min(cap, coverage * (1.0 if explained else 0.5))
    missing = tuple(c.name for c in point.concepts if c.name not in found)
    return PointResult(point, score, _status(score), tuple(found.items()), missing, tuple(dict.fromkeys(negated)),
                       explained)


@dataclass(frozen=True)
class Grade:
    """The checklist for one answer — a heuristic; renders as HTML in JupyterLab and as text elsewhere.

    Attributes:
        text: the answer as read (normalised, possibly shortened).
        results: one :class:`PointResult` per point, core points first.
        language: ``en``, ``zh-Hans``, ``zh-Hant`` or ``none``: the advice comes in this language.
        attempted: False for an empty answer.
        flags: why points were capped or not counted (a keyword list, too short, negations…).
        density: the share of the answer that is key terms.
        words: spoken length of what was graded (repeats and copies of the question left out).
    """

    text: str
    results: tuple[PointResult, ...]
    language: Language
    attempted: bool
    flags: tuple[Flag, ...] = ()
    density: float = 0.0
    words: int = 0

    @property
    def core(self) -> tuple[PointResult, ...]:
        """Results of the core points."""
        return tuple(r for r in self.results if r.point.core)

    def _keys(self, status: PointStatus) -> list[str]:
        return [r.point.key for r in self.core if r.status == status]

    @property
    def covered(self) -> list[str]:
        """Keys of the core points covered."""
        return self._keys("covered")

    @property
    def partly(self) -> list[str]:
        """Keys of the core points partly covered."""
        return self._keys("partly")

    @property
    def named(self) -> list[str]:
        """Keys of the core points only named (a term without its claim and reason)."""
        return self._keys("named")

    @property
    def missed(self) -> list[str]:
        """Keys of the core points missed."""
        return self._keys("missed")

    @property
    def bonus(self) -> list[str]:
        """Keys of the bonus points the answer touches."""
        return [r.point.key for r in self.results if not r.point.core and r.score > 0]

    @property
    def score(self) -> float:
        """The sum of the core points' scores (0 to the number of core points)."""
        return round(sum(r.score for r in self.core), 3)

    @property
    def percent(self) -> int:
        """The score as a percentage of the core points."""
        return round(100 * self.score / len(self.core))

    @property
    def cap_only(self) -> bool:
        """The answer names the step cap and states nothing else of the 2-minute answer."""
        fuse, *others = self.core
        return (self.attempted and any(name == "names the step cap" for name, _ in fuse.found)
                and not any(r.found for r in others))

    def get(self, key: str) -> PointResult:
        """The result of one point by key."""
        for result in self.results:
            if result.point.key == key:
                return result
        raise DrillError(f"grade.get: no point {key!r}; expected one of: {', '.join(p.key for p in POINTS)}")

    def say(self, key: str, **values: Any) -> str:
        """One message of the grader, in the answer's language."""
        return _say(self.language, key, **values)

    def verdict(self) -> str:
        """One sentence on the whole answer, in the answer's language."""
        if not self.attempted:
            return self.say("question_only" if "question" in self.flags else "not_attempted")
        if self.cap_only:
            return self.say("cap_only")
        return self.say("verdict", covered=len(self.covered), total=len(self.core), partly=len(self.partly),
                        named=len(self.named), missed=len(self.missed), percent=self.percent)

    def notes(self) -> list[str]:
        """One line per flag: why points were capped or not counted."""
        negated = [w for r in self.results for w in r.negated]
        values = {"density": round(100 * self.density), "words": self.words, "floor": LENGTH_FLOOR,
                  "negated": "; ".join(f"“{w}”" for w in negated[:4])}
        return [self.say(f"flag_{flag}", **values) for flag in self.flags]

    def title(self, point: Point) -> str:
        """A point's title in the answer's language."""
        return point.title if not _is_zh(self.language) else _script(point.title_zh, self.language)

    def concept(self, point: Point, name: str) -> str:
        """A concept's name in the answer's language."""
        concept = next(c for c in point.concepts if c.name == name)
        return concept.name if not _is_zh(self.language) else _script(concept.name_zh, self.language)

    def advice(self, point: Point) -> str:
        """What to add to a point, in the answer's language."""
        return point.advice if not _is_zh(self.language) else _script(point.advice_zh, self.language)

    def __str__(self) -> str:
        lines = [f"{self.say('heading')} — {self.verdict()}"]
        lines += [f" ! {note}" for note in self.notes()]
        for r in self.results if self.attempted else self.core:
            tag = "" if r.point.core else f" ({self.say('bonus')})"
            lines.append(f" {_MARKS[r.status][0]} {self.title(r.point)}{tag}")
            lines += [f"     {self.say('found')}: {self.concept(r.point, n)} — “{w}”" for n, w in r.found]
            lines += [f"     {self.say('negated')}: “{words}”" for words in r.negated]
            if self.attempted and r.point.core and r.status != "covered":
                lines.append(f"     {self.say('add')}: {self.advice(r.point)}")
        lines.append(f"{self.say('note')}: {self.say('heuristic')}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        rows = []
        for r in self.results if self.attempted else self.core:
            mark, color = _MARKS[r.status]
            spans = "".join(f"<div><small>{self.say('found')}: {html.escape(self.concept(r.point, n))} — "
                            f"“<mark>{html.escape(w)}</mark>”"
                            "</small></div>" for n, w in r.found)
            spans += "".join(f"<div><small>{self.say('negated')}: “<s>{html.escape(w)}</s>”</small></div>"
                             for w in r.negated)
            if self.attempted and r.point.core and r.status != "covered":
                spans += f"<div><small><i>{self.say('add')}:</i> {html.escape(self.advice(r.point))}</small></div>"
            tag = "" if r.point.core else f" <small>({self.say('bonus')})</small>"
            rows.append(f"<tr><td style='color:{color};font-weight:bold;font-size:18px;vertical-align:top'>{mark}"
                        f"</td><td style='text-align:left'><b>{html.escape(self.title(r.point))}</b>{tag}{spans}"
                        "</td></tr>")
        notes = "".join(f"<div style='color:#b35900'>! {html.escape(n)}</div>" for n in self.notes())
        color = "#57606a" if not self.attempted else ("#b35900" if self.cap_only else "#0072B2")
        return (f"<div style='border-left:4px solid {color};padding:4px 8px;font-size:15px'>"
                f"<b style='color:{color}'>{html.escape(self.verdict())}</b>{notes}<table>{''.join(rows)}</table>"
                f"<div style='color:#555'><small><b>{self.say('heuristic_label')}</b> "
                f"{html.escape(self.say('heuristic'))}</small></div></div>")


_MARKS: dict[PointStatus, tuple[str, str]] = {
    "covered": ("✓", "#1a7f37"),
    "partly": ("~", "#9a6700"),
    "named": ("·", "#b35900"),
    "missed": ("✗", "#b35900"),
}


def grade(answer: Any) -> Grade:
    """Grade a practice answer point by point — a heuristic that reads sentences, not tokens.

    A concept counts only where a sentence states it: the sentence must keep a verb once its key terms are
    blanked out (a keyword list keeps none), and the concept must lie outside a negation's reach ("I would
    never use *a retry budget*", "不需要*重试预算*"). A point is covered when enough of its concepts are
    stated and one of those sentences also gives a reason or a consequence ("because", "so", "otherwise",
    "因为", "否则", "然后"…); otherwise it is partly covered or only named. Repeated sentences and copies of
    the question are read once or not at all, an answer shorter than :data:`LENGTH_FLOOR` words caps every
    point at partly, and one whose key-term density passes :data:`DENSITY_CEILING` caps them at named.
    Traditional Chinese is converted to Simplified first (:func:`to_simplified`, OpenCC ``t2s``), so it grades
    exactly as its Simplified equivalent; the advice comes in the answer's language, from the ``interview``
    catalog (English byte for byte as written here; Chinese in the answer's script).

    Never raises: ``None``, bytes, numbers and lists are read as text; only the first :data:`MAX_CHARS`
    characters are read.

    Example:
        >>> grade("Set max_steps to 10.").cap_only
        True
    """
    text = unicodedata.normalize("NFKC", _as_text(answer))[:MAX_CHARS]
    folded = _fold(text)
    sentences, repeats, copies = _read(folded, text)
    graded = "".join(folded[s.start:s.end] for s in sentences)
    words = _units(graded)
    language = _language("".join(text[s.start:s.end] for s in sentences)) if sentences else _language(text)
    density = _density(folded, sentences)
    flags: list[Flag] = []
    if copies and not sentences:
        flags.append("question")
    if sentences and words < LENGTH_FLOOR:
        flags.append("short")
    if density > DENSITY_CEILING["zh" if _is_zh(language) else "en"]:
        flags.append("keywords")
    flags += ["negated"] if any(h.negated for s in sentences for h in s.hits) else []
    flags += ["repeated"] if repeats else []
    flags += ["enumeration"] if any(len(s.points) >= ENUMERATION and s.claim for s in sentences) else []
    cap = 0.1 if "keywords" in flags else 0.5 if "short" in flags else 1.0
    results = tuple(_point_result(point, sentences, cap) for point in POINTS)
    return Grade(text, results, language, bool(sentences), tuple(flags), density, words)


def _density(folded: str, sentences: Sequence[_Sentence]) -> float:
    """The share of spoken units (words; characters in Chinese) that lie inside key terms."""
    total = inside = 0
    for s in sentences:
        covered = [False] * (s.end - s.start)
        for hit in s.hits:
            covered[hit.start - s.start:hit.end - s.start] = [True] * (hit.end - hit.start)
        for unit in re.finditer(f"{_WORD.pattern}|{_CJK.pattern}", folded[s.start:s.end]):
            total += 1
            inside += covered[unit.start()]
    return inside / total if total else 0.0


# =========================================================================== the grader's words, in two languages

_GRADER_SAYS: dict[str, str] = {
    "heading": N_("Practice check"),
    "not_attempted": N_("Not attempted: write your answer, then check it."),
    "question_only": N_("This only repeats the question: answer it in your own words."),
    "cap_only": N_("This answer names only the fuse (a step cap). An interviewer will ask: what number, why, and "
                   "what does the user get when it is hit? Add the points below."),
    "verdict": N_("{covered} of {total} points made with a reason, {partly} partly, {named} only named, {missed} "
                  "missed — about {percent}%."),
    "flag_question": N_("Sentences that repeat the question are not graded."),
    "flag_keywords": N_("About {density}% of this answer is key terms: it reads like a keyword list. Make each "
                        "point a sentence that says what you do and why."),
    "flag_short": N_("Only {words} words (under {floor}): too short to give each point its reason."),
    "flag_negated": N_("These parts argue against a point, so they do not count: {negated}."),
    "flag_repeated": N_("Repeated sentences are read once."),
    "flag_enumeration": N_("A sentence that lists many points names them but explains none: give the important "
                           "ones a sentence of their own, with the reason."),
    "found": N_("found"), "negated": N_("negated"), "add": N_("add"), "bonus": N_("bonus"), "note": N_("Note"),
    "heuristic_label": N_("This is a heuristic."),
    "heuristic": N_("It reads sentences, not meaning: a concept counts where a sentence states it with a verb and "
                    "outside a negation, and a point needs its reason. Careful wording can still fool it, and it "
                    "misses ideas phrased in words it does not know. Use it to find what you forgot to say, then "
                    "compare with the 2-minute answer."),
}
"""Every sentence the grader says, in English: each a message of the ``interview`` catalog, looked up in the
answer's language when it is said (:func:`_say`)."""


class _Catalog(Mapping[str, str]):
    """The grader's sentences in one language, looked up in the catalog on every read."""

    def __init__(self, language: i18n.Language) -> None:
        self._language = language

    def __getitem__(self, key: str) -> str:
        return translate(_GRADER_SAYS[key], self._language)

    def __iter__(self) -> Iterator[str]:
        return iter(_GRADER_SAYS)

    def __len__(self) -> int:
        return len(_GRADER_SAYS)


MESSAGES: dict[str, Mapping[str, str]] = {"en": _GRADER_SAYS, "zh": _Catalog("zh")}
"""Every sentence the grader says, by key: English as written, Simplified Chinese from the catalog."""

HEURISTIC_NOTE = MESSAGES["en"]["heuristic"]
"""Shown with every grade: what the grader can and cannot judge."""


def _say(language: str, key: str, **values: Any) -> str:
    """One of the grader's sentences in the answer's language, its placeholders filled (English byte for byte)."""
    if not _is_zh(language):
        return _GRADER_SAYS[key].format(**values)
    return _script(translate(_GRADER_SAYS[key], "zh"), language).format(**values)


@cache
def _opencc(config: str) -> Any:
    import opencc  # opencc-python-reimplemented, a dependency: loaded when Chinese is first read or said

    return opencc.OpenCC(config)


def to_simplified(text: str) -> str:
    """Traditional Chinese to Simplified (OpenCC ``t2s``), curly apostrophes to straight: the one conversion
    the grader applies before matching, so a Traditional answer grades as its Simplified equivalent.

    The result has the length of ``text``, so offsets found in it point at the learner's own words (should a
    phrase ever convert to another length, each character is converted on its own instead).
    """
    text = text.replace("’", "'").replace("‘", "'")
    if not _CJK.search(text):
        return text
    converted = _opencc("t2s").convert(text)
    if len(converted) == len(text):
        return converted
    return "".join(c if len(c := _opencc("t2s").convert(ch)) == 1 else ch for ch in text)


_fold = to_simplified
"""The grader's older name for :func:`to_simplified`."""


def _script(text: str, language: str) -> str:
    """Simplified text in the answer's script: OpenCC ``s2tw`` for a ``zh-Hant`` answer, else unchanged."""
    return _opencc("s2tw").convert(text) if language == "zh-Hant" else text


# =========================================================================== the two widgets


class Practice:
    """The practice box: write an answer, press the button, read the checklist (a heuristic, and it says so).

    Its labels are in the package's language; the checklist is in the language of the answer.
    """

    def __init__(self, answer: str = "") -> None:
        import ipywidgets as w

        self.question = w.HTML(f"<div style='font-size:16px'><b>{html.escape(QUESTION)}</b><br>"
                               f"<span style='color:#555'>{html.escape(QUESTION_ZH)}</span></div>")
        self.answer = w.Textarea(value=answer, placeholder=_("Your answer, in English or Chinese…"),
                                 layout=w.Layout(width="100%", height="180px"))
        self.button = w.Button(description=_("Check my answer"), button_style="primary")
        self.result = w.HTML()
        for widget, name in ((self.answer, "answer"), (self.button, "check"), (self.result, "result")):
            widget.add_class(f"agentloops-practice-{name}")
        self.box = w.VBox([self.question, self.answer, self.button, self.result])
        self.box.add_class("agentloops-practice")
        self.button.on_click(lambda _button: self.refresh())
        self.state = self.refresh()

    def check(self, text: str | None = None) -> Grade:
        """Grade ``text`` (or what is in the box) and show the checklist; returns the grade."""
        if text is not None:
            self.answer.value = str(text)
        return self.refresh()

    def refresh(self) -> Grade:
        """Grade the current answer and redraw."""
        self.state = grade(self.answer.value)
        self.result.value = self.state._repr_html_()
        return self.state

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.box._repr_mimebundle_(**kwargs)


def practice(answer: str = "") -> Practice:
    """Build the practice box; it grades ``answer`` once (empty: not attempted), so "Run all" needs no click."""
    return Practice(answer)


@dataclass(frozen=True, slots=True)
class Pace:
    """One spoken attempt measured against its target.

    Attributes:
        words: spoken words in the script (Chinese characters for a Chinese script: see :func:`word_count`).
        seconds: how long it took.
        target_s: the target length in seconds.
        language: the script's language: it sets the pace to compare with and the verdict's words.
    """

    words: int
    seconds: float
    target_s: float
    language: i18n.Language = "en"

    @property
    def wpm(self) -> float:
        """Words (in Chinese: characters) a minute."""
        return self.words * 60 / self.seconds if self.seconds > 0 else 0.0

    @property
    def within(self) -> bool:
        """Finished inside the target."""
        return self.seconds <= self.target_s

    def words_to_cut(self) -> int:
        """How many words to drop to fit the target at this pace (0 when it fits)."""
        return 0 if self.within else max(0, round(self.words - self.target_s * self.wpm / 60))

    def verdict(self) -> str:
        """One sentence: the time, the pace, and what to change."""
        if self.language == "en":
            said = f"{self.seconds:.0f} s for {self.words} words ({self.wpm:.0f} words a minute)"
            high = SPEAKING_PACE_WPM[1]
            if self.within:
                hint = " — fast: slow down so the interviewer can follow." if self.wpm > high + 30 else "."
                return f"{said}: within the {self.target_s:.0f} s target{hint}"
            return (f"{said}: {self.seconds - self.target_s:.0f} s over the {self.target_s:.0f} s target — cut about "
                    f"{self.words_to_cut()} words, or speak nearer {high} words a minute.")
        high = speaking_pace(self.language)[1]
        values = {"seconds": f"{self.seconds:.0f}", "words": self.words, "rate": f"{self.wpm:.0f}",
                  "target": f"{self.target_s:.0f}", "over": f"{self.seconds - self.target_s:.0f}",
                  "cut": self.words_to_cut(), "high": high}
        if self.within:
            fast = self.wpm > high * 1.2
            message = (N_("{seconds} s for {words} characters ({rate} a minute): within the {target} s target — fast: "
                          "slow down so the interviewer can follow.") if fast else
                       N_("{seconds} s for {words} characters ({rate} a minute): within the {target} s target."))
            return translate(message, self.language).format(**values)
        return translate(N_("{seconds} s for {words} characters ({rate} a minute): {over} s over the {target} s "
                            "target — cut about {cut} characters, or speak nearer {high} a minute."),
                         self.language).format(**values)


def pace(words: int, seconds: float, target_s: float, *, language: str | None = None) -> Pace:
    """Measure one attempt; raises :class:`DrillError` for a negative count or time, or a target not above 0.

    ``language`` is the script's (default: the package's): English counts words, Chinese counts characters.
    """
    if words < 0 or seconds < 0 or target_s <= 0:
        raise DrillError(f"pace: words={words!r}, seconds={seconds!r}, target_s={target_s!r}; expected words and "
                         "seconds of at least 0 and a target above 0")
    return Pace(int(words), float(seconds), float(target_s), _drill_language(language, "pace"))


OWN_WORDS = "my own answer"
"""The timer's choice for the candidate's own text (an id: the dropdown shows it translated)."""

_OWN_WORDS_TITLE = N_("my own answer")


class SpeakingTimer:
    """A spoken-practice timer: pick a script, press Start, say it aloud, press Stop, read the pace.

    The scripts and the pace are in ``language`` (default: the package's): the Chinese timer offers the Chinese
    scripts, counted in characters. The clock is injectable so tests can drive it without waiting; nothing runs
    until a button is pressed.
    """

    def __init__(self, script: str = "30-second answer", *, clock: Callable[[], float] = time.monotonic,
                 language: str | None = None) -> None:
        import ipywidgets as w

        if script not in (*SCRIPTS, OWN_WORDS):
            raise DrillError(f"speaking_timer: script {script!r} is unknown; expected one of: "
                             f"{', '.join((*SCRIPTS, OWN_WORDS))}")
        self.language = _drill_language(language, "speaking_timer")
        self._scripts = SCRIPTS_ZH if self.language == "zh" else SCRIPTS
        self._clock = clock
        self._started: float | None = None
        self.last: Pace | None = None
        say = self._say
        self.script = w.Dropdown(options=[(say(_SCRIPT_TITLES[name]), name) for name in self._scripts]
                                 + [(say(_OWN_WORDS_TITLE), OWN_WORDS)], value=script, description=say(N_("Say aloud")))
        self.own = w.Textarea(placeholder=say(N_("Paste your own answer here, then press Start.")),
                              layout=w.Layout(width="100%", height="90px"))
        self.start_button = w.Button(description=say(N_("Start")), button_style="primary")
        self.stop_button = w.Button(description=say(N_("Stop")), disabled=True)
        self.text = w.HTML()
        self.result = w.HTML()
        self.start_button.on_click(lambda _button: self.start())
        self.stop_button.on_click(lambda _button: self.stop())
        self.script.observe(lambda _change: self._draw(), names="value")
        self.own.observe(lambda _change: self._draw(), names="value")
        self.box = w.VBox([self.script, self.own, w.HBox([self.start_button, self.stop_button]), self.text,
                           self.result])
        self.box.add_class("agentloops-timer")
        self._draw()

    def _say(self, message: str) -> str:
        return translate(message, self.language)

    def target(self) -> tuple[str, float]:
        """The text to say and its target in seconds (own words: 30 s up to 100 words, else 2 minutes; in
        Chinese the same at the Chinese pace, 156 characters)."""
        if self.script.value == OWN_WORDS:
            text = str(self.own.value)
            short = round(100 * speaking_pace(self.language)[1] / SPEAKING_PACE_WPM[1])
            return text, 30.0 if word_count(text) <= short else 120.0
        return self._scripts[self.script.value]

    def start(self) -> None:
        """Start timing."""
        self._started = self._clock()
        self.start_button.disabled, self.stop_button.disabled = True, False
        speaking = self._say(N_("Speaking… press Stop when you finish."))
        self.result.value = f"<i>{html.escape(speaking)}</i>"

    def stop(self) -> Pace | None:
        """Stop timing and show the pace (``None`` if it was not started)."""
        if self._started is None:
            return None
        text, target = self.target()
        self.last = pace(word_count(text), max(0.0, self._clock() - self._started), target, language=self.language)
        self._started = None
        self.start_button.disabled, self.stop_button.disabled = False, True
        color = "#1a7f37" if self.last.within else "#b35900"
        self.result.value = f"<b style='color:{color}'>{html.escape(self.last.verdict())}</b>"
        return self.last

    def _draw(self) -> None:
        text, target = self.target()
        words = word_count(text)
        low, high = speaking_pace(self.language)
        self.own.layout.display = None if self.script.value == OWN_WORDS else "none"
        if self.language == "en":
            note = (f"{words} words · target {target:.0f} s · at {low}–{high} words a minute it takes "
                    f"{words * 60 / high:.0f}–{words * 60 / low:.0f} s")
        else:
            note = self._say(N_("{words} characters · target {target} s · at {low}–{high} characters a minute it "
                                "takes {fast}–{slow} s")).format(words=words, target=f"{target:.0f}", low=low,
                                                                 high=high, fast=f"{words * 60 / high:.0f}",
                                                                 slow=f"{words * 60 / low:.0f}")
        self.text.value = f"<div style='max-width:760px'>{html.escape(text)}</div><small>{html.escape(note)}</small>"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.box._repr_mimebundle_(**kwargs)


def speaking_timer(script: str = "30-second answer", *, clock: Callable[[], float] = time.monotonic,
                   language: str | None = None) -> SpeakingTimer:
    """Build the spoken-practice timer (see :class:`SpeakingTimer`); it draws once and waits for Start."""
    return SpeakingTimer(script, clock=clock, language=language)


# =========================================================================== Simplified and Traditional characters

_FOLD_PAIRS = (
    "丟丢並并乹干亁干亂乱亝斋亞亚佔占併并來来侖仑侶侣俠侠俻备倆俩倉仓個个們们倫伦偉伟側侧偵侦偽伪傑杰傘伞備备傭佣"
    "傳传債债傷伤傾倾僅仅働动僑侨僕仆僞伪僥侥僱雇價价儀仪億亿儈侩儉俭儌侥儘尽償偿優优儲储兇凶兌兑兒儿內内兩两冊册"
    "冪幂凈净凍冻凜凛凱凯凴凭別别刪删則则剎刹剏创剙创剛刚剝剥剮剐創创剷铲劃划劇剧劉刘劊刽劍剑劑剂劒剑勁劲動动務务"
    "勛勋勝胜勞劳勢势勳勋勵励勸劝勻匀匯汇區区協协卻却厠厕厤历厭厌厰厂厲厉參参叄叁叢丛吳吴吶呐呂吕員员唘启問问啓启"
    "啞哑啟启啣衔喚唤喪丧喫吃喬乔單单喲哟嗆呛嗎吗嗚呜嘆叹嘔呕嘗尝嘩哗嘯啸噁恶噓嘘噴喷噸吨噹当嚇吓嚐尝嚙啮嚨咙嚴严"
    "囂嚣囌苏囑嘱囓啮囪囱國国圍围園园圓圆圖图團团垻坝埰采執执堅坚堯尧報报場场塊块塗涂塢坞塲场塵尘塹堑墊垫墜坠墮堕"
    "墰坛墳坟墻墙墾垦壇坛壓压壘垒壜坛壞坏壟垄壩坝壯壮壺壶壽寿夠够夢梦夥伙夾夹奧奥奪夺奬奖奮奋妝妆娛娱婁娄婦妇媍妇"
    "媽妈嬌娇嬰婴嬸婶嬾懒孫孙學学孿孪宮宫寀采寑寝寢寝實实寧宁審审寫写寬宽寳宝寵宠寶宝將将專专尋寻對对導导尒尔尟鲜"
    "尠鲜屆届屍尸屜屉屢屡層层屬属岡冈峯峰島岛峽峡崗岗崙仑嵗岁嶃崭嶄崭嶺岭嶼屿嶽岳巋岿巒峦巖岩帋纸帥帅師师帳帐帶带"
    "幀帧幇帮幚帮幟帜幣币幫帮幹干幾几庫库廁厕廂厢廄厩廈厦廐厩廕荫廚厨廟庙廠厂廢废廣广廬庐廳厅張张強强彆别彈弹彌弥"
    "彎弯彔录彙汇彥彦後后徑径從从復复徵征徹彻恆恒恥耻悅悦悶闷悽凄惡恶惱恼愛爱慄栗態态慘惨慙惭慚惭慣惯慫怂慮虑慴慑"
    "慶庆憂忧憊惫憐怜憑凭憚惮憤愤憫悯憲宪憶忆懇恳應应懲惩懶懒懷怀懸悬懼惧懾慑戀恋戰战戲戏戶户拋抛挾挟掃扫掄抡掙挣"
    "掛挂採采揀拣揚扬換换揮挥搆构損损搖摇搗捣搶抢摟搂摯挚摳抠摻掺撈捞撐撑撓挠撣掸撥拨撫抚撲扑撻挞撾挝撿捡擁拥擄掳"
    "擇择擊击擋挡擔担擕携據据擠挤擣捣擧举擬拟擯摈擰拧擱搁擲掷擴扩擺摆擻擞擾扰攆撵攏拢攔拦攙搀攜携攝摄攢攒攣挛攤摊"
    "攩挡攪搅攬揽敍叙敗败敘叙敵敌數数敺驱斂敛斃毙斬斩斷断於于旤祸旹时時时晉晋晝昼暈晕暢畅暫暂曆历曉晓曠旷曡叠曬晒"
    "書书會会朮术東东杴锨枱台柵栅條条棄弃棗枣棟栋棧栈棲栖椷缄椾笺楊杨楓枫業业極极榦干榮荣構构槍枪槓杠槳桨樁桩樂乐"
    "樓楼標标樞枢樣样樸朴樹树橋桥機机橢椭橫横檔档檢检檯台檸柠檻槛櫃柜櫥橱櫻樱欄栏權权欝郁欽钦歎叹歐欧歛敛歡欢歲岁"
    "歴历歷历歸归殘残殲歼殺杀殻壳殼壳毀毁毆殴毧绒氈毡氊毡氣气氫氢決决沒没沖冲況况洶汹涼凉淒凄淚泪淨净淪沦淵渊淺浅"
    "渙涣減减渦涡測测渾浑湊凑湧涌湯汤準准溝沟溫温溼湿滄沧滅灭滌涤滙汇滬沪滯滞滲渗滷卤滾滚滿满漁渔漚沤漢汉漣涟漬渍"
    "漲涨漸渐漿浆潑泼潔洁潛潜潤润潰溃澀涩澁涩澆浇澇涝澗涧澤泽澱淀濁浊濃浓濇涩濕湿濘泞濟济濤涛濫滥濰潍濱滨濶阔濺溅"
    "濾滤瀉泻瀕濒瀝沥瀰弥瀾澜灑洒灘滩灣湾灤滦災灾為为烏乌烖灾烴烃無无煉炼煙烟煥焕煩烦熒荧熱热熾炽燈灯燒烧燙烫營营"
    "燦灿燬毁燭烛燴烩燻熏燼烬爍烁爐炉爛烂爭争爲为爺爷爾尔牀床牆墙牋笺牐闸牽牵犢犊犧牺狀状狹狭狽狈猙狰猶犹獄狱獅狮"
    "獎奖獘毙獨独獰狞獲获獵猎獸兽獺獭獻献現现琖盏琺珐瑣琐瑤瑶瑩莹瑪玛環环瓊琼甎砖甕瓮甞尝產产産产甦苏甯宁畂亩畆亩"
    "畝亩畢毕畫画畮亩異异畵画當当疇畴疊叠痙痉瘋疯瘍疡瘓痪瘡疮瘧疟療疗癈废癟瘪癡痴癢痒癬癣癰痈癱瘫發发皁皂皚皑皺皱"
    "盜盗盞盏盡尽監监盤盘盧卢盪荡眎视眡视眾众睜睁瞞瞒矚瞩矯矫硯砚碩硕確确碼码磚砖礆硷礎础礙碍礦矿礫砾礬矾祕秘祿禄"
    "禍祸禮礼禱祷禿秃稅税稈秆種种稱称積积穎颖穢秽穨颓穩稳穫获窩窝窪洼窮穷窯窑窰窑窺窥竄窜竅窍竈灶竊窃竝并竪竖競竞"
    "筆笔筍笋箇个箋笺節节範范築筑篩筛簍篓簡简簽签簾帘籃篮籌筹籠笼籤签籬篱籮箩籲吁粧妆粵粤糞粪糧粮糰团糾纠紀纪約约"
    "紅红紉纫紋纹納纳紐纽純纯紗纱紙纸級级紛纷紡纺細细紳绅紹绍終终組组絆绊結结絕绝絛绦絞绞絡络絢绚給给絨绒統统絲丝"
    "絶绝絹绢綁绑綉绣綏绥經经綜综綠绿綢绸綫线維维綱纲網网綳绷綴缀綸纶綻绽綽绰綿绵緊紧緑绿緒绪緘缄線线緜绵緝缉緞缎"
    "締缔緣缘編编緩缓緬缅緯纬練练縛缚縣县縧绦縫缝縮缩縱纵縴纤縷缕總总績绩繃绷織织繕缮繖伞繞绕繡绣繩绳繪绘繭茧繳缴"
    "繹绎繼继續续纏缠纓缨纖纤纜缆缐线缽钵罈坛罋瓮罎坛罰罚罵骂罷罢罸罚羅罗羢绒羣群羨羡義义習习翹翘耡锄聖圣聞闻聯联"
    "聰聪聲声聳耸聶聂職职聽听聾聋肅肃脅胁脇胁脈脉脣唇脫脱脹胀腎肾腦脑腫肿腳脚腸肠膓肠膚肤膠胶膩腻膽胆膿脓臈腊臉脸"
    "臍脐臘腊臟脏臥卧臨临臺台與与興兴舉举舊旧舖铺舘馆艙舱艦舰艱艰艷艳茲兹荊荆莊庄莖茎莢荚華华菸烟萊莱萬万葉叶葠参"
    "葦苇葯药葷荤蒼苍蓋盖蓡参蓮莲蔘参蔣蒋蔥葱蔭荫蕩荡蕪芜蕭萧薊蓟薔蔷薦荐薩萨藍蓝藝艺藥药藴蕴藹蔼蘆芦蘇苏蘊蕴蘋苹"
    "蘓苏蘭兰蘿萝處处虛虚虜虏號号虧亏蛻蜕蝕蚀蝦虾蝨虱蝸蜗螞蚂螢萤蟄蛰蟬蝉蟲虫蟻蚁蠅蝇蠍蝎蠒茧蠟蜡蠱蛊蠶蚕蠻蛮衆众"
    "衇脉術术衛卫衝冲衞卫裏里補补裝装裡里複复褲裤襍杂襖袄襪袜襬摆襯衬襲袭見见規规覓觅覔觅視视親亲覺觉覽览觀观觸触"
    "訂订訃讣計计訊讯討讨訓训訖讫託托記记訛讹訝讶訟讼訣诀訪访設设許许訴诉診诊証证詐诈評评詛诅詞词詠咏詢询詣诣試试"
    "詩诗詫诧詭诡話话該该詳详誅诛誇夸認认誕诞誘诱語语誠诚誡诫誣诬誤误誦诵誨诲說说説说誰谁課课誹诽誼谊調调諄谆談谈"
    "請请諒谅論论諜谍諧谐諮咨諱讳諷讽諸诸諺谚諾诺謀谋謂谓謄誊謅诌謊谎謎谜謗谤謙谦講讲謝谢謠谣謡谣謬谬謹谨謾谩譁哗"
    "證证譌讹譏讥識识譚谭譜谱譭毁譯译議议譴谴護护譽誉讀读變变讒谗讓让讕谰讚赞讬托谘咨豈岂豎竖豐丰豓艳豔艳豬猪貓猫"
    "貝贝貞贞負负財财貢贡貧贫貨货販贩貪贪貫贯責责貯贮貳贰貴贵貶贬買买貸贷費费貼贴貿贸賀贺賂赂賃赁賄贿資资賈贾賊贼"
    "賒赊賓宾賛赞賜赐賞赏賠赔賢贤賣卖賤贱賦赋質质賬账賭赌賴赖賺赚購购賽赛贅赘贈赠贊赞贍赡贏赢贓赃贖赎贛赣贜赃趕赶"
    "趙赵趨趋跡迹踐践踴踊蹟迹蹤踪躊踌躍跃躥蹿軀躯車车軋轧軌轨軍军軒轩軟软軸轴較较載载輔辅輕轻輛辆輝辉輥辊輩辈輪轮"
    "輭软輯辑輸输輻辐輾辗輿舆轄辖轅辕轉转轍辙轎轿轟轰辤辞辦办辭辞辮辫辯辩農农辳农這这連连進进遉侦遊游運运過过達达"
    "違违遙遥遜逊遞递遠远適适遲迟遶绕遷迁選选遺遗遼辽邁迈還还邊边邏逻郵邮鄉乡鄒邹鄖郧鄧邓鄭郑鄰邻鄲郸醆盏醖酝醜丑"
    "醞酝醫医醬酱釀酿釁衅釋释釐厘釘钉針针釣钓釩钒釺钎鈅钥鈉钠鈍钝鈎钩鈔钞鈕钮鈞钧鈡钟鈣钙鈴铃鈾铀鉀钾鉄铁鉆钻鉑铂"
    "鉗钳鉚铆鉛铅鉢钵鉤钩鉸铰鉻铬銀银銅铜銑铣銘铭銜衔銥铱銳锐銷销銹锈銻锑鋁铝鋅锌鋇钡鋒锋鋤锄鋪铺鋭锐鋸锯鋼钢錄录"
    "錐锥錘锤錠锭錢钱錦锦錨锚錫锡錯错録录錳锰鍁锨鍊炼鍋锅鍍镀鍘铡鍛锻鍫锹鍬锹鍳鉴鍵键鍺锗鍼针鍾钟鎂镁鎊镑鎌镰鎖锁"
    "鎗枪鎚锤鎢钨鎬镐鎭镇鎮镇鎳镍鎻锁鏈链鏟铲鏡镜鏽锈鐐镣鐘钟鐮镰鐳镭鐵铁鑄铸鑑鉴鑒鉴鑚钻鑛矿鑰钥鑲镶鑷镊鑼锣鑽钻"
    "鑿凿锺钟長长門门閃闪閉闭開开閏闰閑闲閒闲間间閘闸閙闹閡阂閣阁閥阀閨闺閩闽閱阅閲阅閹阉閻阎闊阔闌阑闖闯闚窥關关"
    "闡阐闢辟陜陕陝陕陣阵陰阴陳陈陸陆陽阳陿狭隂阴隊队階阶隕陨隖坞際际隣邻隨随險险隱隐隴陇隷隶隸隶雖虽雙双雛雏雜杂"
    "雞鸡離离難难雲云電电霧雾靈灵靜静靭韧靱韧鞏巩韈袜韋韦韌韧韓韩韤袜韻韵響响頁页頂顶頃顷項项順顺須须頌颂預预頑顽"
    "頒颁頓顿頗颇領领頟额頤颐頭头頰颊頸颈頹颓頻频頼赖頽颓顆颗題题額额顏颜顔颜願愿顛颠類类顧顾顫颤顯显顱颅顴颧風风"
    "颱台飃飘飄飘飛飞飢饥飤饲飯饭飲饮飼饲飽饱飾饰餃饺餅饼養养餌饵餒馁餓饿餘余餞饯餡馅館馆餵喂餽馈餾馏饅馒饋馈饑饥"
    "饒饶饞馋馀余馬马馭驭馮冯馱驮馳驰馴驯駁驳駈驱駐驻駒驹駕驾駛驶駝驼駡骂駭骇駱骆駿骏騁骋騎骑騐验騙骗騰腾騷骚騾骡"
    "驅驱驕骄驗验驘骡驚惊驟骤驢驴骯肮髒脏體体髮发鬚须鬥斗鬦斗鬧闹鬪斗鬰郁鬱郁魚鱼魯鲁鮑鲍鮮鲜鯉鲤鯨鲸鰓鳃鱉鳖鱗鳞"
    "鳥鸟鳳凤鳴鸣鴉鸦鴕鸵鴛鸳鴦鸯鴨鸭鴻鸿鴿鸽鵑鹃鵝鹅鵞鹅鵬鹏鵲鹊鵶鸦鶴鹤鷄鸡鷗鸥鷹鹰鹵卤鹹咸鹻碱鹼碱鹽盐麗丽麥麦"
    "麼么麽么黃黄點点黨党黴霉鼈鳖齊齐齋斋齒齿齡龄齧啮齲龋龍龙龐庞龔龚龜龟"
)
"""Traditional → Simplified for the common characters (GB 2312 level 1), as pairs, from zhconv's tables: used only
to tell which script an answer is written in (the conversion itself is :func:`to_simplified`)."""

_HANT_ONLY = frozenset(_FOLD_PAIRS[::2]) - frozenset(_FOLD_PAIRS[1::2])
_HANS_ONLY = frozenset(_FOLD_PAIRS[1::2]) - frozenset(_FOLD_PAIRS[::2])
