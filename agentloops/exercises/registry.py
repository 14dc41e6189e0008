"""Every exercise by id, grouped into sets — one set per learner notebook.

The registry is what the progress summary lists, what the solutions command
walks, and how a notebook cell tagged ``exercise:<id>`` finds its reference
solution. A set is a module under ``agentloops.exercises`` whose exercises are
:class:`~agentloops.exercises.exercise.Exercise` values at its top level;
:func:`load_all` imports every set and collects them (an exercise knows nothing of the registry).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from agentloops.errors import UsageError
from agentloops.exercises.exercise import Exercise
from agentloops.i18n import N_, _


@dataclass(frozen=True, slots=True)
class ExerciseSet:
    """One notebook's worth of exercises.

    Attributes:
        name: the module under ``agentloops.exercises`` that defines them.
        title: the notebook's title (an English message id: translate it where it is shown).
        notebook: where the exercises live, relative to ``notebooks/`` (a Part-1 set spans the lessons).
    """

    name: str
    title: str
    notebook: str


SETS: dict[str, ExerciseSet] = {
    s.name: s
    for s in (
        ExerciseSet("part1", N_("Part 1: one short exercise per lesson"),
                    "01-normal-run.ipynb … 05-caps-are-not-retries.ipynb"),
        ExerciseSet("stopping", N_("Stop the loop: the criterion, the cap, the wasted calls"),
                    "exercises/01-stop-the-loop.ipynb"),
        ExerciseSet("controlling", N_("Control the loop: repeats, error routes, completion"),
                    "exercises/02-control-the-loop.ipynb"),
        ExerciseSet("building", N_("Build the controller: your stages inside it, on the regression scenarios"),
                    "exercises/03-build-the-controller.ipynb"),
    )
}
"""The exercise sets in teaching order."""

EXERCISES: dict[str, Exercise] = {}
"""Exercise id → exercise, filled by :func:`load_all`."""


def register(exercise: Exercise) -> Exercise:
    """Add ``exercise`` to the registry (its id must be new and its set known)."""
    if exercise.set_name not in SETS:
        raise UsageError(_("exercise {id}: unknown set {set}; expected one of: {sets}").format(
            id=repr(exercise.id), set=repr(exercise.set_name), sets=", ".join(SETS)))
    known = EXERCISES.get(exercise.id)
    if known is not None and known is not exercise:
        raise UsageError(_("exercise id {id} is registered twice").format(id=repr(exercise.id)))
    EXERCISES[exercise.id] = exercise
    return exercise


def load_all() -> None:
    """Import every set module and register the exercises at its top level."""
    for name in SETS:
        module = importlib.import_module(f"agentloops.exercises.{name}")
        for value in vars(module).values():
            if isinstance(value, Exercise):
                register(value)


def all_exercises(set_name: str | None = None) -> list[Exercise]:
    """Every exercise in teaching order, or only those of one set.

    Raises:
        UsageError: ``set_name`` is not a known set.
    """
    if set_name is not None and set_name not in SETS:
        raise UsageError(_("unknown exercise set {set}; expected one of: {sets}").format(set=repr(set_name),
                                                                                        sets=", ".join(SETS)))
    load_all()
    chosen = [e for e in EXERCISES.values() if set_name is None or e.set_name == set_name]
    order = list(SETS)
    return sorted(chosen, key=lambda e: (order.index(e.set_name), e.number))


def get_exercise(exercise_id: str) -> Exercise:
    """The exercise called ``exercise_id``.

    Raises:
        UsageError: no such exercise (the message lists them).
    """
    load_all()
    try:
        return EXERCISES[exercise_id]
    except KeyError:
        known = ", ".join(e.id for e in all_exercises())  # teaching order, whatever the import order was
        raise UsageError(_("unknown exercise {id}; expected one of: {known}").format(id=repr(exercise_id),
                                                                                    known=known)) from None
