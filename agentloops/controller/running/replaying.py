"""Replay: run a controller again against a recorded trace's tool results, and diff the trajectories.

After changing a prompt, a model, a tool description or the error policy, the
honest question is "what would this *same* run have done?". Replay answers it
with the same input and the same tool returns: each tool call is served from
the results recorded in the trace (in order, per tool and normalised
arguments), the model is rebuilt from the scenario the trace names (or the
recorded replies are played back), and the new trajectory is compared with the
old one — action sequence, stop status and reason, and state deltas turn by
turn.

A call the original run never made has no recorded result; it is served by
the live stub tools (with the scenario's faults) and counted in
``unrecorded``, so the diff says how much of the replay was evidence and how
much was simulation.
"""

from __future__ import annotations

import html
from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentloops.controller.controller import Controller
from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.persistence.trace import Trace, read_trace
from agentloops.controller.policy.error_policy import PolicyLike, resolve_policy
from agentloops.controller.running.resuming import resume
from agentloops.controller.sim.executor import execute
from agentloops.controller.sim.faults import FaultInjector
from agentloops.controller.sim.planners import build_model
from agentloops.controller.sim.scenario_files import ControllerScenario, scenario_from_dict
from agentloops.controller.sim.timeline import Controls
from agentloops.controller.stopping.progress import normalize_args
from agentloops.controller.task.context import COMPACTORS
from agentloops.controller.task.tasks import Task, make_task
from agentloops.controller.vocabulary.readback import read_back
from agentloops.controller.vocabulary.render import Table, clip, html_table
from agentloops.controller.vocabulary.tools import RESULT_JSON, ToolResult, ToolSpec
from agentloops.i18n import N_, Phrase, _
from agentloops.response import Response
from agentloops.stubs import Model, ScriptedModel
from agentloops.tables import text_table

TraceLike = Trace | ControllerRun | str | Path


def as_trace(trace: TraceLike) -> Trace:
    """A :class:`Trace` from itself, a run, or a JSON Lines file."""
    if isinstance(trace, Trace):
        return trace
    if isinstance(trace, ControllerRun):
        return trace.trace
    return read_trace(trace)


class RecordedExecutor:
    """Serves tool attempts from a trace's recorded results; falls back to live stubs when none fits."""

    def __init__(self, trace: Trace, live: Any | None = None) -> None:
        self.queues: dict[tuple[str, str], deque[ToolResult]] = defaultdict(deque)
        self.last: dict[tuple[str, str], ToolResult] = {}
        for action in trace.tool_results():
            key = (action["tool"], action.get("args_norm") or normalize_args(action.get("args") or {}))
            self.queues[key].append(RESULT_JSON.validate_python(action["result"]))
        self.live = live
        self.served = 0
        self.repeated = 0
        self.unrecorded = 0

    def __call__(self, spec: ToolSpec, args: Mapping[str, Any]) -> ToolResult:
        key = (spec.name, normalize_args(args, spec.params))
        queue = self.queues.get(key)
        if queue:
            result = queue.popleft()
            self.last[key] = result
            self.served += 1
            return result
        if key in self.last:  # more calls than were recorded: the stubs are deterministic, repeat the last
            self.repeated += 1
            return self.last[key]
        self.unrecorded += 1
        if self.live is not None:
            return self.live(spec, args)
        return ToolResult("permanent_error", error=f"{spec.name}: no recorded result for this call in the trace",
                          ran=True, source="replay")


def recorded_model(trace: Trace) -> ScriptedModel:
    """The model replies recorded in a trace, as a script."""
    replies = [Response.model_validate(t.response) for t in trace.turns if t.response is not None]
    if not replies:
        replies = [Response(content="", finish_reason="stop")]
    return ScriptedModel(replies)


