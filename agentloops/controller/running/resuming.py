"""Resume: continue a task that stopped as ``waiting_for_user``, from its saved state — once."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentloops.controller.controller import Controller, saved_task
from agentloops.controller.engine import Executor, Run, start_line
from agentloops.controller.persistence.result import ControllerRun
from agentloops.controller.persistence.run_state import RunState
from agentloops.controller.persistence.saved import (
    RESUMED,
    PauseStore,
    SavedLike,
    check_not_resumed,
    load_state,
    mark_resumed,
    resume_trace_path,
    trace_prefix,
)
from agentloops.controller.persistence.trace import TraceWriter
from agentloops.controller.sim.planners import USER_ANSWER_PREFIX, build_model
from agentloops.controller.sim.scenario_files import scenario_from_dict
from agentloops.controller.stages import Stages
from agentloops.controller.vocabulary.errors import ConfigError
from agentloops.controller.vocabulary.tools import (
    Toolbox,
)
from agentloops.messages import Message
from agentloops.stubs import Model


def resume(saved: ControllerRun | SavedLike, answer: str, *, model: Model | None = None,
           trace: str | Path | None = None, tools: Toolbox | None = None, executor: Executor | None = None,
           store: PauseStore | None = None, stages: Stages | None = None) -> ControllerRun:
    """Continue a task that stopped as ``waiting_for_user`` with the user's answer — once.

    Budgets, clock, state, fingerprints, fault counters and the outputs stored
    outside the context continue from where they were: waiting did not spend
    anything, and answering does not reset anything. The answer becomes a user
    input in state (version + 1) and a ``USER ANSWER`` message in the transcript.
    (A ``handed_off`` run's saved state is what a person takes over: it is not resumed here.)

    Resuming is idempotent: a pause is (trace id, the state version it paused at); a second resume of
    it — seen in the pause store (:class:`~agentloops.controller.persistence.saved.PauseStore`, which a
    redelivered *copy* cannot dodge) or in the trace (a ``resume`` line or a later turn) — is refused.
    The resumed run's in-memory trace is the whole trace: the file's (or saved) lines and the new ones.

    Args:
        saved: the waiting run itself, ``run.run_state``, ``run.saved`` (its JSON), or a path to a file
            written by :meth:`ControllerRun.save` (any readable schema version).
        answer: the user's reply.
        model: the model to continue with (default: rebuilt from the scenario, if the run came from one).
        trace: the trace file to append to (default: the original one, if any).
        tools: the toolbox (default: the run's own when ``saved`` is the run, else the task's).
        executor: runs tool attempts (default: the stub tools with the saved faults; replay: the recorded ones).
        store: where pauses are claimed (default: the process-wide :data:`~.persistence.saved.RESUMED`).
        stages: replaced stages to continue with (not saved with the run).

    Raises:
        ConfigError: the saved run is malformed, is not waiting, or was already resumed (one line).
    """
    if isinstance(saved, ControllerRun):
        saved, trace, tools = _waiting(saved, trace, tools)
    state = load_state(saved)
    data = state.to_saved()
    source = str(saved) if isinstance(saved, (str, Path)) else "saved run"
    trace_path = resume_trace_path(saved, state, trace)
    check_not_resumed(data, source, trace_path)
    controller = Controller.from_state(state, model=model or _scenario_model(state, source), tools=tools,
                                       executor=executor, source=source, stages=stages)
    run = controller.current
    run.trace_path = Path(trace_path) if trace_path else None
    (store or RESUMED).claim(data, source)  # before anything is written: a refused resume leaves no trace
    _reopen_trace(run, data)
    _answer(run, saved, data, answer)
    return controller._drive()


def _waiting(run: ControllerRun, trace: str | Path | None, tools: Toolbox | None
             ) -> tuple[dict[str, Any], str | Path | None, Toolbox | None]:
    """A waiting run resumes from its saved state, with its own trace file and tools unless others are given."""
    if run.saved is None or run.status != "waiting_for_user":
        raise ConfigError(f"a run that stopped as {run.status} cannot be resumed; only a waiting_for_user run "
                          "continues with the user's answer")
    return run.saved, trace if trace is not None else run.trace_path, tools if tools is not None else run.toolbox


def _scenario_model(state: RunState, source: str) -> Model:
    """The stub model of the scenario a saved run came from, past the replies it already used."""
    if state.scenario is None:
        raise ConfigError(f"{source}: this saved run did not come from a scenario; pass model= to resume it")
    scenario = scenario_from_dict(state.scenario, f"{source}: scenario")
    return build_model(scenario, saved_task(state, source), skip=state.model_calls)


def _reopen_trace(run: Run, data: Mapping[str, Any]) -> None:
    """Start the in-memory trace from the file's lines (or the saved ones), so memory and file stay equal."""
    path = run.trace_path
    fresh = path is None or not path.exists() or path.stat().st_size == 0
    run.sink.lines = trace_prefix(data, None if fresh else path) or \
        [start_line(run).to_dict()] + [t.to_dict() for t in run.turns]
    if path is not None:
        run.sink.writer = TraceWriter(path, append=True)
        if fresh:  # a new file: write the configuration and the earlier lines first
            for line in run.sink.lines:
                run.sink.writer.write(line)


def _answer(run: Run, saved: SavedLike, data: dict[str, Any], answer: str) -> None:
    """Mark the pause as continued and hand the user's answer to the task (state version + 1)."""
    parameter = str(data.get("parameter") or "answer")
    mark_resumed(saved, data, run.meter.now)
    run.state.add_input(parameter, answer)
    run.state.end_turn()  # the answer came between two turns: it is not the next turn's change
    run.groups.append([Message("user", f"{USER_ANSWER_PREFIX} {parameter}: {answer}")])
    run.sink.write({"kind": "resume", "trace_id": run.trace_id, "turn": run.turn, "at_s": run.meter.now,
                    "parameter": parameter, "answer": answer, "state_version": run.state.version,
                    "from_version": int(data["paused_at_version"])})
