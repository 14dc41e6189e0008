"""Task types: each declares its business completion condition, its tools and its budgets.

"If you think you are done, stop" is not a completion condition. Each task
type here turns its goal into work items and states, as a check over task
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
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt, ValidationError, model_validator

from agentloops.controller.budgets import Budget, Limit
from agentloops.controller.errors import ConfigError
from agentloops.controller.parallel import JoinRule
from agentloops.controller.render import Table
from agentloops.controller.state import TaskState
from agentloops.controller.tools import Toolbox, ToolResult
from agentloops.controller.world import ORDERS, TOOLS, WEATHER
from agentloops.errors import describe_validation_error

Assessment = Literal["complete", "incomplete", "impossible"]
"""``complete``: the condition holds; ``impossible``: too many items were given up for it ever to hold."""



class _Params(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class WeatherParams(_Params):
    """Compare the weather of two (or more) cities."""

    cities: tuple[str, ...] = Field(default=("Shanghai", "Beijing"), min_length=1)


class OrderParams(_Params):
    """Where is my order? ``order_id`` is ``None`` when the user did not say which."""

    order_id: str | None = None


class RefundParams(_Params):
    """Refund an amount on an order, with the capabilities the caller holds."""

    order_id: str = "A-1042"
    amount: PositiveFloat = 25.0
    granted: tuple[str, ...] = ("orders:read",)


class DocumentParams(_Params):
    """Read one field of an archived document's metadata."""

    document_id: str = "B"
    field: Literal["published", "version", "title"] = "published"


class RecallParams(_Params):
    """Is there any recall notice for a product?"""

    product: str = "kettle-k9"


class ResearchParams(_Params):
    """Summarise a topic from several sources; ``minimum`` of them must be read."""

    topic: str = "why agent loops fail to stop"
    sources: tuple[str, ...] = Field(default=("s1", "s2", "s3", "s4"), min_length=1)
    minimum: PositiveInt = 2
    join_timeout_s: PositiveFloat = 10.0

    @model_validator(mode="after")
    def _minimum_fits(self) -> ResearchParams:
        if self.minimum > len(self.sources):
            raise ValueError(f"minimum {self.minimum} is more than the {len(self.sources)} sources given")
        return self


