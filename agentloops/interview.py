"""The interview drill: the question, its answers, the six pieces of evidence, and a practice grader.

"Your agent keeps calling tools and never stops: what do you do?" The usual
answer — "set a maximum number of steps" — names the fuse and stops there.
This module holds the drill of notebook 17:

- :data:`THIRTY_SECONDS` and :data:`FULL_ANSWER`, in our own words;
- :data:`FOLLOW_UPS`, the six follow-up questions, each answered by running
  package code (the notebook cell is the answer, not the prose);
- :data:`EVIDENCE`, the six pieces of evidence a project should be able to
  show, each with the notebook cell that produces it;
- :func:`grade`, practice mode: which points of the full answer a learner's
  text covers and misses.

The grader is a *heuristic*, and says so wherever it renders: it matches
keywords and concept phrases (English and Chinese) point by point. It cannot
tell a right statement from a wrong one that uses the same words, nor follow
negation; it tells you what you forgot to mention. It never raises on odd
input: ``None``, bytes, numbers and very long texts are all graded (or
reported as not attempted).

Nothing here imports matplotlib, pandas or ipywidgets.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

QUESTION = "Your agent keeps calling tools and never stops. What do you do?"
QUESTION_ZH = "你的 Agent 如果一直调用工具不结束，怎么办？"

THIRTY_SECONDS = (
    "A step cap only limits the damage; it does not explain why the loop runs on. Runaway loops usually have "
    "no checkable definition of done, tool results that all look alike, no record of what is already finished, "
    "and one error branch that always retries. So I keep the task state outside the transcript and check each "
    "task type's completion condition over it: a reply without tool calls is a claim, not proof. Every tool "
    "result carries a status class, and each class goes its own way — retry within one shared budget, repair "
    "the arguments once, ask the user, stop, or degrade. Steps, time, tokens, tool calls and retries each get "
    "a budget sized per task type, and a repeated action fingerprint stops the run before the cap. Every turn "
    "writes a structured trace, and the run ends in a named status — succeeded, partially completed, waiting "
    "for the user, failed, budget exhausted, no progress, cancelled or handed to a person — never a dressed-up "
    "answer."
)
"""The 30-second answer."""

FULL_ANSWER = (
    "The while loop is rarely the bug. A loop that will not stop is missing something the loop needs to "
    "converge: a goal it can check, tool feedback it can tell apart, a memory of what is done, or an error "
    "policy with more than one branch. The step cap is the fuse that limits the damage when all of that fails; "
    "I keep it, and I read every run that hits it, but it is not the fix.\n\n"
    "I control the loop in three layers. First, business state. Each task type turns its goal into work items "
    "and a completion condition over task state — for example, a weather fact with a source for every city. "
    "The controller keeps that state outside the transcript, with a version number, and shows it to the model "
    "every turn. A reply with no tool calls only claims the task is done; the run succeeds when the condition "
    "holds, and otherwise the model is told what is still missing. The other endings are states too: waiting "
    "for the user (saved, resumable), failed and unrecoverable, cancelled, handed to a person.\n\n"
    "Second, budgets. Steps, wall time, model calls, tool calls, tokens, the size of one request and retries "
    "each have a limit per task type, and every number has a basis: the happy path's length, what one "
    "recoverable failure adds, and the tail of measured runs. Retries are one budget for the whole task, and "
    "switching to a fallback tool spends it too, so a chain of fallbacks cannot hide a retry storm.\n\n"
    "Third, progress. An action's fingerprint is the tool, its normalised arguments and the state version. If "
    "the same fingerprint comes back after it brought nothing new, the run stops as no progress, before the "
    "cap — unless the last attempt failed in a retryable way, which is a retry and pays from the retry "
    "budget.\n\n"
    "Tool results carry meaning, and the meaning routes the next step: a timeout is retried within the budget "
    "(never for a call with side effects), invalid arguments are rejected by the schema and repaired once, a "
    "missing parameter is a question for the user, a permission denial stops the run and is never routed "
    "around through another tool, and an empty result is an answer only where the task accepts 'none found' — "
    "elsewhere the item is given up with its reason, and the run ends partially completed.\n\n"
    "Every turn writes a structured line to a trace: the state version, pending goal, action, arguments, tool "
    "status, state delta, budgets left and the decision. Every stop is rendered twice, as a message the user "
    "can act on and as a record the system can count. To review a run that looped, I read the trace turn by "
    "turn, decide whether the cause was the goal, a tool, the state, the policy or the context, fix it, and "
    "replay the same trace — same inputs, same tool results — under the fix, then run the fault-injection "
    "regression set to check that nothing else now stops too early."
)
"""The full answer (three layers, error routing, traces and replay)."""


@dataclass(frozen=True, slots=True)
class FollowUp:
    """One follow-up question and where its answer is run.

    Attributes:
        question: the follow-up, in English.
        question_zh: the same in Chinese.
        answer: a short answer in our own words.
        runs: what the notebook cell runs to answer it.
    """

    question: str
    question_zh: str
    answer: str
    runs: str


FOLLOW_UPS: tuple[FollowUp, ...] = (
    FollowUp("Besides a maximum number of steps, what else stops the loop?", "除了最大步数，还有什么停止条件？",
             "The task's completion condition, waiting for the user, an unrecoverable failure, any of seven budgets, "
             "a repeat with no progress, cancellation, and handing off to a person: eight stop statuses in all.",
             "one shipped scenario per stop status"),
    FollowUp("Why that number for the step budget?", "最大步数为什么这样设？",
             "It comes from the task's structure: the happy path, plus what one recoverable failure adds, checked "
             "against the tail of many runs — and the runs that hit it are read, not just counted.",
             "budget_basis('weather_compare', measure=200)"),
    FollowUp("How do you tell a repeated call from a retry?", "怎样判断重复调用？",
             "Fingerprint the action (tool, normalised arguments, state version). The same fingerprint after a "
             "fruitless attempt is a loop; after a retryable failure it is a retry, paid from the retry budget.",
             "repeated_call_trace() and weather-timeout-once"),
    FollowUp("The model says it is done. Why not stop?", "模型说完成了，为什么还不结束？",
             "Because saying so is a signal. The run succeeds when the task's condition holds over state; "
             "otherwise the model is told what is missing, and a second claim ends the run as partially completed.",
             "run_scenario('weather-early-claim')"),
    FollowUp("The tool keeps timing out. Now what?", "工具一直超时怎么办？",
             "Retry with back-off inside one shared retry budget, switch to an independent fallback (which also "
             "spends it), then stop as budget exhausted or degrade to a partial answer. A call with side effects "
             "is never retried blindly: it goes to a person.",
             "run_scenario('weather-timeout-always') under two policies, and a refund that times out"),
    FollowUp("How do you review a run that looped?", "怎么复盘一次死循环？",
             "Read the trace turn by turn: which turns changed no state, which fingerprint repeated, what the tools "
             "returned. Name the cause (goal, tool, state, policy, context), fix it, and replay the same trace "
             "under the fix; then run the regression set.",
             "replay(capped_run, policy='default') and fault_regression()"),
)
"""The six follow-up questions of the drill."""


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

    def link(self) -> str:
        """A Markdown link to the cell: ``[heading](notebook#anchor)``."""
        return f"[{self.heading}]({self.notebook}#{self.anchor})"


EVIDENCE: tuple[Evidence, ...] = (
    Evidence("business completion conditions per task type", "每种任务的业务完成条件", "completion_conditions()",
             "11-when-is-it-done.ipynb", "evidence-completion-conditions", "Evidence 1: completion conditions"),
    Evidence("budgets with the basis of every number", "预算的配置依据", "budget_basis(measure=200)",
             "13-budgets-and-no-progress.ipynb", "evidence-budget-basis", "Evidence 2: budgets and their basis"),
    Evidence("stop status definitions", "停止状态定义", "stop_statuses()",
             "11-when-is-it-done.ipynb", "evidence-stop-statuses", "Evidence 3: stop statuses"),
    Evidence("a repeated-call trace showing why the state did not change", "一条重复调用 Trace",
             "repeated_call_trace()", "13-budgets-and-no-progress.ipynb", "evidence-repeated-call-trace",
             "Evidence 4: a repeated-call trace"),
    Evidence("routing of empty, timeout, permission and argument errors", "空结果、超时、权限和参数错误的分流",
             "error_routing()", "12-tool-errors.ipynb", "evidence-error-routing", "Evidence 5: error routing"),
    Evidence("fault-injection regression with before/after trajectory differences", "故障注入回归与前后轨迹差异",
             "fault_regression()", "14-traces-and-replay.ipynb", "evidence-fault-regression",
             "Evidence 6: fault-injection regression"),
)
"""The six pieces of evidence, in the source article's order."""


# =========================================================================== the grader


HEURISTIC_NOTE = (
    "This checklist comes from keyword and concept matching (English and Chinese word lists), not from "
    "understanding. It cannot tell a right statement from a wrong one that uses the same words — 'I would "
    "never use a retry budget' still ticks budgets — and it misses ideas phrased in words it does not know. "
    "Use it to see what you forgot to mention, then compare with the full answer."
)
"""Shown with every grade: what the grader can and cannot judge."""

PointStatus = Literal["covered", "partly", "missed"]


@dataclass(frozen=True, slots=True)
class Concept:
    """One idea a point is made of, with the phrasings that count as naming it.

    Attributes:
        name: the idea in a few words.
        patterns: regular expressions (English, case-insensitive) and Chinese phrases.
    """

    name: str
    patterns: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Point:
    """One point of the full answer.

    Attributes:
        key: identifier.
        title: the point in English.
        title_zh: the same in Chinese.
        concepts: the ideas it is made of.
        need: how many concepts make it covered (fewer, but at least one, is "partly").
        advice: what to add when it is missing.
        core: counts toward the score (bonus points do not).
    """

    key: str
    title: str
    title_zh: str
    concepts: tuple[Concept, ...]
    need: int
    advice: str
    core: bool = True


POINTS: tuple[Point, ...] = (
    Point("fuse", "A step cap is a fuse, not the fix", "最大步数只是保险丝", (
        Concept("names the step cap", (
            r"\bmax(imum)?[ _-]?(number of )?(steps?|iterations?|turns?|loops?|rounds?|calls?)\b",
            r"\b(step|iteration|loop|turn|round)s? ?(cap|limit|count)s?\b", r"\bcaps?\b", r"\bmax_steps\b",
            "最大步数", "步数上限", "最大循环", "循环次数", "最大轮数", "上限")),
        Concept("calls it a last resort", (
            r"\bfuses?\b", r"\bsafety net\b", r"\blast (line|resort)\b", r"\bbackstop\b", r"\bcircuit[- ]breaker",
            r"\blimits? the damage\b", r"\bnot (the|a) (fix|solution|cure)\b", "保险丝", "止损", "兜底", "最后一道")),
        Concept("looks for the root cause", (
            r"\broot[- ]causes?\b", r"\bwhy (it|the agent|the loop|the model) (loops|keeps|runs|doesn|won)",
            r"\bdiagnos", r"\bunderlying\b", r"\bthe real (problem|cause|issue)\b", "根因", "根本原因", "为什么循环",
            "为什么会循环", "为什么不停")),
    ), 2, "Keep the cap, but call it what it is — a fuse that limits damage — and say the fix lies in the goal, "
          "the tool feedback, the state and the error policy."),
    Point("completion", "Business completion conditions; no tool calls is not success",
          "业务完成条件，不调用工具≠成功", (
        Concept("a checkable completion condition", (
            r"\bcompletion (condition|criteri|check)", r"\b(done|success|exit|termination|stopping|stop) "
            r"(condition|criteri|check)", r"\bdefinition of done\b", r"\bbusiness (condition|rule|success|goal)",
            r"\bacceptance criteri", "完成条件", "成功条件", "业务完成", "业务成功", "完成标准", "完成判断")),
        Concept("no tool calls is only a claim", (
            r"\bno (more )?tool calls?\b", r"\bstops? (calling|using) tools\b", r"\bwithout (any )?tool calls?\b",
            r"\bclaims?\b", r"\b(says|said|thinks|declares?) (it('s| is) )?(done|finished|complete)",
            r"\bsignal\b", "不返回工具调用", "没有工具调用", "不调用工具", "没有返回 ?tool_calls", "模型声明", "声称",
            "宣布完成", "说完成", "信号")),
        Concept("verifies against evidence", (
            r"\bverif(y|ies|ied|ication)\b", r"\bvalidat", r"\bevidence\b", r"\bcheck(s|ed)? (it )?(against|over)\b",
            r"\bsources?\b", r"\bconfirm", "验证", "校验", "证据", "来源", "确认")),
    ), 2, "Define, per task type, a completion condition the system checks over state and evidence; treat a reply "
          "without tool calls as a claim to verify."),
    Point("state", "Task state outside the transcript, changing every turn", "独立维护任务状态，每轮产生状态变化", (
        Concept("keeps task state", (
            r"\btask state\b", r"\bstate (object|store|machine|summary|tracking|block)\b", r"\btrack(s|ing)? "
            r"(what|progress)", r"\bwhat('s| is| has been)? (already )?(done|finished|completed)\b",
            r"\bwhat('s| is) (still )?(missing|left|pending|open)\b", "任务状态", "状态摘要", "已完成", "还缺",
            "缺什么", "未完成事项")),
        Concept("outside the transcript, versioned", (
            r"\boutside (of )?(the )?(transcript|context|messages|prompt|conversation)\b", r"\bseparate(ly)? "
            r"(from|of)? ?(the )?(transcript|context|messages)", r"\bstate version", r"\bversion(ed|s)?\b",
            "状态版本", "单独维护", "独立维护", "版本")),
        Concept("each turn must change the state", (
            r"\bobservations?\b", r"\b(each|every) (turn|step|round|iteration)\b[^.]{0,60}\b(chang|updat|progress|new)",
            r"\bstate (change|delta|diff)", r"\bnew (information|facts?)\b", "状态变化", "状态差异", "每轮",
            "新增信息")),
    ), 2, "Keep what is done and what is missing in a versioned task state outside the transcript, send it each "
          "turn, and expect every useful turn to change it."),
    Point("errors", "Tool errors are classified and routed differently", "按错误语义分流：重试、澄清、停止、降级", (
        Concept("classifies tool results", (
            r"\berror (types?|class(es)?|categor|semantic|kinds?)", r"\bstatus (codes?|class(es)?)\b",
            r"\bclassif", r"\b(each|every|different) (kind of )?(error|failure)s?\b", "错误类型", "错误语义",
            "状态类别", "错误分类", "分流")),
        Concept("retries transient failures", (
            r"\btime ?outs?\b", r"\btimed out\b", r"\btransient\b", r"\brate[- ]limit", "超时", "限流", "短暂")),
        Concept("asks the user for a missing parameter", (
            r"\bmissing (parameters?|arguments?|inputs?|info|information|details?)\b", r"\bask(s|ing)? the user\b",
            r"\bclarif", r"\bwaiting[ _]for[ _](the )?user\b", "澄清", "询问用户", "问用户", "缺少参数", "参数缺失",
            "向用户确认", "等待用户")),
        Concept("stops on a permission denial", (
            r"\bpermissions?\b", r"\bunauthori[sz]ed\b", r"\bforbidden\b", r"\baccess denied\b",
            r"\bauthori[sz]ation\b", "权限", "授权")),
        Concept("treats an empty result with care", (
            r"\bempty (results?|responses?|outputs?|lists?)\b", r"\bno results?\b", r"\bnot found\b",
            r"\bnone found\b", "空结果", "无结果", "未找到", "没有结果", "找不到")),
        Concept("repairs invalid arguments once", (
            r"\binvalid (arguments?|parameters?|inputs?|args)\b", r"\bschema\b", r"\b(argument|input) validation\b",
            r"\brepair", r"\bmalformed\b", "参数错误", "参数格式", "校验器", "Schema", "修正")),
        Concept("falls back or degrades", (
            r"\bfall ?backs?\b", r"\bdegrad", r"\bbackup (tool|service|provider)", r"\bswitch(es|ing)? (to )?"
            r"(another|a different|the backup|an alternative) (tool|service|provider|source)",
            r"\bpartial (results?|answers?)\b", "降级", "换路", "备用", "切换工具", "换工具")),
        Concept("never retries side effects blindly", (
            r"\bside[- ]effects?\b", r"\bidempoten", r"\bwrite (actions?|operations?)\b", "副作用", "幂等", "写操作")),
    ), 3, "Give every tool result a status class and route each class its own way: retry transient errors within "
          "a budget, repair invalid arguments once, ask about missing parameters, stop on permission denials, "
          "treat empty results per task, and never retry side effects blindly."),
    Point("budgets", "Several budgets, sized per task type, one shared retry budget",
          "多种预算按任务类型配置，重试预算统一核算", (
        Concept("budgets beyond steps", (
            r"\b(time|token|cost|tool[- ]calls?|wall[- ]?clock|wall[- ]time|context|model[- ]calls?|latency) "
            r"(budgets?|limits?|caps?)\b", r"\bbudgets\b", r"\bdeadlines?\b", r"\btotal (time|tokens|cost)\b",
            "预算", "耗时", "Token", "成本", "调用次数")),
        Concept("one shared retry budget", (
            r"\bretry budgets?\b", r"\b(shared|global|unified|task[- ]level|single|one) (retry )?budget",
            r"\bretries\b[^.]{0,40}\bbudget", r"\bbudget\b[^.]{0,40}\bretr", r"\bback-?off\b", r"\bexponential\b",
            "重试预算", "统一预算", "统一核算", "退避")),
        Concept("sized per task type, with a basis", (
            r"\bper[- ]task\b", r"\btask types?\b", r"\b(p9[059]|percentiles?|distribution|baseline|happy path|"
            r"normal (runs?|trajector(y|ies)|paths?))\b", r"\bnot a (magic|fixed|universal|single) number\b",
            r"\b(measured|real) (runs|tasks|traffic)\b", r"\bbasis\b", "任务类型", "真实任务", "分布", "正常轨迹",
            "基线", "固定数字", "按任务", "配置依据")),
    ), 2, "Name the budgets (steps, time, tokens, tool calls, retries), size each per task type from measured runs, "
          "and make retries one budget for the whole task so fallbacks cannot multiply them."),
    Point("progress", "Repeat and no-progress detection by fingerprint", "用动作指纹检测重复与无进展", (
        Concept("detects repeats before the cap", (
            r"\brepeat(ed|s|ing)? (actions?|calls?|tool calls?|steps?)\b", r"\bsame (tool|action|call|arguments)\b",
            r"\bduplicate (calls?|actions?)\b", r"\bloop detection\b", r"\bno[- ]progress\b", r"\bstuck\b",
            r"\bdetect(s|ing)? (loops?|repeats?|repetition|cycles?)", r"\brepetition\b", "重复", "无进展",
            "没有进展", "原地打转")),
        Concept("an action fingerprint", (
            r"\bfingerprints?\b", r"\bhash(es|ed|ing)?\b", r"\bnormali[sz]ed (arguments|args|parameters|params)",
            r"\btool name\b", r"\b(tool|name) (and|\+|,) (its )?(normali[sz]ed )?(arguments|args|parameters)",
            "指纹", "规范化参数", "参数规范化", "哈希")),
        Concept("lets a legitimate retry through", (
            r"\blegitimate retr", r"\breasonable retr", r"\bvalid retr", r"\bretryable\b",
            r"\b(a|one|first) (timeout|failure)\b[^.]{0,60}\bsucce", r"\bnot every repeat\b",
            r"\bdistinguish\b[^.]{0,40}\bretr", r"\bretr(y|ies)\b[^.]{0,30}\bnot (a )?loops?\b", "合理重试", "可重试",
            "误判")),
    ), 2, "Fingerprint each action (tool, normalised arguments, state version) and stop when it repeats with no "
          "new observation — while letting a retry after a transient failure through."),
    Point("statuses", "Distinct stop statuses, for the user and for the system",
          "区分停止状态，面向用户与系统两种表达", (
        Concept("names several endings", (
            r"\bwaiting[ _]for[ _](the )?user\b", r"\bpartial(ly)?[ _]complet",
            r"\bpartial (results?|success|answers?)",
            r"\bhand(ed|s)?[ _-]?off\b", r"\bhand(ed|s)? (it )?(over|off) to a (human|person)\b",
            r"\bhuman[- ](in[- ]the[- ]loop|review|takeover|handoff)\b", r"\bescalat", r"\bcancel",
            r"\bbudget[ _]exhausted\b", r"\b(stop|exit|terminal|end(ing)?) (status(es)?|states?|reasons?)\b",
            r"\bunrecoverable\b", "等待用户", "部分完成", "转人工", "人工接管", "取消", "预算耗尽", "停止原因",
            "停止状态", "不可恢复")),
        Concept("renders a stop for the user and for the system", (
            r"\buser[- ]facing\b", r"\b(tell|show|explain to|inform) the user\b", r"\buser messages?\b",
            r"\bstructured (records?|logs?|status|reasons?)\b", r"\bactionable\b",
            r"\bfor (ops|operators|engineers|the system|the user)\b", r"\b(user|person) can act on\b",
            r"\bsystem can (count|store|replay)\b", "面向用户", "告诉用户", "用户说明", "结构化", "可统计",
            "系统记录")),
        Concept("never dresses a stop up as success", (
            r"\bnot (pretend|fake|dress)", r"\bfake (success|answers?)", r"\bpretend", r"\bdressed[- ]up\b",
            r"\b(never|don't|do not|not) (report|claim|present|wrap|disguise)\b[^.]{0,40}\bsuccess",
            r"\bhonest", r"\bfalse success\b", "伪成功", "包装成", "假装", "冒充")),
    ), 2, "End every run in a named status — succeeded, partially completed, waiting for the user, failed, budget "
          "exhausted, no progress, cancelled, handed off — shown to the user as what is done and missing, and kept "
          "for the system as a structured record; never as a dressed-up answer."),
    Point("traces", "Structured traces, replay and fault-injection regression", "结构化 Trace、回放与故障注入回归", (
        Concept("a structured trace per turn", (
            r"\btrac(e|es|ing)\b", r"\blog(s|ging)? (each|every) (turn|step|round)", r"\bstructured (logs?|logging)",
            r"\btrace[_ ]ids?\b", r"\baudit (log|trail)\b", "Trace", "轨迹", "日志", "每轮记录", "记录每轮")),
        Concept("replays the same trace", (
            r"\breplay", r"\breproduc", r"\bre-?run (it |them )?(on|with|against) the same\b",
            r"\bsame (inputs?|tool results?|trace)\b", "回放", "复现", "重放")),
        Concept("fault injection and regression", (
            r"\bfault[- ]injection\b", r"\binject(s|ed|ing)? (faults?|failures?|errors?|timeouts?)",
            r"\bchaos\b", r"\bregression", r"\bbefore and after\b", r"\bbefore/after\b", r"\bdiff(s|ing)?\b",
            "故障注入", "注入故障", "回归", "修改前后", "前后对比", "轨迹差异")),
    ), 2, "Write a structured line per turn (state version, action, tool status, state delta, budgets, decision); "
          "review a looping run from its trace, replay the same trace after the fix, and keep a fault-injection "
          "regression set."),
    Point("context", "Context growth and safe compaction", "上下文膨胀与安全压缩（加分项）", (
        Concept("controls the context", (
            r"\bcontext (growth|window|bloat|size|length|budget)\b", r"\bcompact", r"\bsummari[sz]",
            r"\btrim(s|med|ming)?\b", r"\b(store|keep)s? (large|big) (outputs?|results?) (outside|externally)",
            r"\breferences?\b", "上下文", "压缩", "摘要", "裁剪", "外部存储")),
        Concept("keeps constraints through compaction", (
            r"\bhard constraints?\b", r"\bconstraints?\b", r"\bcompaction (check|drops?|loses?)",
            "硬约束", "约束", "不可违反")),
    ), 1, "Bonus: say how you keep the context small (store big outputs outside, compact) and that a compaction "
          "must keep the goal, hard constraints, facts with sources and open items.", core=False),
    Point("parallel", "Parallel calls, late and duplicate results", "并行调用、迟到与重复结果（加分项）", (
        Concept("handles parallel calls", (
            r"\bparallel\b", r"\bconcurren", r"\bjoin (rule|node|point)\b", r"\bcall ids?\b", "并行", "并发", "汇合")),
        Concept("ignores late and duplicate results", (
            r"\blate (results?|events?|arrivals?)\b", r"\barriv\w* late\b",
            r"\bduplicate (events?|deliver\w*|results?)",
            r"\bidempoten", r"\bcancel(s|led|ling)? (running|in-flight|the) calls?\b", "迟到", "重复投递", "幂等",
            "取消信号")),
    ), 1, "Bonus: with parallel calls, give every call an id and a state, join by a rule, cancel what is still "
          "running, and record late or duplicate results without applying them.", core=False),
)
"""The points of the full answer the grader looks for (the last two are bonus points)."""

_COMPILED: dict[str, list[tuple[Concept, list[re.Pattern[str]]]]] = {
    point.key: [(c, [re.compile(p, re.IGNORECASE) for p in c.patterns]) for c in point.concepts] for point in POINTS
}

MAX_CHARS = 20_000
"""Only the first 20,000 characters of an answer are read (an interview answer is far shorter)."""


@dataclass(frozen=True, slots=True)
class PointResult:
    """How one point fared.

    Attributes:
        point: the point.
        status: covered, partly or missed.
        found: (concept name, the words that matched) for each concept named.
        missing: names of the concepts not found.
    """

    point: Point
    status: PointStatus
    found: tuple[tuple[str, str], ...]
    missing: tuple[str, ...]


_MARKS: dict[PointStatus, tuple[str, str]] = {
    "covered": ("✓", "#1a7f37"),
    "partly": ("~", "#9a6700"),
    "missed": ("✗", "#b35900"),
}


@dataclass(frozen=True)
class Grade:
    """The checklist for one answer; renders as HTML in JupyterLab and as text elsewhere.

    Attributes:
        text: the answer as read (normalised, possibly shortened).
        results: one :class:`PointResult` per point, core points first.
        language: ``en``, ``zh``, ``mixed`` or ``none``.
        attempted: False for an empty answer.
        cap_only: the answer names the step cap and nothing else of the full answer.
    """

    text: str
    results: tuple[PointResult, ...]
    language: str
    attempted: bool
    cap_only: bool

    @property
    def core(self) -> tuple[PointResult, ...]:
        """Results of the core points."""
        return tuple(r for r in self.results if r.point.core)

    @property
    def covered(self) -> list[str]:
        """Keys of the core points covered."""
        return [r.point.key for r in self.core if r.status == "covered"]

    @property
    def partly(self) -> list[str]:
        """Keys of the core points partly covered."""
        return [r.point.key for r in self.core if r.status == "partly"]

    @property
    def missed(self) -> list[str]:
        """Keys of the core points missed."""
        return [r.point.key for r in self.core if r.status == "missed"]

    @property
    def bonus(self) -> list[str]:
        """Keys of the bonus points the answer touches."""
        return [r.point.key for r in self.results if not r.point.core and r.status != "missed"]

    @property
    def score(self) -> float:
        """Covered core points, plus half for each partly covered one."""
        return len(self.covered) + 0.5 * len(self.partly)

    def get(self, key: str) -> PointResult:
        """The result of one point by key."""
        for result in self.results:
            if result.point.key == key:
                return result
        raise KeyError(f"no point {key!r}; expected one of: {', '.join(p.key for p in POINTS)}")

    def verdict(self) -> str:
        """One sentence on the whole answer."""
        total = len(self.core)
        if not self.attempted:
            return "Not attempted: write your answer, then check it."
        if self.cap_only:
            return ("This answer names only the fuse (a step cap). An interviewer will ask: what number, why, and "
                    "what does the user get when it is hit? Add the points below.")
        return (f"{len(self.covered)} of {total} points covered, {len(self.partly)} partly, {len(self.missed)} missed"
                + (f"; bonus: {', '.join(self.bonus)}" if self.bonus else "") + ".")

    def __str__(self) -> str:
        lines = [f"Practice check — {self.verdict()}"]
        if self.attempted:
            for r in self.results:
                mark = _MARKS[r.status][0]
                tag = "" if r.point.core else " (bonus)"
                lines.append(f" {mark} {r.point.title}{tag} / {r.point.title_zh}")
                for name, words in r.found:
                    lines.append(f"     found: {name} — “{words}”")
                if r.status != "covered" and r.point.core:
                    lines.append(f"     add: {r.point.advice}")
        else:
            lines += [f" · {p.title} / {p.title_zh}" for p in POINTS if p.core]
        lines.append(f"Note: {HEURISTIC_NOTE}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        rows = []
        if self.attempted:
            for r in self.results:
                mark, color = _MARKS[r.status]
                found = "".join(f"<div><small>found: {html.escape(name)} — “{html.escape(words)}”</small></div>"
                                for name, words in r.found)
                advice = (f"<div><small><i>add:</i> {html.escape(r.point.advice)}</small></div>"
                          if r.status != "covered" and r.point.core else "")
                tag = "" if r.point.core else " <small>(bonus)</small>"
                rows.append(f"<tr><td style='color:{color};font-weight:bold;font-size:18px;vertical-align:top'>"
                            f"{mark}</td><td style='text-align:left'><b>{html.escape(r.point.title)}</b>{tag} · "
                            f"{html.escape(r.point.title_zh)}{found}{advice}</td></tr>")
        else:
            rows = [f"<tr><td>·</td><td style='text-align:left'>{html.escape(p.title)} · {html.escape(p.title_zh)}"
                    "</td></tr>" for p in POINTS if p.core]
        color = "#57606a" if not self.attempted else ("#b35900" if self.cap_only else "#0072B2")
        return (f"<div style='border-left:4px solid {color};padding:4px 8px;font-size:15px'>"
                f"<b style='color:{color}'>{html.escape(self.verdict())}</b>"
                f"<table>{''.join(rows)}</table>"
                f"<div style='color:#555'><small><b>This is a heuristic.</b> {html.escape(HEURISTIC_NOTE)}"
                "</small></div></div>")


def _as_text(answer: Any) -> str:
    """Any input as text: ``None`` → empty, bytes decoded leniently, anything else through ``str``."""
    if answer is None or answer is ...:
        return ""
    if isinstance(answer, (bytes, bytearray, memoryview)):
        return bytes(answer).decode("utf-8", errors="replace")
    if isinstance(answer, str):
        return answer
    if isinstance(answer, Sequence) and not isinstance(answer, str):
        try:
            return "\n".join(_as_text(part) for part in answer)
        except RecursionError:
            return ""
    try:
        return str(answer)
    except Exception:  # an object whose __str__ fails: grade nothing rather than crash the notebook
        return ""


def _language(text: str) -> str:
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    latin = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    if not cjk and not latin:
        return "none"
    if cjk and latin > 4 * cjk:
        return "en"
    if cjk and cjk * 2 >= latin:
        return "zh" if latin < cjk else "mixed"
    return "en" if not cjk else "mixed"


def _snippet(text: str, match: re.Match[str]) -> str:
    return " ".join(text[match.start(): match.end()].split())[:40]


def grade(answer: Any) -> Grade:
    """Check which points of the full answer ``answer`` names, by keywords and concepts (a heuristic).

    Never raises: ``None``, bytes, numbers and lists are read as text; only the
    first :data:`MAX_CHARS` characters are read.

    Example:
        >>> grade("Set max_steps to 10.").cap_only
        True
    """
    text = unicodedata.normalize("NFKC", _as_text(answer))[:MAX_CHARS]
    attempted = bool(text.strip())
    results = []
    for point in POINTS:
        found: list[tuple[str, str]] = []
        missing: list[str] = []
        for concept, patterns in _COMPILED[point.key]:
            hit = None
            if attempted:
                for pattern in patterns:
                    hit = pattern.search(text)
                    if hit:
                        break
            if hit:
                found.append((concept.name, _snippet(text, hit)))
            else:
                missing.append(concept.name)
        status: PointStatus = "covered" if len(found) >= point.need else ("partly" if found else "missed")
        results.append(PointResult(point, status, tuple(found), tuple(missing)))
    core = [r for r in results if r.point.core]
    fuse = core[0]
    others_named = any(r.found for r in core[1:])
    cap_only = attempted and any(name == "names the step cap" for name, _ in fuse.found) and not others_named
    return Grade(text, tuple(results), _language(text) if attempted else "none", attempted, cap_only)


def checklist_markdown() -> str:
    """The six pieces of evidence as a Markdown checklist, each linked to the notebook cell that produces it."""
    return "\n".join(f"- [ ] **{i}. {e.name}** ({e.name_zh}) — `{e.call}` → {e.link()}"
                     for i, e in enumerate(EVIDENCE, start=1))
