"""Saved runs: the state a paused task needs to continue later, even in another process.

A task waiting for the user must not keep a loop spinning in the background.
It saves what it has — task state, budgets used, clock, transcript, action
fingerprints, fault counters, the outputs it stored outside the context — and
stops. :func:`~agentloops.controller.running.resuming.resume` continues from exactly
there once the user answers, and only once: a saved run records the state
version it paused at, and a second resume of the same pause is refused (see
:func:`check_not_resumed`).

A saved file is the JSON view of one :class:`~agentloops.controller.persistence.run_state.RunState`
(versioned; older schemas still load), so a hand-edited or truncated file fails in one line
that names the field — never with a traceback from deep inside ``resume``. Whether a pause
was already continued is decided here, on (trace id, paused version), not on the caller's dict.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentloops.controller.persistence.run_state import RunState
from agentloops.controller.persistence.trace import read_trace, read_trace_lines
from agentloops.controller.vocabulary.errors import ConfigError, TraceError
from agentloops.errors import describe_validation_error
from agentloops.i18n import N_
from agentloops.jsonfile import read_json

SavedRun = RunState
"""The earlier name of :class:`~agentloops.controller.persistence.run_state.RunState` (a saved run is its JSON view)."""


SavedLike = RunState | Mapping[str, Any] | str | Path
"""A saved run as :func:`~agentloops.controller.running.resuming.resume` takes it: the state, its JSON, or a
file."""


def load_state(saved: SavedLike) -> RunState:
    """Validate a saved run given as a state, a dict or a JSON file (any readable schema) into a :class:`RunState`.

    Raises:
        ConfigError: one line naming the source and the field; or a run that is not waiting for the user.
    """
    source = "saved run"
    if isinstance(saved, RunState):
        state = saved
    else:
        if isinstance(saved, (str, Path)):
            source = str(saved)
            data: Any = read_json(saved, error=ConfigError,
                                  what=N_("saved-run file (written by 'controller run --save')"))
        else:
            data = dict(saved)
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: expected a JSON object; got {type(data).__name__}")
        try:
            state = RunState.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"{source}: {describe_validation_error(exc)}") from None
    if state.status != "waiting_for_user":
        raise ConfigError(f"{source}: status {state.status!r} cannot be resumed; only a waiting_for_user run "
                          "continues with a user's answer (a handed-off run is picked up by a person)")
    return state


def load_saved(saved: SavedLike) -> dict[str, Any]:
    """:func:`load_state`, as the saved-run JSON (its ``to_saved`` view)."""
    return load_state(saved).to_saved()


def check_not_resumed(data: Mapping[str, Any], source: str, trace_path: str | Path | None) -> None:
    """Refuse to continue a pause that has already been continued.

    Two witnesses, either one enough: the saved run itself (marked when resumed), and the
    trace, which shows a ``resume`` line for this pause or a turn after it.

    Raises:
        ConfigError: in one line, naming the saved run, the pause and what shows it continued.
    """
    turn, version = data["turn"], data["paused_at_version"]
    again = "a paused task continues only once; resume from the saved state of its latest stop instead"
    if data.get("resumed"):
        raise ConfigError(f"{source}: already resumed (it paused at turn {turn}, state v{version}); {again}")
    if trace_path is None or not Path(trace_path).exists():
        return
    try:
        trace = read_trace(trace_path)
    except TraceError:
        return  # an unreadable trace is reported when it is appended to, not here
    if trace.trace_id != data["trace_id"]:
        return
    later = [r.turn for r in trace.resumes if r.turn >= turn] + [t.turn for t in trace.turns if t.turn > turn]
    if later:
        raise ConfigError(f"{source}: trace {trace_path} shows run {data['trace_id']} already continued after turn "
                          f"{turn} (state v{version}); {again}")


class PauseStore:
    """Which pauses have been continued, keyed on (trace id, paused state version).

    The caller's dict is no witness: a queue that redelivers a pause hands over a
    *copy*, and a copy carries no mark. This store is. Each pause also carries a
    random ``pause_id``, so the same pause delivered twice is refused while a new run
    that reuses a seeded trace id (a notebook cell run again) is not mistaken for it.
    The trace file, when there is one, is the second witness (:func:`check_not_resumed`).
    """

    def __init__(self) -> None:
        self.claims: dict[tuple[str, int], str | None] = {}

    def claim(self, data: Mapping[str, Any], source: str) -> None:
        """Record that this pause is being continued; refuse if it already was.

        Raises:
            ConfigError: the same pause (trace id, version and pause id) was continued before.
        """
        key = (str(data["trace_id"]), int(data["paused_at_version"]))
        pause_id = data.get("pause_id")
        if key in self.claims and self.claims[key] == pause_id:
            raise ConfigError(f"{source}: run {key[0]} was already resumed from its pause at state v{key[1]} "
                              "(the same pause delivered twice); a paused task continues only once")
        self.claims[key] = pause_id


RESUMED = PauseStore()
"""The process-wide store :func:`~agentloops.controller.running.resuming.resume` claims pauses in by default."""


def mark_resumed(saved: SavedLike, data: dict[str, Any], at_s: float) -> None:
    """Record in the saved run (the dict, or the file) that its pause has been continued.

    A :class:`RunState` is frozen and carries no mark: the pause store is the witness for it.
    """
    marker = {"at_turn": data["turn"], "from_version": data["paused_at_version"], "at_s": at_s}
    if isinstance(saved, (str, Path)):
        path = Path(saved)
        try:
            path.write_text(json.dumps({**data, "resumed": marker}, ensure_ascii=False, indent=1), encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"{path}: cannot mark the saved run as resumed ({exc.strerror or 'not writable'})") \
                from None
    elif isinstance(saved, MutableMapping):
        saved["resumed"] = marker


def trace_prefix(data: Mapping[str, Any], path: Path | None) -> list[dict[str, Any]] | None:
    """The lines a resumed run's in-memory trace starts with: the file's own (the record of truth), else the
    lines saved with the pause; ``None`` for an older saved run that kept neither."""
    if path is not None:
        try:
            lines, _ = read_trace_lines(path)
        except TraceError:
            lines = []
        if lines and lines[0].get("trace_id") == data["trace_id"]:
            return lines
    saved = data.get("trace_lines")
    return [dict(line) for line in saved] if saved else None


def portable_trace_path(trace: Path | None, saved_file: Path) -> str | None:
    """``trace`` relative to the folder of ``saved_file`` when it lies there or below; otherwise ``None``."""
    if trace is None:
        return None
    try:
        return trace.resolve().relative_to(saved_file.resolve().parent).as_posix()
    except ValueError:
        return None


def resume_trace_path(saved: SavedLike, state: RunState, trace: str | Path | None) -> str | Path | None:
    """The trace a resume of ``saved`` appends to: ``trace`` if given, else the saved run's own (for a file, only
    beside it: :func:`trace_beside`)."""
    if trace is not None:
        return trace
    if isinstance(saved, (str, Path)):
        return trace_beside(Path(saved), state.trace_path)
    return state.trace_path


def unwitnessed_resume(saved: SavedLike, trace: str | Path | None) -> bool:
    """Whether a resume of ``saved`` has no trace file to check for an earlier resume of the same pause.

    The mark :func:`mark_resumed` writes lives in one file: a *copy* taken before the resume carries no
    mark, and another process's :class:`PauseStore` is empty. Only a trace file both copies share can then
    refuse the second resume; without one, the caller is told that nobody can know.
    """
    path = resume_trace_path(saved, load_state(saved), trace)
    return path is None or not Path(path).is_file()


def trace_beside(saved_file: Path, recorded: str | None) -> Path | None:
    """Where a saved *file* says its trace is: only beside or below it — never absolute, never up with ``..``.

    Raises:
        ConfigError: the recorded path is absolute or climbs out of the saved file's folder.
    """
    if not recorded:
        return None
    relative = Path(recorded)
    if relative.is_absolute() or ".." in relative.parts:
        raise ConfigError(f"{saved_file}: trace_path {recorded!r} must be relative to the saved file's folder, "
                          "with no '..'; pass --trace to choose where the trace goes")
    path = saved_file.parent / relative
    try:
        os.stat(path)
    except FileNotFoundError:
        pass  # the trace starts there
    except (OSError, ValueError) as exc:  # a name the system refuses (too long, a NUL byte): the saved file's fault
        raise ConfigError(f"{saved_file}: trace_path {recorded!r:.80}: not a usable file name "
                          f"({getattr(exc, 'strerror', None) or exc})") from None
    return path