@dataclass(frozen=True)
class TraceDiff:
    """How two trajectories differ.

    Attributes:
        before_label / after_label: what the two sides are (policy names, usually).
        before_actions / after_actions: the action sequences.
        first_divergence: index of the first differing action (``None`` when equal).
        before_stop / after_stop: (status, code, reason).
        delta_changes: (turn, changes only before, changes only after) for turns whose state delta differs.
        unrecorded: tool calls in the replay that the original never made.
    """

    before_label: str
    after_label: str
    before_actions: tuple[str, ...]
    after_actions: tuple[str, ...]
    first_divergence: int | None
    before_stop: tuple[str, str, str]
    after_stop: tuple[str, str, str]
    delta_changes: tuple[tuple[int, str, str], ...] = ()
    unrecorded: int = 0

    @property
    def same(self) -> bool:
        """True when actions, stop and state deltas all match."""
        return (self.first_divergence is None and self.before_stop[:2] == self.after_stop[:2]
                and not self.delta_changes)

    def rows(self) -> list[tuple[Any, str, str, str]]:
        """Side-by-side action rows: index, before, after, marker."""
        n = max(len(self.before_actions), len(self.after_actions))
        out = []
        for i in range(n):
            a = self.before_actions[i] if i < len(self.before_actions) else ""
            b = self.after_actions[i] if i < len(self.after_actions) else ""
            out.append((i + 1, a, b, "" if a == b else "≠"))
        return out

    def summary(self) -> str:
        """One line: what changed."""
        if self.same:
            return _("same trajectory, same stop")
        parts = []
        if self.first_divergence is not None:
            parts.append(_("actions differ from step {step} ({before} → {after} actions)").format(
                step=self.first_divergence + 1, before=len(self.before_actions), after=len(self.after_actions)))
        if self.before_stop[:2] != self.after_stop[:2]:
            parts.append(_("stop {status} ({code}) → {new_status} ({new_code})").format(
                status=self.before_stop[0], code=self.before_stop[1], new_status=self.after_stop[0],
                new_code=self.after_stop[1]))
        if self.delta_changes:
            parts.append(_("state deltas differ at turn(s) {turns}").format(
                turns=", ".join(str(t) for t, _delta_a, _delta_b in self.delta_changes)))
        return _("; ").join(parts)

    def __str__(self) -> str:
        table = text_table(["#", read_back(self.before_label), read_back(self.after_label), ""], self.rows())
        stop, only_in = _("stop  {label}: {status} ({code})"), _("turn {turn} state delta, only in {label}: {changes}")
        stops = "\n".join(stop.format(label=read_back(label), status=status, code=code) for label, (status, code, _why)
                          in ((self.before_label, self.before_stop), (self.after_label, self.after_stop)))
        deltas = "".join("\n" + only_in.format(turn=t, label=read_back(label), changes=clip(read_back(changes), 90))
                         for t, a, b in self.delta_changes for label, changes in ((self.before_label, a),
                                                                                  (self.after_label, b)))
        extra = ("\n" + _("{n} call(s) had no recorded result and ran on the live stubs").format(n=self.unrecorded)
                 if self.unrecorded else "")
        return f"{self.summary()}\n{table}\n{stops}{deltas}{extra}"

    def _repr_html_(self) -> str:
        rows = self.rows()
        before, after = read_back(self.before_label), read_back(self.after_label)
        body = html_table(self.summary(), ["#", before, after, ""], rows, highlight=[r[3] == "≠" for r in rows])
        stops = (f"<div>{html.escape(_('stop'))} {html.escape(before)}: <b>{html.escape(self.before_stop[0])}</b> "
                 f"({html.escape(self.before_stop[1])}) → {html.escape(after)}: "
                 f"<b>{html.escape(self.after_stop[0])}</b> ({html.escape(self.after_stop[1])})</div>")
        return f"<div>{body}{stops}</div>"


def _only(mine: list[str] | None, theirs: list[str] | None) -> str:
    """The changes of one side that the other side lacks, in one line."""
    if mine is None:
        return N_("(no such turn)")
    rest = list(theirs or [])
    only = []
    for change in mine:
        if change in rest:
            rest.remove(change)
        else:
            only.append(change)
    return "; ".join(only) if only else N_("(nothing else)")


def _stop_of(trace: Trace) -> tuple[str, str, str]:
    if trace.stop is None:
        return ("(none)", "(killed)", "the run did not finish")
    return (str(trace.stop["status"]), str(trace.stop["code"]), str(trace.stop["reason"]))


