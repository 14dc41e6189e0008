"""A learner's compactor inside the controller: what a memory must keep for the run to go on as ours does.

When a long run's older turns are replaced by one memory, the model works from that memory alone. The
learner writes ``my_memory(state) -> str``; each case runs a compaction scenario with it in place of the
package's compactor and compares with the same scenario run with the package's safe memory
(:func:`~agentloops.controller.task.context.memory_from_state`):

- ``research-compaction-careless`` with the compaction check *off*: the learner's memory is used as it is,
  so a memory that drops finished work sends the model back over sources it already read (also with its
  context settings changed: compacting earlier, keeping more recent turns);
- ``research-compaction-checked`` with the check *on*: a memory the check refuses is replaced by the safe one
  (the run is rescued), and the verdict says what the check found missing.

A case passes when the run ends as ours does, with no more tool calls, and every memory the learner wrote kept
what :func:`~agentloops.controller.task.context.check_compaction` asks for.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial
from typing import Any

from agentloops.controller.running.scenarios import build_controller
from agentloops.controller.sim.scenario_files import load_controller_scenario
from agentloops.controller.task.context import memory_from_state
from agentloops.controller.task.state import TaskState
from agentloops.controller.vocabulary.readback import read_back
from agentloops.exercises import outputs
from agentloops.exercises.checking import Case, LearnerError, Verdict
from agentloops.exercises.failures import raised_text
from agentloops.i18n import N_, _

CHECK_OFF = "research-compaction-careless"
"""Run with the compaction check off: the learner's memory is what the model reads."""
CHECK_ON = "research-compaction-checked"
"""Run with the check on: a memory that drops something is refused (and the verdict says what it dropped)."""
SCENARIOS = (CHECK_OFF, f"{CHECK_OFF}@compact_over_tokens=200", f"{CHECK_OFF}@keep_recent_turns=2", CHECK_ON)
"""The cases: each scenario, and the careless one compacting earlier and more often (a lower threshold), and
keeping two recent turns beside the memory instead of one (``scenario@setting=value``)."""

HINTS = (
    N_("After a compaction the model sees only your memory and the latest turn. Whatever the memory leaves out, "
       "the model no longer knows: a finished fetch looks unfinished, and it is done again."),
    N_("The state has it all: state.goal, state.constraints, state.inputs, state.facts (each fact with its item "
       "and source), state.open_items() and state.failures (tool and status). Keep every one as text."),
    N_("Build a dict of goal, constraints, inputs, facts [{'item', 'summary', 'source'}], open items and "
       "'tool: status' of each failure, and return 'MEMORY\\n' + json.dumps(it)."),
)


def play(case: str, compactor: Callable[[TaskState], Any]) -> dict[str, Any]:
    """Run ``case`` with ``compactor`` (plain values only): the stop, the actions, the tool calls, and what the
    compaction check found missing in each memory the compactor wrote."""
    scenario, _at, setting = case.partition("@")
    loaded = load_controller_scenario(scenario)
    assert loaded.context is not None  # both compaction scenarios set their context
    changed = {setting.split("=")[0]: int(setting.split("=")[1])} if setting else {}
    context = loaded.context.model_copy(update={"check_compaction": case == CHECK_ON, **changed})

    def guarded(state: TaskState) -> str:
        memory = compactor(state)
        if not isinstance(memory, str):
            raise LearnerError(_("in {scenario}, your compactor returned {value}; expected a str (the memory "
                                 "text)").format(scenario=case, value=outputs.show(outputs.encode(memory))))
        return memory

    run = build_controller(scenario, compactor=guarded, context=context).run()
    dropped = [[turn.turn, [str(d) for d in turn.compaction.get("dropped", ())]] for turn in run.trace.turns
               if turn.compaction and turn.compaction.get("dropped")]
    return {"status": run.status, "code": run.code, "actions": list(run.actions),
            "tool_calls": int(run.usage["tool_calls"]), "dropped": dropped}


@cache
def ours(case: str) -> dict[str, Any]:
    """The case run with the package's safe memory."""
    return play(case, memory_from_state)


def _well_formed(raw: Any) -> bool:
    if not isinstance(raw, dict):
        return False
    return (all(isinstance(raw.get(key), str) for key in ("status", "code")) and type(raw.get("tool_calls")) is int
            and isinstance(raw.get("actions"), list) and all(isinstance(a, str) for a in raw["actions"])
            and isinstance(raw.get("dropped"), list)
            and all(isinstance(d, list) and len(d) == 2 and type(d[0]) is int and isinstance(d[1], list)
                    and all(isinstance(x, str) for x in d[1]) for d in raw["dropped"]))


def judge(raw: Any, case: str) -> Verdict:
    """Compare the learner's run of ``case`` with ours: the stop, then the tool calls, then what was dropped."""
    if outputs.tag(raw) == "raised":
        raise LearnerError(_("in {scenario}, running with your compactor raised {error}").format(
            scenario=case, error=raised_text(raw)))
    if not _well_formed(raw):
        raise LearnerError(_("the run sent back no result"))
    theirs = ours(case)
    mine, expected = f"{raw['status']} ({raw['code']})", f"{theirs['status']} ({theirs['code']})"
    if mine != expected:
        first = next((i for i, (a, b) in enumerate(zip(raw["actions"], theirs["actions"])) if a != b),
                     min(len(raw["actions"]), len(theirs["actions"])))
        yours_then = raw["actions"][first] if first < len(raw["actions"]) else "—"
        ours_then = theirs["actions"][first] if first < len(theirs["actions"]) else "—"
        return False, _("in {scenario}, with your memory the run ended {mine}; with the package's it ends {ours} "
                        "(action {n}: yours {yours}, ours {theirs})").format(
            scenario=case, mine=mine, ours=expected, n=first + 1, yours=yours_then, theirs=ours_then)
    if raw["tool_calls"] > theirs["tool_calls"]:
        return False, _("in {scenario}, the run ended {mine} as with the package's memory, but made {calls} tool "
                        "calls where ours made {ours}").format(scenario=case, mine=mine, calls=raw["tool_calls"],
                                                               ours=theirs["tool_calls"])
    if raw["dropped"]:
        turn, dropped = raw["dropped"][0]
        return False, _("in {scenario}, the run ended {mine} as with the package's memory, but your memory before "
                        "turn {turn} dropped {dropped} — the compaction check refuses it").format(
            scenario=case, mine=mine, turn=turn, dropped=_("; ").join(read_back(line) for line in dropped))
    return True, _("in {scenario}, {mine}, as with the package's memory; every memory kept what it must").format(
        scenario=case, mine=mine)


def _sent(case: str, compactor: Callable[[TaskState], Any]) -> outputs.Encoded:
    return outputs.Encoded(play(case, compactor))


def cases(compactor: Callable[[TaskState], Any]) -> list[Case]:
    """One case per compaction scenario, the learner's compactor run inside the controller."""
    return [Case(case, partial(_sent, case, compactor), partial(judge, case=case)) for case in SCENARIOS]


__all__ = ["HINTS", "SCENARIOS", "cases", "judge", "ours", "play"]
