"""No-progress detection: an action fingerprint, and the rule that tells a loop from a retry.

The fingerprint of an action is (tool, normalised arguments, progress version).
The progress version (:attr:`~agentloops.controller.task.state.TaskState.progress_version`)
moves only when the task learns something: a fact, an item settled, a user
input. A failure is recorded in state but is not progress, so a call that
fails the same way twice has the same fingerprint both times.

If the same fingerprint comes round again, nothing the action depends on has
changed since last time; if that last time brought no new observation, doing
it again cannot either — so the run stops *before* the call, long before any
step cap. Two exceptions keep legitimate work alive:

- the last sighting ended in a transient failure (a timeout, a rate limit):
  trying again is a *retry*, governed by the shared retry budget, not a loop;
- progress happened in between (new facts arrived): the fingerprint differs,
  so the action is judged afresh.

(The controller does not record calls whose arguments were rejected as
sightings at all: the error policy's repair allowance bounds those, and its
stop — "invalid arguments again" — names the real problem.)

A second, coarser detector counts turns in a row that added nothing (no fact,
no item settled, no user input); it catches a model that alternates between
two useless actions.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import ConfigDict, Field, PlainSerializer, PlainValidator, TypeAdapter, ValidationError

from agentloops.controller.vocabulary.readback import readable
from agentloops.controller.vocabulary.tools import TRANSIENT, Param
from agentloops.errors import describe_validation_error
from agentloops.i18n import N_


def normalize_value(value: Any, *, casefold: bool = False) -> Any:
    """Canonical form of one argument value: whole floats as ints, trimmed strings, no ``None`` members
    (:func:`normalize_args` writes the keys sorted).

    Strings lose only their surrounding spaces unless ``casefold`` is set (a parameter declared
    ``normalize="casefold"``): then case and inner spacing do not matter either. Ids stay
    case-sensitive by default, so a model that corrects ``a`` to ``A`` makes a new call.
    """
    if isinstance(value, str):
        return " ".join(value.split()).casefold() if casefold else value.strip()
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value):
            return int(value)
        return round(value, 9)
    if isinstance(value, Mapping):
        return {str(k): normalize_value(v, casefold=casefold) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [normalize_value(v, casefold=casefold) for v in value]
    return value


def normalize_args(args: Mapping[str, Any] | None, params: Mapping[str, Param] | None = None) -> str:
    """Arguments as canonical JSON text: key order, surrounding spaces and ``None`` values do not matter.

    ``params`` (the tool's schema) says, per parameter, whether case matters too
    (:attr:`~agentloops.controller.vocabulary.tools.Param.normalize`); without it, every value is compared exactly.
    """
    if args is None:
        return "<unparseable>"
    schema = params or {}
    canonical = {str(key): normalize_value(value, casefold=key in schema and schema[key].normalize == "casefold")
                 for key, value in args.items() if value is not None}
    return json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


ALREADY_DONE = readable(N_("{tool}{args} was already done at turn {turn} with the same progress (v{version}) and "
                           "brought no new observation ({why}); nothing it depends on has changed since"))
"""Why a repeat changes nothing (English data in the trace and the stop record; read back where shown)."""


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """(tool, normalised arguments, progress version): what an action depends on.

    ``state_version`` is the version the caller passes; the controller passes the
    task's progress version (see the module docstring for why not every change).
    """

    tool: str
    args: str
    state_version: int

    def __str__(self) -> str:
        return f"{self.tool}{self.args}@v{self.state_version}"


def fingerprint(tool: str, args: Mapping[str, Any] | None, state_version: int,
                params: Mapping[str, Param] | None = None) -> Fingerprint:
    """The fingerprint of calling ``tool`` with ``args`` at ``state_version`` (the controller passes the
    progress version); ``params`` declares which parameters ignore case."""
    return Fingerprint(tool, normalize_args(args, params), state_version)


@dataclass(frozen=True, slots=True)
class Sighting:
    """The last time a fingerprint was acted on."""

    turn: int
    status: str
    new_observation: bool
    why: str


@dataclass(frozen=True, slots=True)
class Repeat:
    """A verdict: this action repeats an earlier one that brought nothing new.

    Attributes:
        fingerprint: the repeated fingerprint.
        first_turn: the turn of the earlier, fruitless attempt.
        why: why the state did not change back then, in words.
    """

    fingerprint: Fingerprint
    first_turn: int
    why: str

    def explain(self) -> str:
        """One sentence for the trace and the stop record."""
        fp = self.fingerprint
        return ALREADY_DONE.format(tool=fp.tool, args=fp.args, turn=self.first_turn, version=fp.state_version,
                                   why=self.why)


RepeatCheck = Callable[[Fingerprint, "Sighting | None"], bool]
"""The repeat stage's shape: (the action's fingerprint, its last sighting or ``None``) → is it a repeat?"""


def is_repeat(fp: Fingerprint, seen: Sighting | None) -> bool:
    """The package's repeat stage: the same action at the same progress, whose last attempt brought
    nothing new — unless that attempt failed transiently (a legitimate retry, bounded by the retry budget)."""
    return seen is not None and not seen.new_observation and seen.status not in TRANSIENT


_ROWS = TypeAdapter(list[tuple[str, str, int, int, str, bool, str]])
"""A saved run's sightings: one row per fingerprint, ``[tool, args, version, turn, status, new_observation, why]``."""