def diff_traces(before: TraceLike, after: TraceLike, before_label: str = "before", after_label: str = "after",
                unrecorded: int = 0) -> TraceDiff:
    """Compare two trajectories: actions, stop, and state deltas turn by turn."""
    a, b = as_trace(before), as_trace(after)
    actions_a, actions_b = tuple(a.actions), tuple(b.actions)
    divergence = None
    for i in range(max(len(actions_a), len(actions_b))):
        if i >= len(actions_a) or i >= len(actions_b) or actions_a[i] != actions_b[i]:
            divergence = i
            break
    turns_a = {t.turn: t for t in a.turns}
    turns_b = {t.turn: t for t in b.turns}
    changes = []
    for number in sorted(set(turns_a) | set(turns_b)):
        mine = list(turns_a[number].state_delta.get("changes", [])) if number in turns_a else None
        theirs = list(turns_b[number].state_delta.get("changes", [])) if number in turns_b else None
        if (mine or []) == (theirs or []):  # a turn only one side has, that changed nothing, is no state difference
            continue
        changes.append((number, _only(mine, theirs), _only(theirs, mine)))
    return TraceDiff(before_label, after_label, actions_a, actions_b, divergence, _stop_of(a), _stop_of(b),
                     tuple(changes), unrecorded)


@dataclass(frozen=True)
class Replay:
    """A replayed run and its diff against the recording.

    Attributes:
        original: the recorded trace.
        run: the replayed run.
        diff: what changed.
        served: tool results served from the recording.
    """

    original: Trace
    run: ControllerRun
    diff: TraceDiff
    served: int = 0

    def __str__(self) -> str:
        head = _("replay of trace {trace_id} ({label}) under policy {policy!r}: {served} tool result(s) served from "
                 "the recording").format(trace_id=self.original.trace_id, label=_(self.original.start.label),
                                         policy=self.run.policy.name, served=self.served)
        return f"{head}\n{self.diff}"

    def _repr_html_(self) -> str:
        return f"<div><b>{html.escape(str(self).splitlines()[0])}</b>{self.diff._repr_html_()}</div>"


def _source(trace: Trace) -> str:
    """How an error names a recorded configuration: the file and its start line, else the trace id."""
    return f"{trace.path}:1" if trace.path is not None else f"trace {trace.trace_id}"


def _task_of(trace: Trace) -> Task:
    task = make_task(trace.start.task.type, trace.start.task.params, source=_source(trace))
    return Task(task.kind, trace.start.budget)


def _recorded_world(original: Trace) -> tuple[Task, ControllerScenario | None, Controls | None, RecordedExecutor]:
    """What a replay runs against: the recorded task and scenario (if any), its controls, and an executor
    that serves the recorded tool results (and runs the live stub, with the scenario's faults, for the rest)."""
    start = original.start
    task = _task_of(original)
    scenario = None if start.scenario is None else \
        scenario_from_dict(start.scenario, f"{_source(original)}: scenario")
    injector = FaultInjector(scenario.faults if scenario is not None else ())

    def live(spec: ToolSpec, args: Mapping[str, Any]) -> ToolResult:
        return execute(spec, args, injector=injector, granted=task.granted)

    controls = None
    if scenario is not None and scenario.controls is not None:
        controls = Controls(**scenario.controls.model_dump())
    return task, scenario, controls, RecordedExecutor(original, live)


def replay(trace: TraceLike, *, policy: PolicyLike | None = None, model: Model | None = None,
           trace_out: str | Path | None = None, label: str | None = None) -> Replay:
    """Re-run the controller against the tool results recorded in ``trace`` and diff the outcome.

    Args:
        trace: a trace file, a :class:`Trace` or a :class:`ControllerRun`.
        policy: the policy to replay under (default: the recorded one).
        model: the model (default: rebuilt from the recorded scenario, else the recorded replies).
        trace_out: write the replay's own trace here.
        label: the name of the "after" side in the diff (default: the policy's name).
    """
    original = as_trace(trace)
    start = original.start
    recorded_policy = start.policy
    chosen = resolve_policy(policy) if policy is not None else recorded_policy
    task, scenario, controls, executor = _recorded_world(original)
    rebuild = model is None and scenario is not None  # a scenario model is rebuilt past the replies already used
    extra: dict[str, Any] = {}
    if scenario is not None:
        extra["compactor"] = COMPACTORS[scenario.compactor]  # the recorded run compacted this way: so must its replay
        if model is None:
            model = build_model(scenario, task)
    if model is None:
        model = recorded_model(original)
    controller = Controller(task, model, tools=task.toolbox(), policy=chosen, budget=task.budget, **extra,
                            context=start.context, send_state=start.send_state,
                            controls=controls, trace=trace_out, trace_id=f"{original.trace_id}-replay",
                            label=start.label, model_latency_s=start.model_latency_s, scenario=start.scenario,
                            executor=executor)
    run = controller.run()
    # the user's recorded answers, in order: a waiting replay continues exactly as the recording did
    # (a scenario model is rebuilt past the replies already used; any other model just continues)
    for answer in original.resumes:
        if run.status != "waiting_for_user":
            break
        run = resume(run, answer.answer, model=None if rebuild else model, executor=executor)
    diff = diff_traces(original, run.trace, before_label=Phrase(N_("recorded ({policy})"), policy=recorded_policy.name),
                       after_label=label or Phrase(N_("replay ({policy})"), policy=chosen.name),
                       unrecorded=executor.unrecorded)
    return Replay(original, run, diff, executor.served)


