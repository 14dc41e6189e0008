"""Task state, kept outside the transcript: what is done, what is missing, what failed.

The transcript is a log; the task state is the answer to "what is still
missing?". The controller updates it from tool results — never from what the
model says — and sends a compact rendering of it to the model every turn, so
a model that cannot find an old result in a long context still knows that
city A has been looked up.

Every change increases :attr:`TaskState.version` (the trace shows it move).
Only *progress* — a fact, an item settled, a user input — increases
:attr:`TaskState.progress_version`, and that is the version an action's
fingerprint uses (:mod:`agentloops.controller.stopping.progress`): the same call with
no progress since cannot bring anything new. (A recorded failure changes the
state but is not progress; if it moved the fingerprint, a call that fails the
same way every time would never look repeated.) Once a task has stopped, every
mutator raises :class:`~agentloops.controller.vocabulary.errors.TaskFinishedError`; late
and duplicate events are refused earlier, by the ledger in
:mod:`agentloops.controller.vocabulary.ledger`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field, PlainSerializer, TypeAdapter, with_config
from typing_extensions import TypedDict  # (pydantic reads typing's only from Python 3.12)

from agentloops.controller.vocabulary.errors import TaskFinishedError
from agentloops.controller.vocabulary.readback import readable
from agentloops.i18n import N_, Phrase

ItemStatus = Literal["open", "done", "missing"]
"""``open``: still to do; ``done``: a verified fact with a source; ``missing``: given up, with a reason."""


ALREADY_KNOWN = readable(N_("{item} already known from turn {turn} ({same}, source {source})"))
SAME_VALUE = readable(N_("same value"))
NOT_AN_ITEM = readable(N_("{item} is not an item of this task"))
NEW_FACT = readable(N_("+fact {item} = {summary} [{source}]"))
MISSING = readable(N_("missing {item}: {reason}"))
FAILURE = readable(N_("failure {tool}: {status}"))
INPUT = readable(N_("input {name} = {value}"))
WAITING = readable(N_("waiting for {name}"))
"""The state delta's lines (English data in the trace, read back in the learner's language where shown)."""


@dataclass(frozen=True, slots=True)
class Fact:
    """A verified piece of the answer and where it came from.

    Attributes:
        item: the work item it settles, e.g. ``weather:Beijing``.
        value: the data (JSON-compatible).
        summary: one short line for people and for the model.
        source: the source pointer: service, tool and call id.
        turn: the turn that produced it.
        ref: where the full output is stored when it was kept out of the context.
    """

    __pydantic_config__ = ConfigDict(extra="forbid")  # saved runs and stop records hold this record as it is

    item: str
    value: Any
    summary: str
    source: str
    turn: int
    ref: str | None = None


@with_config(ConfigDict(extra="forbid"))
class StateDelta(TypedDict):
    """What one turn changed in the task state, and why it changed nothing when it did not — as the trace's
    turn line holds it (a plain dict; this type checks one read back).

    Attributes:
        version_before: state version when the turn began.
        version_after: state version when it ended.
        changes: one line per change (``+fact``, ``missing``, ``failure``, ``input``…).
        unchanged: why an observation changed nothing (``already known…``).
        progress: a fact, an item status or a user input was added (failures alone are not progress).
    """

    version_before: int
    version_after: int
    changes: list[str]
    unchanged: list[str]
    progress: bool


DELTA_JSON: TypeAdapter[StateDelta] = TypeAdapter(StateDelta)
"""Checks a state delta read back from a trace."""


@with_config(ConfigDict(extra="forbid"))
class Failure(TypedDict):
    """One failed tool attempt in the "already tried" list."""

    tool: str
    status: str
    summary: str
    turn: int


def _facts_by_item(value: Any) -> Any:
    """Facts are kept by item and saved as a list (in the order they were added)."""
    if not isinstance(value, list):
        raise ValueError(f"expected a list of facts; got {type(value).__name__}")
    return {fact.get("item") if isinstance(fact, dict) else getattr(fact, "item", str(i)): fact
            for i, fact in enumerate(value)}


Facts = Annotated[dict[str, Fact], BeforeValidator(_facts_by_item), PlainSerializer(lambda facts: list(facts.values()))]
"""Done item → its fact; a list of facts in a saved run."""


@dataclass(init=False, repr=False)
class TaskState:
    """The task's working memory, owned by the controller; its fields are what a saved run keeps.

    Attributes:
        task: task type name.
        goal: the goal in one sentence.
        constraints: hard constraints that no step and no compaction may drop.
        items: work item → status.
        reasons: missing item → why it was given up (one sentence, shown to people).
        codes: missing item → the reason code (``not_found``, ``timeout``, ``budget:retries``…),
            kept apart from the sentence so a stop never has to parse it back out.
        facts: done item → its verified fact.
        inputs: what the user supplied (for example ``order_id``).
        waiting_for: the open question while the task waits for the user.
        failures: failed tool attempts (tool, status, summary, turn), the "already tried" list.
        version: increases on every change.
        progress_count: how many changes were progress (a fact, an item settled, a user input);
            also available as :attr:`progress_version`.
        finished: the stop status once the task has stopped, else ``None``.
    """

    __pydantic_config__ = ConfigDict(extra="forbid")

    task: str
    goal: str
    constraints: tuple[str, ...]
    items: dict[str, ItemStatus]
    reasons: dict[str, str]
    codes: Annotated[dict[str, str], Field(default_factory=dict)]  # (older saved runs kept no reason codes)
    facts: Facts
    inputs: dict[str, str]
    waiting_for: dict[str, str] | None
    failures: list[Failure]
    version: Annotated[int, Field(ge=0)]
    progress_count: Annotated[int, Field(ge=0, default=0)]  # (nor this count)
    finished: str | None

    def __init__(self, task: str, goal: str, constraints: tuple[str, ...], items: tuple[str, ...]) -> None:
        self.task, self.goal, self.constraints = task, goal, tuple(constraints)
        self.items = {item: "open" for item in items}
        self.reasons, self.codes, self.facts, self.inputs = {}, {}, {}, {}
        self.waiting_for, self.failures, self.version, self.progress_count, self.finished = None, [], 0, 0, None
        self.__post_init__()

    def __post_init__(self) -> None:  # (pydantic calls it for a state read from a saved run)
        self._start, self._progress = self.version, False  # the changes of the turn being collected
        self._changes: list[str] = []
        self._unchanged: list[str] = []

    @property
    def progress_version(self) -> int:
        """Increases only with progress (a fact, an item settled, a user input): the fingerprint's version."""
        return self.progress_count

    # -- turn bookkeeping ---------------------------------------------------------------
    def end_turn(self) -> StateDelta:
        """The delta since the state was made (or read back) or since the last :meth:`end_turn`, which starts
        collecting the next turn's changes afresh (what changes between two turns, a resumed answer for instance,
        is dropped by calling it once more)."""
        delta: StateDelta = {"version_before": self._start, "version_after": self.version, "changes": self._changes,
                             "unchanged": self._unchanged, "progress": self._progress}
        self._start, self._changes, self._unchanged, self._progress = self.version, [], [], False
        return delta

    def _refuse(self, change: str) -> TaskFinishedError:
        return TaskFinishedError(Phrase(N_("task already stopped ({status}); refused change: {change}"),
                                        status=self.finished, change=change))

    def _bump(self, change: str, progress: bool) -> None:
        if self.finished is not None:
            raise self._refuse(change)
        self.version += 1
        self.progress_count += int(progress)
        self._changes.append(change)
        self._progress = self._progress or progress

    # -- mutators -------------------------------------------------------------------------
    def add_fact(self, fact: Fact) -> bool:
        """Record a verified fact; returns False (and says why) when it adds nothing."""
        if self.finished is not None:
            raise self._refuse(Phrase(N_("fact {item}"), item=fact.item))
        known = self.facts.get(fact.item)
        if known is not None:
            same = SAME_VALUE if known.value == fact.value else "a different value; the first verified one is kept"
            self._unchanged.append(ALREADY_KNOWN.format(item=fact.item, turn=known.turn, same=same,
                                                        source=known.source))
            return False
        if fact.item not in self.items:
            self._unchanged.append(NOT_AN_ITEM.format(item=fact.item))
            return False
        self._bump(NEW_FACT.format(item=fact.item, summary=fact.summary, source=fact.source), progress=True)
        self.facts[fact.item] = fact
        self.items[fact.item] = "done"
        self.reasons.pop(fact.item, None)
        self.codes.pop(fact.item, None)
        return True

    def mark_missing(self, item: str, reason: str, code: str | None = None) -> bool:
        """Give up an open item, keeping the reason for the user and the code for the record.

        Args:
            item: the open item.
            reason: one sentence for people.
            code: the reason code (for example ``not_found`` or ``budget:retries``); ``None`` when
                there is no more specific one than "cannot be obtained".
        """
        if self.finished is not None:
            raise self._refuse(Phrase(N_("missing {item}"), item=item))
        if self.items.get(item) != "open":
            return False
        self._bump(MISSING.format(item=item, reason=reason), progress=True)
        self.items[item] = "missing"
        self.reasons[item] = reason
        if code is not None:
            self.codes[item] = code
        return True

    def record_failure(self, tool: str, status: str, summary: str, turn: int) -> None:
        """Remember a failed attempt so later turns (and compactions) know it was tried."""
        self._bump(FAILURE.format(tool=tool, status=status), progress=False)
        self.failures.append({"tool": tool, "status": status, "summary": summary, "turn": turn})

    def add_input(self, name: str, value: str) -> None:
        """Record what the user supplied and stop waiting."""
        self._bump(INPUT.format(name=name, value=repr(value)), progress=True)
        self.inputs[name] = value
        self.waiting_for = None

    def set_waiting(self, name: str, question: str) -> None:
        """Remember the one question the task is waiting on."""
        self._bump(WAITING.format(name=name), progress=False)
        self.waiting_for = {"input": name, "question": question}

    def note(self, text: str) -> None:
        """Explain an observation that changed nothing (shown in the trace's state delta)."""
        self._unchanged.append(text)

    def finish(self, status: str) -> None:
        """Freeze the task: from now on every mutator raises."""
        if self.finished is not None:
            raise TaskFinishedError(f"task already stopped ({self.finished}); cannot stop again as {status}")
        self.finished = status

    # -- views ------------------------------------------------------------------------------
    def assess(self, need: int) -> Literal["complete", "incomplete", "impossible"]:
        """The business completion condition over this state (:func:`assess`, the package's stage)."""
        return assess(self.items, self.facts, need)

    def open_items(self) -> list[str]:
        """Items still to do, in task order."""
        return [item for item, status in self.items.items() if status == "open"]

    def done_items(self) -> list[str]:
        """Items settled by a verified fact."""
        return [item for item, status in self.items.items() if status == "done"]

    def missing_items(self) -> dict[str, str]:
        """Given-up items and why."""
        return {item: self.reasons.get(item, "") for item, status in self.items.items() if status == "missing"}

    def missing_codes(self) -> dict[str, str | None]:
        """Given-up items and their reason codes (``None`` when none was given)."""
        return {item: self.codes.get(item) for item, status in self.items.items() if status == "missing"}

    def failure_summary(self) -> list[str]:
        """The "already tried" list: tool, status and how often, in first-seen order."""
        tries = Counter((failure["tool"], failure["status"]) for failure in self.failures)
        return [f"{tool}: {status}" + (f" ×{n}" if n > 1 else "") for (tool, status), n in tries.items()]

    def for_model(self, budget_left: Mapping[str, float | None] | None = None) -> str:
        """The compact rendering sent to the model each turn (``TASK STATE`` + JSON); ``budget_left`` is what
        remains of each budget, shown but for those off and the context size (the largest request, not a quantity
        spent)."""
        view: dict[str, Any] = {
            "version": self.version, "goal": self.goal, "constraints": list(self.constraints),
            "done": {item: f"{fact.summary} [{fact.source}]" for item, fact in self.facts.items()},
            "open": self.open_items(), "missing": self.missing_items(), "inputs": self.inputs,
            "tried": self.failure_summary(),
        }
        if budget_left is not None:
            view["budget_left"] = {k: v for k, v in budget_left.items() if v is not None and k != "context_tokens"}
        return "TASK STATE\n" + json.dumps(view, ensure_ascii=False)

    def snapshot(self) -> dict[str, Any]:
        """Everything, JSON-compatible: for stop records (a saved run holds the state itself)."""
        return STATE_JSON.dump_python(self, mode="json")  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return (f"<TaskState {self.task} v{self.version}: done {self.done_items()} open {self.open_items()} "
                f"missing {list(self.missing_items())}{' finished ' + self.finished if self.finished else ''}>")


STATE_JSON: TypeAdapter[TaskState] = TypeAdapter(TaskState)
"""Dumps a :class:`TaskState` as saved runs and stop records hold it, and validates one read back."""


def sourced(facts: Mapping[str, Fact]) -> int:
    """How many facts name their source: what the completion stage counts as done."""
    return sum(1 for fact in facts.values() if fact.source)


def assess(items: Mapping[str, str], facts: Mapping[str, Fact], need: int
           ) -> Literal["complete", "incomplete", "impossible"]:
    """The package's completion stage: ``need`` items done, each with a fact that names its source.

    ``impossible`` when even finishing every open item would not be enough. A learner's own
    completion check has this shape (items → ``open``/``done``/``missing``, facts by item, the
    number of items the task needs) and is passed in as ``run_scenario(…, completion=…)``.
    """
    done = sourced(facts)
    if done >= need:
        return "complete"
    if done + sum(1 for status in items.values() if status == "open") < need:
        return "impossible"
    return "incomplete"
