"""What this kernel session has checked: the verdicts every ``q.check()`` writes, and who shows them.

The record lives in the kernel's memory only: restart the kernel and it starts
empty, like Kaggle's. Once an exercise has passed it stays passed for the
session, even if a later edit breaks it, so the summary can say so and the
learner can go back. It knows exercises by id only; the summary that lists
them all is :mod:`~agentloops.exercises.progress`, which watches the record
and redraws when it changes.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Protocol

from agentloops.exercises.results import Status


@dataclass(frozen=True, slots=True)
class Entry:
    """What the session knows about one exercise.

    Attributes:
        last: the verdict of the latest check.
        passed: some check in this session said correct.
        checks: how many times it was checked.
        solution_viewed: ``q.solution()`` was called.
    """

    last: Status = "not attempted"
    passed: bool = False
    checks: int = 0
    solution_viewed: bool = False


class Watcher(Protocol):
    """A view of the record (a live summary widget) that redraws itself when the record changes."""

    def refresh(self) -> None: ...


_RECORD: dict[str, Entry] = {}
_WATCHERS: weakref.WeakSet[Watcher] = weakref.WeakSet()
"""The live views; weak, so a summary whose cell was cleared is not kept alive by the record."""


def record(exercise_id: str, status: Status) -> None:
    """Remember the verdict of one check and redraw every live view."""
    entry = _RECORD.get(exercise_id, Entry())
    _RECORD[exercise_id] = Entry(status, entry.passed or status == "correct", entry.checks + 1,
                                 entry.solution_viewed)
    _redraw()


def record_solution_viewed(exercise_id: str) -> None:
    """Remember that the learner looked at the solution."""
    entry = _RECORD.get(exercise_id, Entry())
    _RECORD[exercise_id] = Entry(entry.last, entry.passed, entry.checks, True)
    _redraw()


def entry(exercise_id: str) -> Entry:
    """The session's record for one exercise (empty when it was never checked)."""
    return _RECORD.get(exercise_id, Entry())


def reset() -> None:
    """Forget everything (a fresh start without restarting the kernel)."""
    _RECORD.clear()
    _redraw()


def watch(view: Watcher) -> None:
    """Redraw ``view`` whenever the record changes, for as long as something else keeps it alive."""
    _WATCHERS.add(view)


def _redraw() -> None:
    for view in list(_WATCHERS):
        view.refresh()
