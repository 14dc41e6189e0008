"""Controller scenario files: the validated model of one file under ``data/controller/``, and loading it.

The format is the contract (extend it, don't break it): a task, a stub model, faults, a policy and
what must happen. Loading validates it, so a malformed file fails with one line naming the file,
the field and what was expected. Running and checking scenarios is :mod:`~agentloops.controller.running.scenarios`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from agentloops.controller.policy.error_policy import resolve_policy
from agentloops.controller.sim.faults import Fault
from agentloops.controller.stopping.status import StopStatus
from agentloops.controller.task.context import ContextPolicy
from agentloops.controller.task.tasks import Task, make_task
from agentloops.controller.vocabulary.errors import ConfigError, ControllerScenarioError, ControllerScenarioNotFound
from agentloops.controller.vocabulary.ledger import CallState
from agentloops.controller.vocabulary.tools import ASK_USER
from agentloops.errors import describe_validation_error
from agentloops.i18n import N_
from agentloops.resources import data_dir
from agentloops.response import Response
from agentloops.scenario import read_json_file


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AlternativeSpec(_Strict):
    """The tempting tool a planner tries after a permission denial."""

    tool: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)


class PlannerSpec(_Strict):
    """Options of a :class:`~agentloops.controller.sim.planners.TaskPlanner` (see its docstring)."""

    use_state: bool = True
    window: NonNegativeInt | None = None
    parallel: bool = False
    reask: NonNegativeInt = 0
    claim_early_after: NonNegativeInt | None = None
    bad_arguments: NonNegativeInt = 0
    alternative: AlternativeSpec | None = None
    ask_for_inputs: bool = False
    open_ended: bool = False
    seed: int | None = None
    p_repeat: float = Field(default=0.0, ge=0, le=1)
    p_early_claim: float = Field(default=0.0, ge=0, le=1)
    p_bad_arguments: float = Field(default=0.0, ge=0, le=1)
    p_forget: float = Field(default=0.0, ge=0, le=1)

    @model_serializer(mode="wrap")
    def _newer_options_when_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Leave ``open_ended`` out while it is off, so the traces of files written before it stay byte-identical."""
        data: dict[str, Any] = handler(self)
        if not self.open_ended:
            data.pop("open_ended", None)
        return data


class ModelSpec(_Strict):
    """Exactly one of: a planner (with options) or a script of replies; optionally, a provider outage.

    ``outage_after``: the provider fails (as an HTTP 503 would) on every call after this many replies.
    """

    planner: PlannerSpec | None = None
    script: tuple[Response, ...] | None = None
    outage_after: NonNegativeInt | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> ModelSpec:
        if (self.planner is None) == (self.script is None):
            raise ValueError("give exactly one of planner or script")
        if self.script is not None and not self.script:
            raise ValueError("a script needs at least one reply")
        return self


class TaskSpec(_Strict):
    """A task type name and its parameters."""

    type: str
    params: dict[str, Any] = Field(default_factory=dict)


class ControlsSpec(_Strict):
    """Outside signals: cancel before a turn, or at a simulated time."""

    cancel_at_turn: PositiveInt | None = None
    cancel_at_s: PositiveFloat | None = None


class Expectation(_Strict):
    """What must happen: stop status, reason code, action sequence, and optionally more.

    Attributes:
        status: the stop status.
        code: the stop reason code.
        actions: the exact action labels, in order.
        budget: for ``budget_exhausted``, which budget.
        call_states: final call states by call label (for parallel scenarios).
        events: the verdicts of refused deliveries, in order (``late``, ``duplicate``…).
    """

    status: StopStatus
    code: str = Field(min_length=1)
    actions: tuple[str, ...]
    budget: str | None = None
    call_states: dict[str, CallState] = Field(default_factory=dict)
    events: tuple[str, ...] | None = None


class ResumeSpec(_Strict):
    """The user's answer to a waiting task, and what must happen after it."""

    answer: str = Field(min_length=1)
    expect: Expectation