def _from_rows(value: Any) -> Any:
    if isinstance(value, dict) and all(isinstance(k, Fingerprint) and isinstance(v, Sighting)
                                       for k, v in value.items()):
        return value  # the monitor's own mapping; a JSON object in a saved file is not one
    try:
        rows = _ROWS.validate_python(value)
    except ValidationError as exc:
        raise ValueError(describe_validation_error(exc)) from None
    return {Fingerprint(*row[:3]): Sighting(*row[3:]) for row in rows}


Sightings = Annotated[dict[Fingerprint, Sighting], PlainValidator(_from_rows), PlainSerializer(
    lambda seen: [[fp.tool, fp.args, fp.state_version, s.turn, s.status, s.new_observation, s.why]
                  for fp, s in seen.items()])]
"""Fingerprint → its last sighting; rows in a saved run."""


@dataclass(init=False)
class ProgressMonitor:
    """Remembers fingerprints and idle turns; answers "is this a loop?" before each action.

    Its fields are what a saved run keeps; the repeat stage is not saved (a resume passes it again).
    """

    __pydantic_config__ = ConfigDict(extra="forbid")

    idle: Annotated[int, Field(ge=0)]
    sightings: Sightings

    def __init__(self, repeat: RepeatCheck | None = None) -> None:
        self.idle, self.sightings = 0, {}
        self.repeat: RepeatCheck = repeat or is_repeat
        """The repeat stage: the package's :func:`is_repeat`, or a learner's function of the same shape."""

    def __post_init__(self) -> None:
        self.repeat = is_repeat  # read back from a saved run: a resume passes its own stage again

    def check(self, fp: Fingerprint) -> Repeat | None:
        """A :class:`Repeat` if acting on ``fp`` again cannot bring anything new, else ``None``."""
        seen = self.sightings.get(fp)
        if not self.repeat(fp, seen):
            return None
        if seen is None:  # a replaced stage may flag a first attempt: say so rather than invent a turn
            return Repeat(fp, 0, "the repeat check flagged an action never taken before")
        return Repeat(fp, seen.turn, seen.why)

    def record(self, fp: Fingerprint, turn: int, status: str, new_observation: bool, why: str = "") -> None:
        """Remember the outcome of acting on ``fp``."""
        self.sightings[fp] = Sighting(turn, status, new_observation, why or ("new observation" if new_observation
                                                                             else "no new observation"))


MONITOR_JSON: TypeAdapter[ProgressMonitor] = TypeAdapter(ProgressMonitor)
"""Dumps a :class:`ProgressMonitor` as saved runs hold it, and validates one read back."""