@dataclass(frozen=True)
class Regression:
    """A regression run over scenarios: recorded under one policy, replayed under another.

    Attributes:
        before: the policy the traces were recorded under.
        after: the policy they were replayed under.
        replays: one replay per scenario.
        expectations: per scenario, the mismatches between the *after* run and the file's expectations
            (meaningful when ``after`` is the policy the files were written for, ``default``).
    """

    before: str
    after: str
    replays: tuple[Replay, ...]
    expectations: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def table(self) -> Table:
        """One row per scenario: faults, stop before and after, how the trajectory changed."""
        rows = []
        for r in self.replays:
            name = r.original.start.label
            problems = self.expectations.get(name)
            rows.append((name, f"{r.diff.before_stop[0]} ({r.diff.before_stop[1]})",
                         f"{r.diff.after_stop[0]} ({r.diff.after_stop[1]})",
                         f"{len(r.diff.before_actions)} → {len(r.diff.after_actions)}",
                         "-" if r.diff.first_divergence is None else r.diff.first_divergence + 1,
                         "-" if problems is None else ("ok" if not problems else "MISMATCH")))
        changed = sum(1 for r in self.replays if not r.diff.same)
        served = sum(r.served for r in self.replays)
        live = sum(r.diff.unrecorded for r in self.replays)
        title = Phrase(N_("Regression: recorded under {before!r}, replayed under {after!r}"), before=self.before,
                       after=self.after)
        return Table.build(title,
                           [N_("scenario"), Phrase(N_("stop ({policy})"), policy=self.before),
                            Phrase(N_("stop ({policy})"), policy=self.after), N_("actions"),
                            N_("first divergence"), N_("expected")], rows,
                           note=Phrase(N_("{changed} of {n} trajectories changed (actions, stop or state deltas). "
                                          "{served} tool result(s) were served from the recordings; {live} call(s) "
                                          "were not in them and ran on the live stubs."), changed=changed,
                                       n=len(self.replays), served=served, live=live))

    @property
    def ok(self) -> bool:
        """True when every scenario met its file's expectations after the change."""
        return all(not p for p in self.expectations.values())

    def __str__(self) -> str:
        details = "\n\n".join(f"== {read_back(r.original.start.label)}\n{r.diff}" for r in self.replays
                                if not r.diff.same)
        return f"{self.table()}\n\n{details}".rstrip()

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()


def regression(before: PolicyLike = "naive", after: PolicyLike = "default",
               scenarios: Sequence[str] | None = None) -> Regression:
    """Record every scenario under ``before``, replay each trace under ``after``, and diff them.

    This is the fault-injection regression set with before/after trajectory
    differences: the scenarios inject the faults; the traces fix the tool
    returns; only the policy changes.
    """
    from agentloops.controller.running.scenarios import _compare, build_controller
    from agentloops.controller.sim.scenario_files import controller_scenario_names, load_controller_scenario

    first, second = resolve_policy(before), resolve_policy(after)
    replays = []
    expectations: dict[str, tuple[str, ...]] = {}
    for name in scenarios or controller_scenario_names():
        loaded = load_controller_scenario(name)
        recorded = build_controller(loaded, policy=first).run()
        replayed = replay(recorded, policy=second)
        replays.append(replayed)
        if second.name == resolve_policy(loaded.policy).name:
            expectations[loaded.name] = tuple(_compare(loaded.expect, replayed.run, replayed.run.actions, ""))
    return Regression(first.name, second.name, tuple(replays), expectations)
