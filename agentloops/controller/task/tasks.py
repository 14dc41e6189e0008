"""Tasks: a task type's validated parameters with a budget, and the check that says it is done.

"If you think you are done, stop" is not a completion condition. Each task
type (:mod:`~agentloops.controller.task.task_types`) turns its goal into work items and states, as a check over task
state, what counts as done — for example "a weather fact with a source for
every city". A model that stops calling tools is a *signal*; the run succeeds
only when :meth:`Task.assess` says ``complete``.

Budgets are configured per task type, every number with its basis: a single
lookup and a multi-source research task should not share a step cap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from pydantic import ValidationError

from agentloops.controller.policy.budgets import Budget
from agentloops.controller.task.joins import JoinRule
from agentloops.controller.task.reading_tasks import DocumentTask, RecallTask, ResearchTask
from agentloops.controller.task.state import TaskState
from agentloops.controller.task.task_types import OrderTask, RefundTask, TaskType, WeatherTask
from agentloops.controller.task.world import TOOLS
from agentloops.controller.vocabulary.errors import ConfigError
from agentloops.controller.vocabulary.render import Table
from agentloops.controller.vocabulary.tools import Toolbox
from agentloops.errors import describe_validation_error
from agentloops.i18n import N_, Phrase, Said

__all__ = ["TASK_TYPES", "Assessment", "Task", "completion_table", "make_task"]

Assessment = Literal["complete", "incomplete", "impossible"]
"""``complete``: the condition holds; ``impossible``: too many items were given up for it ever to hold."""


@dataclass(frozen=True)
class Task:
    """One task: its kind, holding the validated parameters, and its budget (derived values are computed once:
    both are frozen).

    Attributes:
        kind: the task type, as an instance holding this task's parameters (e.g. ``WeatherTask(cities=…)``).
        budget: the budget for this task (the type's, unless overridden).
    """

    kind: TaskType
    budget: Budget = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.budget is None:
            object.__setattr__(self, "budget", self.kind.budget)

    @cached_property
    def name(self) -> str:
        """The task type's name."""
        return self.kind.name

    @cached_property
    def condition(self) -> str:
        """The completion condition in words, with this task's numbers filled in."""
        return self.kind.condition.format(**self.kind.model_dump())

    @cached_property
    def items(self) -> tuple[str, ...]:
        """Work items."""
        return self.kind.items()

    @cached_property
    def need(self) -> int:
        """How many items must be done."""
        return self.kind.need()

    @cached_property
    def goal(self) -> str:
        """The goal in one sentence."""
        return self.kind.goal()

    @cached_property
    def constraints(self) -> tuple[str, ...]:
        """Hard constraints."""
        return self.kind.constraints()

    @cached_property
    def prompt(self) -> str:
        """The user's request."""
        return self.kind.prompt()

    @cached_property
    def granted(self) -> frozenset[str]:
        """Capabilities the caller holds."""
        return self.kind.capabilities()

    @cached_property
    def join(self) -> JoinRule:
        """The join rule for parallel calls."""
        return self.kind.join()

    def toolbox(self) -> Toolbox:
        """The tools offered for this task (built once per task: a toolbox is frozen)."""
        return self._toolbox

    @cached_property
    def _toolbox(self) -> Toolbox:
        return Toolbox.of(TOOLS[name] for name in self.kind.tools)

    def new_state(self) -> TaskState:
        """A fresh task state (version 0), with inputs known from the start."""
        state = TaskState(self.name, self.goal, self.constraints, self.items)
        state.inputs.update(self.kind.inputs())
        return state

    def assess(self, state: TaskState) -> Assessment:
        """Check the business completion condition over ``state``.

        ``complete`` needs ``need`` items done, each with a verified fact that
        names its source; ``impossible`` means even finishing every open item
        would not be enough.
        """
        return state.assess(self.need)

    def spec(self) -> dict[str, Any]:
        """JSON form: type name and parameters."""
        return {"type": self.name, "params": self.kind.model_dump(mode="json")}

    def with_budget(self, **values: Any) -> Task:
        """A copy with some budget limits replaced."""
        return Task(self.kind, self.budget.with_values(**values))


TASK_TYPES: dict[str, type[TaskType]] = {t.name: t for t in (
    WeatherTask, OrderTask, RefundTask, DocumentTask, RecallTask, ResearchTask)}
"""Every task type by name."""


def make_task(task_type: str | type[TaskType], params: Mapping[str, Any] | None = None, *,
              budget: Mapping[str, Any] | None = None, source: str = "task", **kwargs: Any) -> Task:
    """Build a task from a type (or its name) and parameters (validated; one-line errors).

    Example:
        >>> make_task("weather_compare", cities=["Shanghai", "Beijing"]).items
        ('weather:Shanghai', 'weather:Beijing')
    """
    if isinstance(task_type, str):
        try:
            kind = TASK_TYPES[task_type]
        except KeyError:
            raise ConfigError(f"{source}: unknown task type {task_type!r}; expected one of: "
                              f"{', '.join(TASK_TYPES)}") from None
    else:
        kind = task_type
    try:
        validated = kind.model_validate({**(params or {}), **kwargs})
    except ValidationError as exc:
        raise ConfigError(f"{source}: params.{describe_validation_error(exc)}") from None
    task = Task(validated)
    return task.with_budget(**budget) if budget else task


def completion_table() -> Table:
    """Every task type's business completion condition (evidence: completion conditions per task)."""
    rows = []
    for kind in TASK_TYPES.values():
        task = make_task(kind)
        title = Said(f"{kind.title} ({kind.title_zh})", kind.title_zh)  # no name twice in zh
        rows.append((kind.name, title, Phrase(kind.condition, **task.kind.model_dump()),
                     Phrase(N_("{need} of {total}: {items}"), need=task.need, total=len(task.items),
                            items=", ".join(task.items)),
                     Phrase(N_("yes") if kind.allows_not_found else N_("no")), task.join.describe()))
    return Table.build(N_("Business completion conditions"),
                       [N_("task"), N_("title"), N_("done when"), N_("items needed (defaults)"),
                        N_("'not found' is an answer"), N_("parallel join")], rows,
                       note=N_("A reply without tool calls is a signal; success also needs Task.assess(state) == "
                               "'complete'."))