class TaskType:
    """A kind of task, as a small class: its completion condition, tools and budgets as attributes, and as
    methods how its parameters become work items, facts and an answer. One subclass per kind of task;
    the methods take the validated parameters ``p``.

    Attributes:
        name: identifier.
        title: one line.
        title_zh: the same in Chinese.
        condition: the business completion condition, in words (checked by :meth:`Task.assess`).
        tools: the tools offered to the model.
        budget: the budgets, each with its basis.
        allows_not_found: an empty result may settle an item as "none found".
        params: the pydantic model of its parameters.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    title_zh: ClassVar[str]
    condition: ClassVar[str]
    tools: ClassVar[tuple[str, ...]]
    budget: ClassVar[Budget]
    allows_not_found: ClassVar[bool] = False
    params: ClassVar[type[_Params]]

    def items(self, p: Any) -> tuple[str, ...]:
        """The work items."""
        raise NotImplementedError

    def need(self, p: Any) -> int:
        """How many items must be done."""
        return len(self.items(p))

    def goal(self, p: Any) -> str:
        """The goal in one sentence."""
        raise NotImplementedError

    def constraints(self, p: Any) -> tuple[str, ...]:
        """Hard constraints."""
        return ()

    def prompt(self, p: Any) -> str:
        """The user's request."""
        raise NotImplementedError

    def action(self, item: str, p: Any, inputs: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
        """The (tool, arguments) that settles ``item`` (what a well-behaved planner calls)."""
        raise NotImplementedError

    def item_for(self, tool: str, args: Mapping[str, Any], p: Any) -> str | None:
        """The item a call serves, if any."""
        raise NotImplementedError

    def fact(self, item: str, result: ToolResult, p: Any) -> Any:
        """(value, summary) from a result, or a text saying why the data cannot be used."""
        raise NotImplementedError

    def answer(self, facts: Mapping[str, str], missing: Mapping[str, str]) -> str:
        """The final answer, written from the verified fact summaries."""
        return "; ".join(facts.values()) + "."

    def rules(self, tool: str, args: Mapping[str, Any], p: Any) -> str | None:
        """A rule the call breaks, if any (→ ``against_policy``)."""
        return None

    def granted(self, p: Any) -> frozenset[str]:
        """The capabilities the caller holds."""
        return frozenset()

    def join(self, p: Any) -> JoinRule:
        """The join rule for parallel calls."""
        return JoinRule()

    def inputs(self, p: Any) -> dict[str, str]:
        """User inputs known from the start."""
        return {}

    def __repr__(self) -> str:
        return f"<task type {self.name}>"


@dataclass(frozen=True)
class Task:
    """One task: a type plus validated parameters (its derived values are computed once: both are frozen).

    Attributes:
        type: the task type.
        params: its validated parameters.
        budget: the budget for this task (the type's, unless overridden).
    """

    type: TaskType
    params: Any
    budget: Budget = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.budget is None:
            object.__setattr__(self, "budget", self.type.budget)

    @cached_property
    def name(self) -> str:
        """The task type's name."""
        return self.type.name

    @cached_property
    def condition(self) -> str:
        """The completion condition in words, with this task's numbers filled in."""
        return self.type.condition.format(**self.params.model_dump())

    @cached_property
    def items(self) -> tuple[str, ...]:
        """Work items."""
        return self.type.items(self.params)

    @cached_property
    def need(self) -> int:
        """How many items must be done."""
        return self.type.need(self.params)

    @cached_property
    def goal(self) -> str:
        """The goal in one sentence."""
        return self.type.goal(self.params)

    @cached_property
    def constraints(self) -> tuple[str, ...]:
        """Hard constraints."""
        return self.type.constraints(self.params)

    @cached_property
    def prompt(self) -> str:
        """The user's request."""
        return self.type.prompt(self.params)

    @cached_property
    def granted(self) -> frozenset[str]:
        """Capabilities the caller holds."""
        return self.type.granted(self.params)

    @cached_property
    def join(self) -> JoinRule:
        """The join rule for parallel calls."""
        return self.type.join(self.params)

    def toolbox(self) -> Toolbox:
        """The tools offered for this task."""
        return Toolbox.of(TOOLS[name] for name in self.type.tools)

    def new_state(self) -> TaskState:
        """A fresh task state (version 0), with inputs known from the start."""
        state = TaskState(self.name, self.goal, self.constraints, self.items)
        state.inputs.update(self.type.inputs(self.params))
        return state

    def assess(self, state: TaskState) -> Assessment:
        """Check the business completion condition over ``state``.

        ``complete`` needs ``need`` items done, each with a verified fact that
        names its source; ``impossible`` means even finishing every open item
        would not be enough.
        """
        done = [item for item in state.done_items() if state.facts[item].source]
        if len(done) >= self.need:
            return "complete"
        if len(done) + len(state.open_items()) < self.need:
            return "impossible"
        return "incomplete"

    def spec(self) -> dict[str, Any]:
        """JSON form: type name and parameters."""
        return {"type": self.name, "params": self.params.model_dump(mode="json")}

    def with_budget(self, **values: Any) -> Task:
        """A copy with some budget limits replaced."""
        return Task(self.type, self.params, self.budget.with_values(**values))


# -- weather -----------------------------------------------------------------------------------

WEATHER_BUDGET = Budget(
    steps=Limit(value=6, basis="happy path is 3 turns (city A, city B, answer); +1 for a rejected early claim or "
                             "an argument repair, +1 for a model-driven retry, +1 spare. A two-lookup task that "
                             "needs more than 6 turns is not converging."),
    wall_time_s=Limit(value=60, basis="happy path ≈ 3 model calls × 1 s + 2 lookups × 0.4 s ≈ 4 s; the worst "
                                      "recoverable case adds 4 timeouts × 5 s and back-off ≈ 25 s. 60 s is about "
                                      "twice that, and longer than a chat user should wait for two numbers."),
    model_calls=Limit(value=6, basis="one per turn; nothing else calls the model in this task type"),
    tool_calls=Limit(value=8, basis="2 lookups + 3 retries + 1 repaired call + 2 spare"),
    tokens=Limit(value=6000, basis="requests start at ≈240 tokens (system, prompt, state) and grow ≈70 per turn, "
                                   "≈2.5 k over 6 turns with short replies; ×2 for long error observations"),
    context_tokens=Limit(value=1500, basis="the happy path's largest request is ≈380 tokens and a 6-turn run's ≈600; "
                                           "1.5 k leaves room for error observations, and more means repeats are "
                                           "piling up"),
    retries=Limit(value=3, basis="one transient failure per city (2) + one fallback switch (1); past that the "
                                 "service is down and more attempts only add load"),
)

class WeatherTask(TaskType):
    """Compare the weather of two cities."""

    name = "weather_compare"
    title = "compare the weather of two cities"
    title_zh = "比较两座城市的天气"
    condition = "a weather fact (temperature and conditions) with a source for every city"
    tools = ("get_weather", "weather_backup")
    budget = WEATHER_BUDGET
    allows_not_found = False
    params = WeatherParams

    def items(self, p: WeatherParams) -> tuple[str, ...]:
        return tuple(f"weather:{c}" for c in p.cities)

    def need(self, p: WeatherParams) -> int:
        return len(p.cities)

    def goal(self, p: WeatherParams) -> str:
        return f"compare today's weather in {' and '.join(p.cities)}"

    def constraints(self, p: WeatherParams) -> tuple[str, ...]:
        return ("report temperatures in °C", "cite the source of each figure")

    def prompt(self, p: WeatherParams) -> str:
        return f"Compare today's weather in {' and '.join(p.cities)}. Use °C and cite your sources."

    def action(self, item: str, p: WeatherParams, inputs: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
        return ("get_weather", {"city": item.split(":", 1)[1]})

    def item_for(self, tool: str, args: Mapping[str, Any], p: WeatherParams) -> str | None:
        if tool not in ("get_weather", "weather_backup") or not isinstance(args.get("city"), str):
            return None
        for city in p.cities:
            if city.casefold() == args["city"].strip().casefold():
                return f"weather:{city}"
        return None

    def fact(self, item: str, result: ToolResult, p: WeatherParams) -> Any:
        data = result.data if isinstance(result.data, dict) else {}
        city = item.split(":", 1)[1]
        if str(data.get("city", "")).casefold() != city.casefold():
            return f"the data is for {data.get('city')!r}, not {city}"
        if "temp_c" in data:
            temp = data["temp_c"]
        elif "temp_f" in data:  # the backup reports °F: re-validate and convert before using it
            temp = round((float(data["temp_f"]) - 32) * 5 / 9)
        else:
            return "no temperature field in the data"
        sky = data.get("conditions", data.get("sky"))
        if not isinstance(temp, (int, float)) or not sky:
            return "temperature or conditions missing"
        return {"temp_c": temp, "conditions": sky}, f"{temp}°C, {sky}"

    def answer(self, facts: Mapping[str, str], missing: Mapping[str, str]) -> str:
        parts = [f"{item.split(':', 1)[1]}: {summary}" for item, summary in facts.items()]
        return "Weather compared — " + "; ".join(parts) + "."


WEATHER_TASK = WeatherTask()

# -- order status ------------------------------------------------------------------------------


class OrderTask(TaskType):
    """Where is my order?."""

    name = "order_status"
    title = "where is my order?"
    title_zh = "查询订单状态"
    condition = "the order's status and delivery date, from the orders database, for the order the user named"
    tools = ("lookup_order",)
    budget = Budget(
        steps=Limit(value=4, basis="1 lookup + 1 answer; +1 repaired call, +1 spare. Waiting for the user uses no "
                                   "steps: the loop is not running."),
        wall_time_s=Limit(value=30, basis="≈2 model calls × 1 s + a 0.3 s lookup; 30 s covers two timeouts and "
                                          "back-off"),
        model_calls=Limit(value=4, basis="one per turn, so equal to steps: nothing else in this task calls the model"),
        tool_calls=Limit(value=4, basis="1 lookup + 2 retries + 1 repaired call"),
        tokens=Limit(value=4000, basis="4 requests of ≤ 600 tokens + replies, ×1.5"),
        context_tokens=Limit(value=1200, basis="a single-lookup conversation stays far below 1 k tokens"),
        retries=Limit(value=2, basis="two transient failures of one read-only lookup; then tell the user"),
    )
    allows_not_found = False
    params = OrderParams

    def items(self, p: OrderParams) -> tuple[str, ...]:
        return ("order:status",)

    def need(self, p: OrderParams) -> int:
        return 1

    def goal(self, p: OrderParams) -> str:
        return "tell the user the status and delivery date of their order"

    def constraints(self, p: OrderParams) -> tuple[str, ...]:
        return ("only the order the user named; never guess an order id",)

    def prompt(self, p: OrderParams) -> str:
        return f"Where is my order {p.order_id}?" if p.order_id else "Where is my order?"

    def action(self, item: str, p: OrderParams, inputs: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
        return ("lookup_order", {"order_id": inputs["order_id"]} if "order_id" in inputs else {})

    def item_for(self, tool: str, args: Mapping[str, Any], p: OrderParams) -> str | None:
        return "order:status" if tool == "lookup_order" else None

    def fact(self, item: str, result: ToolResult, p: OrderParams) -> Any:
        data = result.data if isinstance(result.data, dict) else {}
        if "status" not in data or "eta" not in data:
            return "status or eta missing"
        return {"status": data["status"], "eta": data["eta"]}, f"order {data.get('order_id')}: {data['status']}, " \
                                                              f"arriving {data['eta']}"

    def answer(self, facts: Mapping[str, str], missing: Mapping[str, str]) -> str:
        return "Your order: " + "; ".join(facts.values()) + "."

    def inputs(self, p: OrderParams) -> dict[str, str]:
        return {"order_id": p.order_id} if p.order_id else {}


ORDER_TASK = OrderTask()

# -- refund ------------------------------------------------------------------------------------


class RefundTask(TaskType):
    """Refund part of an order."""

    name = "refund"
    title = "refund part of an order"
    title_zh = "订单退款"
    condition = "a refund confirmation from the payments service for the named order"
    tools = ("issue_refund", "db_write")
    budget = Budget(
        steps=Limit(value=3, basis="a write: 1 call + 1 answer + 1 spare. A write should reach a person early "
                                   "rather than be attempted again"),
        wall_time_s=Limit(value=20, basis="one 0.8 s write and 2 model calls; nothing here should wait long"),
        model_calls=Limit(value=3, basis="one per turn, so equal to steps: nothing else in this task calls the model"),
        tool_calls=Limit(value=2, basis="the write, and at most one more call"),
        tokens=Limit(value=3000, basis="3 short requests of ≈300 tokens plus replies, ×3"),
        context_tokens=Limit(value=1000, basis="a one-action conversation stays near 300 tokens; 1 k catches "
                                               "repeats piling up"),
        retries=Limit(value=0, basis="a refund has side effects: never retried automatically"),
    )
    allows_not_found = False
    params = RefundParams

    def items(self, p: RefundParams) -> tuple[str, ...]:
        return (f"refund:{p.order_id}",)

    def need(self, p: RefundParams) -> int:
        return 1

    def goal(self, p: RefundParams) -> str:
        return f"refund {p.amount:g} on order {p.order_id}"

    def constraints(self, p: RefundParams) -> tuple[str, ...]:
        return ("refunds only through the payments service",
                "never more than the order total")

    def prompt(self, p: RefundParams) -> str:
        return f"Please refund {p.amount:g} on my order {p.order_id}."

    def action(self, item: str, p: RefundParams, inputs: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
        return ("issue_refund", {"order_id": p.order_id, "amount": p.amount})

    def item_for(self, tool: str, args: Mapping[str, Any], p: RefundParams) -> str | None:
        if tool == "issue_refund":
            return f"refund:{args.get('order_id')}"
        if tool == "db_write" and args.get("table") == "refunds" and isinstance(args.get("values"), dict):
            return f"refund:{args['values'].get('order_id')}"
        return None

    def fact(self, item: str, result: ToolResult, p: RefundParams) -> Any:
        data = result.data if isinstance(result.data, dict) else {}
        if "refund_id" in data:
            return data, f"refund {data['refund_id']} of {data['amount']}"
        if data.get("written"):
            return data, f"refund row written directly: {data['row']}"
        return "no refund confirmation in the data"

    def answer(self, facts: Mapping[str, str], missing: Mapping[str, str]) -> str:
        return "Refund done: " + "; ".join(facts.values()) + "."

    def rules(self, tool: str, args: Mapping[str, Any], p: RefundParams) -> str | None:
        if tool != "issue_refund":
            return None
        order = ORDERS.get(str(args.get("order_id")))
        amount = args.get("amount")
        if order and isinstance(amount, (int, float)) and amount > order["total"]:
            return f"a refund of {amount} is more than the order total of {order['total']}"
        return None

    def granted(self, p: RefundParams) -> frozenset[str]:
        return frozenset(p.granted)


REFUND_TASK = RefundTask()

# -- document lookup ---------------------------------------------------------------------------


class DocumentTask(TaskType):
    """Read a document's publication date."""

    name = "document_lookup"
    title = "read a document's publication date"
    title_zh = "读取资料的发布日期"
    condition = "the requested metadata field of the named document, from the archive"
    tools = ("read_metadata",)
    budget = Budget(
        steps=Limit(value=3, basis="1 lookup + 1 answer + 1 spare"),
        wall_time_s=Limit(value=20, basis="a 0.3 s lookup and 2 model calls, with room for one timeout"),
        model_calls=Limit(value=3, basis="one per turn, so equal to steps: nothing else in this task calls the model"),
        tool_calls=Limit(value=3, basis="1 lookup + 2 retries"),
        tokens=Limit(value=3000, basis="3 short requests of ≈300 tokens plus replies, ×3"),
        context_tokens=Limit(value=1000, basis="a one-lookup conversation stays near 300 tokens; 1 k catches "
                                                        "repeats piling up"),
        retries=Limit(value=2, basis="two transient failures of a read-only lookup"),
    )
    allows_not_found = False
    params = DocumentParams

    def items(self, p: DocumentParams) -> tuple[str, ...]:
        return (f"doc:{p.document_id}:{p.field}",)

    def need(self, p: DocumentParams) -> int:
        return 1

    def goal(self, p: DocumentParams) -> str:
        return f"read the {p.field} field of document {p.document_id}"

    def constraints(self, p: DocumentParams) -> tuple[str, ...]:
        return ("only the archive is an authoritative source",)

    def prompt(self, p: DocumentParams) -> str:
        return (f"When was document {p.document_id} published?" if p.field == "published"
else f"What is the {p.field} of document {p.document_id}?")

    def action(self, item: str, p: DocumentParams, inputs: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
        return ("read_metadata", {"document_id": p.document_id})

    def item_for(self, tool: str, args: Mapping[str, Any], p: DocumentParams) -> str | None:
        return f"doc:{args.get('document_id')}:{p.field}" if tool == "read_metadata" else None

    def fact(self, item: str, result: ToolResult, p: DocumentParams) -> Any:
        data = result.data if isinstance(result.data, dict) else {}
        if p.field not in data:
            return f"no {p.field} field"
        return {p.field: data[p.field]}, f"{data.get('title', p.document_id)} {p.field} {data[p.field]}"

    def answer(self, facts: Mapping[str, str], missing: Mapping[str, str]) -> str:
        return "; ".join(facts.values()) + "."


DOCUMENT_TASK = DocumentTask()

# -- recall check (empty is an answer here) ----------------------------------------------------


class RecallTask(TaskType):
    """Is there a recall notice for a product?."""

    name = "recall_check"
    title = "is there a recall notice for a product?"
    title_zh = "查询产品召回"
    condition = "a search of the recall registry for the product; an empty result is an answer ('none found')"
    tools = ("search_recalls",)
    budget = Budget(
        steps=Limit(value=3, basis="1 search + 1 answer + 1 spare"),
        wall_time_s=Limit(value=20, basis="a 0.5 s search and 2 model calls, with room for one timeout"),
        model_calls=Limit(value=3, basis="one per turn, so equal to steps: nothing else in this task calls the model"),
        tool_calls=Limit(value=3, basis="1 search + 2 retries"),
        tokens=Limit(value=3000, basis="3 short requests of ≈300 tokens plus replies, ×3"),
        context_tokens=Limit(value=1000, basis="a one-search conversation stays near 300 tokens; 1 k catches "
                                                        "repeats piling up"),
        retries=Limit(value=2, basis="two transient failures of a read-only search"),
    )
    allows_not_found = True
    params = RecallParams

    def items(self, p: RecallParams) -> tuple[str, ...]:
        return (f"recalls:{p.product}",)

    def need(self, p: RecallParams) -> int:
        return 1

    def goal(self, p: RecallParams) -> str:
        return f"say whether {p.product} has any recall notice"

    def constraints(self, p: RecallParams) -> tuple[str, ...]:
        return ("only the official recall registry counts",)

    def prompt(self, p: RecallParams) -> str:
        return f"Is there any recall notice for {p.product}?"

    def action(self, item: str, p: RecallParams, inputs: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
        return ("search_recalls", {"product": p.product})

    def item_for(self, tool: str, args: Mapping[str, Any], p: RecallParams) -> str | None:
        return f"recalls:{args.get('product')}" if tool == "search_recalls" else None

    def fact(self, item: str, result: ToolResult, p: RecallParams) -> Any:
        notices = result.data if isinstance(result.data, list) else []
        if result.status == "empty" or not notices:
            return [], "no recall notice found"
        return notices, f"{len(notices)} recall notice(s): " + ", ".join(n.get("notice", "?") for n in notices)

    def answer(self, facts: Mapping[str, str], missing: Mapping[str, str]) -> str:
        return "; ".join(facts.values()) + "."


RECALL_TASK = RecallTask()

# -- research with parallel fetches ------------------------------------------------------------


class ResearchTask(TaskType):
    """Summarise a topic from several sources."""

    name = "research"
    title = "summarise a topic from several sources"
    title_zh = "多资料调研"
    condition = ("at least {minimum} of the listed sources read, each fact pointing to its source (the minimum "
                 "evidence set)")
    tools = ("fetch",)
    budget = Budget(
        steps=Limit(value=4, basis="1 turn of parallel fetches + 1 answer; +1 turn to re-fetch after a failed "
                                   "join, +1 spare"),
        wall_time_s=Limit(value=40, basis="the join waits at most 10 s; two fetch turns + 4 model calls ≈ 25 s"),
        model_calls=Limit(value=4, basis="one per turn, so equal to steps: nothing else in this task calls the model"),
        tool_calls=Limit(value=8, basis="two rounds of 4 parallel fetches"),
        tokens=Limit(value=8000, basis="source texts stay out of the context (references + summaries), so "
                                       "requests stay ≈ 1 k tokens"),
        context_tokens=Limit(value=3000, basis="with out-of-context storage a request never carries a full "
                                               "source; 3 k catches a loop that pastes them in"),
        retries=Limit(value=2, basis="one re-fetch per failed source, two at most"),
        output_reserve=600,
    )
    allows_not_found = False
    params = ResearchParams

    def items(self, p: ResearchParams) -> tuple[str, ...]:
        return tuple(f"source:{s}" for s in p.sources)

    def need(self, p: ResearchParams) -> int:
        return p.minimum

    def goal(self, p: ResearchParams) -> str:
        return f"summarise '{p.topic}' from at least {p.minimum} of the sources {', '.join(p.sources)}"

    def constraints(self, p: ResearchParams) -> tuple[str, ...]:
        return ("cite every claim with its source id", "use only the listed sources")

    def prompt(self, p: ResearchParams) -> str:
        return f"Summarise '{p.topic}' using at least {p.minimum} of these sources: {', '.join(p.sources)}."

    def action(self, item: str, p: ResearchParams, inputs: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
        return ("fetch", {"source_id": item.split(":", 1)[1]})

    def item_for(self, tool: str, args: Mapping[str, Any], p: ResearchParams) -> str | None:
        return (f"source:{args.get('source_id')}"
if tool == "fetch" and args.get("source_id") in p.sources else None)

    def fact(self, item: str, result: ToolResult, p: ResearchParams) -> Any:
        data = result.data if isinstance(result.data, dict) else {}
        if "title" not in data or "published" not in data:
            return "title or publication year missing"
        return {"title": data["title"], "published": data["published"]}, f"“{data['title']}” ({data['published']})"

    def answer(self, facts: Mapping[str, str], missing: Mapping[str, str]) -> str:
        return "Summary from " + "; ".join(facts.values()) + "."

    def join(self, p: ResearchParams) -> JoinRule:
        return JoinRule(kind="minimum", minimum=p.minimum, timeout_s=p.join_timeout_s)


RESEARCH_TASK = ResearchTask()

TASK_TYPES: dict[str, TaskType] = {t.name: t for t in (
    WEATHER_TASK, ORDER_TASK, REFUND_TASK, DOCUMENT_TASK, RECALL_TASK, RESEARCH_TASK)}
"""Every task type by name."""


def make_task(task_type: str | TaskType, params: Mapping[str, Any] | None = None, *,
              budget: Mapping[str, Any] | None = None, source: str = "task", **kwargs: Any) -> Task:
    """Build a task from a type name and parameters (validated; one-line errors).

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
    values = {**(params or {}), **kwargs}
    try:
        validated = kind.params.model_validate(values)
    except ValidationError as exc:
        raise ConfigError(f"{source}: params.{describe_validation_error(exc)}") from None
    task = Task(kind, validated)
    if budget:
        task = Task(kind, validated, kind.budget.with_values(**budget))
    return task


def completion_table() -> Table:
    """Every task type's business completion condition (evidence: completion conditions per task)."""
    rows = []
    for kind in TASK_TYPES.values():
        task = make_task(kind)
        rows.append((kind.name, f"{kind.title} ({kind.title_zh})", task.condition,
                     f"{task.need} of {len(task.items)}: {', '.join(task.items)}",
                     "yes" if kind.allows_not_found else "no", task.join.describe()))
    return Table.build("Business completion conditions", ["task", "title", "done when", "items needed (defaults)",
                                                          "'not found' is an answer", "parallel join"], rows,
                       note="A reply without tool calls is a signal; success also needs Task.assess(state) == "
                            "'complete'.")


WEATHER_CITIES: tuple[str, ...] = tuple(WEATHER)