class ControllerScenario(_Strict):
    """One regression case for the controller.

    Attributes:
        name: identifier (lowercase, digits, dashes).
        title: one line for tables.
        title_zh: the title in Chinese (optional).
        teaches: what the case shows.
        task: task type and parameters.
        model: the stub model.
        faults: faults to inject.
        policy: a shipped policy name or a dict of policy fields.
        budget: budget overrides (numbers or {value, basis}).
        controls: outside signals.
        send_state: append the TASK STATE block to requests.
        context: context policy overrides.
        compactor: ``state`` (the safe memory) or ``careless`` (drops constraints and finished work).
        expect: the expected stop and actions.
        resume: for a waiting task, the answer and what follows.
    """

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=64)
    title: str = Field(min_length=1)
    title_zh: str | None = None
    teaches: str = Field(min_length=1)
    task: TaskSpec
    model: ModelSpec
    faults: tuple[Fault, ...] = ()
    policy: str | dict[str, Any] = "default"
    budget: dict[str, Any] = Field(default_factory=dict)
    controls: ControlsSpec | None = None
    send_state: bool = True
    context: ContextPolicy | None = None
    compactor: Literal["state", "careless"] = "state"
    expect: Expectation
    resume: ResumeSpec | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ControllerScenario:
        try:
            task = make_task(self.task.type, self.task.params, budget=self.budget or None, source="task")
            resolve_policy(self.policy)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        tools = set(task.toolbox().names())
        for i, fault in enumerate(self.faults):
            if fault.tool not in tools:
                raise ValueError(f"faults[{i}].tool {fault.tool!r} is not a tool of task {task.name} "
                                 f"(tools: {', '.join(sorted(tools))})")
            params = task.toolbox()[fault.tool].params
            for key in fault.match:  # a misspelt argument would match no call: the fault would silently never fire
                if key not in params:
                    raise ValueError(f"faults[{i}].match: {key!r} is not an argument of {fault.tool} "
                                     f"(arguments: {', '.join(params)})")
        for i, reply in enumerate(self.model.script or ()):
            for j, call in enumerate(reply.tool_calls):
                if call.name not in tools and call.name != ASK_USER:
                    raise ValueError(f"model.script[{i}].tool_calls[{j}].name {call.name!r} is not a tool of task "
                                     f"{task.name} (tools: {', '.join(sorted(tools))}, {ASK_USER})")
        if self.expect.status == "waiting_for_user" and self.resume is None:
            raise ValueError("a scenario that expects waiting_for_user must say how the user answers (resume)")
        return self

    def build_task(self) -> Task:
        """The task, with budget overrides applied."""
        return make_task(self.task.type, self.task.params, budget=self.budget or None, source=f"{self.name}: task")


SHIPPED_TITLES: tuple[str, ...] = (
    N_("two cities, every tool answers"),
    N_("the model re-asks for city A"),
    N_("a model that only sees its last two messages, without task state"),
    N_("one timeout, then success"),
    N_("persistent timeouts, fallback included"),
    N_("a model that declares success early"),
    N_("the main service changes its output format"),
    N_("empty results where the task needs data"),
    N_("invalid arguments twice"),
    N_("the user cancels mid-task"),
    N_("order lookup without an order id, then resumed"),
    N_("permission denied, with a tempting alternative tool"),
    N_("a high-risk write goes to a person"),
    N_("a document that does not exist"),
    N_("an empty result that is the answer"),
    N_("parallel fetches: one fails, one duplicated, one arrives after cancellation"),
    N_("a careless compaction drops constraints and finished work"),
    N_("the same careless compaction, caught by the check"),
    N_("the model provider goes down mid-task"),
    N_("an open-ended goal: find as much as you can"),
    N_("an empty result a careless loop would report as 'no result, please try again'"),
    N_("the wall-time budget runs out while three fetches are in flight"),
)
"""The shipped scenarios' titles, for the catalog: a title is data (English in the file) and shown through ``_()``
(``tests/test_readback.py`` checks every shipped scenario's title is here)."""


def scenario_from_dict(data: Any, source: str = "controller scenario") -> ControllerScenario:
    """Validate ``data``; errors name ``source``, the field and what was expected."""
    if not isinstance(data, dict):
        raise ControllerScenarioError(f"{source}: expected a JSON object at the top level; got {type(data).__name__}")
    try:
        return ControllerScenario.model_validate(data)
    except ValidationError as exc:
        raise ControllerScenarioError(f"{source}: {describe_validation_error(exc)}") from None


def read_scenario_file(path: str | Path) -> ControllerScenario:
    """Load and validate one controller scenario file."""
    data = read_json_file(path, ControllerScenarioError, ControllerScenarioNotFound)
    return scenario_from_dict(data, str(path))


def controller_scenarios_dir() -> Path:
    """Folder of the shipped controller scenarios."""
    return data_dir() / "controller"


@lru_cache(maxsize=1)
def _shipped() -> dict[str, ControllerScenario]:
    found: dict[str, ControllerScenario] = {}
    for path in sorted(controller_scenarios_dir().glob("*.json")):
        scenario = read_scenario_file(path)
        if scenario.name in found:
            raise ControllerScenarioError(f"{path}: name {scenario.name!r} is used by another shipped scenario")
        found[scenario.name] = scenario
    return found


def list_controller_scenarios() -> list[ControllerScenario]:
    """Shipped controller scenarios in file order."""
    return list(_shipped().values())


def controller_scenario_names() -> list[str]:
    """Names of the shipped controller scenarios."""
    return list(_shipped())


ScenarioLike = ControllerScenario | str | Path


def load_controller_scenario(scenario: ScenarioLike) -> ControllerScenario:
    """A scenario given itself, a shipped name, or a path to a JSON file.

    Raises:
        ControllerScenarioNotFound: no shipped scenario by that name and no such file.
        ControllerScenarioError: the file exists but is malformed.
    """
    if isinstance(scenario, ControllerScenario):
        return scenario
    if isinstance(scenario, str) and scenario in _shipped():
        return _shipped()[scenario]
    if not isinstance(scenario, (str, Path)):
        raise ControllerScenarioError(f"expected a ControllerScenario, a name or a path; got {type(scenario).__name__}")
    path = Path(scenario)
    if path.suffix == ".json" or path.exists():
        return read_scenario_file(path)
    raise ControllerScenarioNotFound(N_("unknown controller scenario {name}: not a shipped name ({names}) and not a "
                                        ".json file").format(name=repr(str(scenario)), names=", ".join(_shipped())))
