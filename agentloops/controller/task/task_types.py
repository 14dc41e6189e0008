"""Task types, each one small pydantic model: its fields are the task's parameters, its methods the work.

:class:`TaskType` is the base, with the lookups and actions (weather, order, refund); the reading tasks
are in :mod:`~agentloops.controller.task.reading_tasks`. An instance is one task's validated parameters,
so a reader meets one class per kind of task, not a type and a separate parameters model. A
:class:`~agentloops.controller.task.tasks.Task` adds the budget, and
:data:`~agentloops.controller.task.tasks.TASK_TYPES` lists them all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat

from agentloops.controller.policy.budgets import Budget, Limit
from agentloops.controller.task.joins import JoinRule
from agentloops.controller.task.world import ORDERS, WEATHER
from agentloops.controller.vocabulary.readback import readable
from agentloops.controller.vocabulary.tools import ToolResult
from agentloops.i18n import N_, Phrase, joined

WEATHER_SUMMARY = readable(N_("{temp}°C, {sky}"))
"""A weather fact's summary (English in the trace; read back where shown)."""

Update = Callable[[str, ToolResult], "tuple[Any, str] | str"]
"""The update stage's shape: (the item a call serves, its tool result) → the fact it establishes as (value,
summary), or a text saying why the data cannot be used. The package's is the task type's :meth:`TaskType.fact`;
a learner's passes ``run_scenario(…, update=…)``."""


class TaskType(BaseModel):
    """A kind of task, as a frozen pydantic model: its fields are the task's parameters (validated once, when
    the task is made), its class variables the completion condition, tools and budgets, and its methods how
    the parameters become work items, facts and an answer. One subclass per kind of task.

    Attributes:
        name: identifier.
        title: one line.
        title_zh: the same in Chinese.
        condition: the business completion condition, in words (checked by :meth:`Task.assess`).
        tools: the tools offered to the model.
        budget: the budgets, each with its basis.
        allows_not_found: an empty result may settle an item as "none found".
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: ClassVar[str]
    title: ClassVar[str]
    title_zh: ClassVar[str]
    condition: ClassVar[str]
    tools: ClassVar[tuple[str, ...]]
    budget: ClassVar[Budget]
    allows_not_found: ClassVar[bool] = False

    def items(self) -> tuple[str, ...]:
        """The work items."""
        raise NotImplementedError

    def need(self) -> int:
        """How many items must be done."""
        return len(self.items())

    def goal(self) -> str:
        """The goal in one sentence."""
        raise NotImplementedError

    def constraints(self) -> tuple[str, ...]:
        """Hard constraints."""
        return ()

    def prompt(self) -> str:
        """The user's request."""
        raise NotImplementedError

    def action(self, item: str, inputs: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
        """The (tool, arguments) that settles ``item`` (what a well-behaved planner calls)."""
        raise NotImplementedError

    def item_for(self, tool: str, args: Mapping[str, Any]) -> str | None:
        """The item a call serves, if any."""
        raise NotImplementedError

    def fact(self, item: str, result: ToolResult) -> Any:
        """(value, summary) from a result, or a text saying why the data cannot be used (the package's update
        stage, see :data:`Update`)."""
        raise NotImplementedError

    def answer(self, facts: Mapping[str, str], missing: Mapping[str, str]) -> str:
        """The final answer, written from the verified fact summaries (a phrase: shown in the learner's language)."""
        return Phrase(N_("{facts}."), facts=joined(list(facts.values()), "; "))

    def rules(self, tool: str, args: Mapping[str, Any]) -> str | None:
        """A rule the call breaks, if any (→ ``against_policy``)."""
        return None

    def capabilities(self) -> frozenset[str]:
        """The capabilities the caller holds (not ``granted``: that is a refund's parameter)."""
        return frozenset()

    def join(self) -> JoinRule:
        """The join rule for parallel calls."""
        return JoinRule()

    def inputs(self) -> dict[str, str]:
        """User inputs known from the start."""
        return {}


WEATHER_BUDGET = Budget(
    steps=Limit(value=6, basis=N_("happy path is 3 turns (city A, city B, answer); +1 for a rejected early claim or "
                             "an argument repair, +1 for a model-driven retry, +1 spare. A two-lookup task that "
                             "needs more than 6 turns is not converging.")),
    wall_time_s=Limit(value=60, basis=N_("above the limit derived from uncapped runs (`agentloops controller "
                                      "budgets --measure N`: the 95th percentile of successful runs plus one "
                                      "recoverable timeout), with headroom for slower real tools; longer than a "
                                      "chat user should wait for two numbers.")),
    model_calls=Limit(value=6, basis=N_("one per turn; nothing else calls the model in this task type")),
    tool_calls=Limit(value=8, basis=N_("2 lookups + 3 retries + 1 repaired call + 2 spare")),
    tokens=Limit(value=6000, basis=N_("requests start at ≈240 tokens (system, prompt, state) and grow ≈70 per turn, "
                                   "≈2.5 k over 6 turns with short replies; ×2 for long error observations")),
    context_tokens=Limit(value=1500, basis=N_("the happy path's largest request is ≈380 tokens and a 6-turn run's "
                                              "≈600; 1.5 k leaves room for error observations, and more means repeats "
                                              "are piling up")),
    retries=Limit(value=3, basis=N_("one transient failure per city (2) + one fallback switch (1); past that the "
                                 "service is down and more attempts only add load")),
)


class WeatherTask(TaskType):
    """Compare the weather of two (or more) cities."""

    cities: tuple[str, ...] = Field(default=("Shanghai", "Beijing"), min_length=1)

    name = "weather_compare"
    title = "compare the weather of two cities"
    title_zh = "比较两座城市的天气"
    condition = N_("a weather fact (temperature and conditions) with a source for every city")
    tools = ("get_weather", "weather_backup")
    budget = WEATHER_BUDGET
    allows_not_found = False

    def items(self) -> tuple[str, ...]:
        return tuple(f"weather:{c}" for c in self.cities)

    def goal(self) -> str:
        return f"compare today's weather in {' and '.join(self.cities)}"

    def constraints(self) -> tuple[str, ...]:
        return (N_("report temperatures in °C"), N_("cite the source of each figure"))

    def prompt(self) -> str:
        return f"Compare today's weather in {' and '.join(self.cities)}. Use °C and cite your sources."

    def action(self, item: str, inputs: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
        return ("get_weather", {"city": item.split(":", 1)[1]})

    def item_for(self, tool: str, args: Mapping[str, Any]) -> str | None:
        if tool not in ("get_weather", "weather_backup") or not isinstance(args.get("city"), str):
            return None
        for city in self.cities:
            if city.casefold() == args["city"].strip().casefold():
                return f"weather:{city}"
        return None

    def fact(self, item: str, result: ToolResult) -> Any:
        data = result.data if isinstance(result.data, dict) else {}
        city = item.split(":", 1)[1]
        if str(data.get("city", "")).casefold() != city.casefold():
            return Phrase(N_("the data is for {other!r}, not {city}"), other=data.get("city"), city=city)
        if "temp_c" in data:
            temp = data["temp_c"]
        elif "temp_f" in data:  # the backup reports °F: re-validate and convert before using it
            temp = round((float(data["temp_f"]) - 32) * 5 / 9)
        else:
            return Phrase(N_("no temperature field in the data"))
        sky = data.get("conditions", data.get("sky"))
        if not isinstance(temp, (int, float)) or not sky:
            return Phrase(N_("temperature or conditions missing"))
        return {"temp_c": temp, "conditions": sky}, Phrase(WEATHER_SUMMARY, temp=temp, sky=Phrase(str(sky)))

    def answer(self, facts: Mapping[str, str], missing: Mapping[str, str]) -> str:
        parts = [Phrase(N_("{city}: {summary}"), city=item.split(":", 1)[1], summary=s) for item, s in facts.items()]
        return Phrase(N_("Weather compared — {facts}."), facts=joined(parts, "; "))


# -- order status ------------------------------------------------------------------------------


class OrderTask(TaskType):
    """Where is my order? ``order_id`` is ``None`` when the user did not say which."""

    order_id: str | None = None

    name = "order_status"
    title = "where is my order?"
    title_zh = "查询订单状态"
    condition = N_("the order's status and delivery date, from the orders database, for the order the user named")
    tools = ("lookup_order",)
    budget = Budget(
        steps=Limit(value=4, basis=N_("1 lookup + 1 answer; +1 repaired call, +1 spare. Waiting for the user uses no "
                                   "steps: the loop is not running.")),
        wall_time_s=Limit(value=30, basis=N_("≈2 model calls × 1 s + a 0.3 s lookup; 30 s covers two timeouts and "
                                          "back-off")),
        model_calls=Limit(value=4, basis=N_("one per turn, so equal to steps: nothing else in this "
                                           "task calls the model")),
        tool_calls=Limit(value=4, basis=N_("1 lookup + 2 retries + 1 repaired call")),
        tokens=Limit(value=4000, basis=N_("4 requests of ≤ 600 tokens + replies, ×1.5")),
        context_tokens=Limit(value=1200, basis=N_("a single-lookup conversation stays far below 1 k tokens")),
        retries=Limit(value=2, basis=N_("two transient failures of one read-only lookup; then tell the user")),
    )
    allows_not_found = False

    def items(self) -> tuple[str, ...]:
        return ("order:status",)

    def goal(self) -> str:
        return "tell the user the status and delivery date of their order"

    def constraints(self) -> tuple[str, ...]:
        return (N_("only the order the user named; never guess an order id"),)

    def prompt(self) -> str:
        return f"Where is my order {self.order_id}?" if self.order_id else "Where is my order?"

    def action(self, item: str, inputs: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
        return ("lookup_order", {"order_id": inputs["order_id"]} if "order_id" in inputs else {})

    def item_for(self, tool: str, args: Mapping[str, Any]) -> str | None:
        return "order:status" if tool == "lookup_order" else None

    def fact(self, item: str, result: ToolResult) -> Any:
        data = result.data if isinstance(result.data, dict) else {}
        if "status" not in data or "eta" not in data:
            return Phrase(N_("status or eta missing"))
        return {"status": data["status"], "eta": data["eta"]}, Phrase(
            N_("order {order_id}: {status}, arriving {eta}"), order_id=data.get("order_id"),
            status=Phrase(str(data["status"])), eta=data["eta"])

    def answer(self, facts: Mapping[str, str], missing: Mapping[str, str]) -> str:
        return Phrase(N_("Your order: {facts}."), facts=joined(list(facts.values()), "; "))

    def inputs(self) -> dict[str, str]:
        return {"order_id": self.order_id} if self.order_id else {}


# -- refund ------------------------------------------------------------------------------------


class RefundTask(TaskType):
    """Refund an amount on an order, with the capabilities the caller holds."""

    order_id: str = "A-1042"
    amount: PositiveFloat = 25.0
    granted: tuple[str, ...] = ("orders:read",)

    name = "refund"
    title = "refund part of an order"
    title_zh = "订单退款"
    condition = N_("a refund confirmation from the payments service for the named order")
    tools = ("issue_refund", "db_write")
    budget = Budget(
        steps=Limit(value=3, basis=N_("a write: 1 call + 1 answer + 1 spare. A write should reach a person early "
                                   "rather than be attempted again")),
        wall_time_s=Limit(value=20, basis=N_("one 0.8 s write and 2 model calls; nothing here should wait long")),
        model_calls=Limit(value=3, basis=N_("one per turn, so equal to steps: nothing else in this "
                                           "task calls the model")),
        tool_calls=Limit(value=2, basis=N_("the write, and at most one more call")),
        tokens=Limit(value=3000, basis=N_("3 short requests of ≈300 tokens plus replies, ×3")),
        context_tokens=Limit(value=1000, basis=N_("a one-action conversation stays near 300 tokens; 1 k catches "
                                               "repeats piling up")),
        retries=Limit(value=0, basis=N_("a refund has side effects: never retried automatically")),
    )
    allows_not_found = False

    def items(self) -> tuple[str, ...]:
        return (f"refund:{self.order_id}",)

    def goal(self) -> str:
        return f"refund {self.amount:g} on order {self.order_id}"

    def constraints(self) -> tuple[str, ...]:
        return (N_("refunds only through the payments service"),
                N_("never more than the order total"))

    def prompt(self) -> str:
        return f"Please refund {self.amount:g} on my order {self.order_id}."

    def action(self, item: str, inputs: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
        return ("issue_refund", {"order_id": self.order_id, "amount": self.amount})

    def item_for(self, tool: str, args: Mapping[str, Any]) -> str | None:
        if tool == "issue_refund":
            return f"refund:{args.get('order_id')}"
        if tool == "db_write" and args.get("table") == "refunds" and isinstance(args.get("values"), dict):
            return f"refund:{args['values'].get('order_id')}"
        return None

    def fact(self, item: str, result: ToolResult) -> Any:
        data = result.data if isinstance(result.data, dict) else {}
        if "refund_id" in data:
            return data, Phrase(N_("refund {refund_id} of {amount}"), refund_id=data["refund_id"],
                                amount=data["amount"])
        if data.get("written"):
            return data, Phrase(N_("refund row written directly: {row}"), row=data["row"])
        return Phrase(N_("no refund confirmation in the data"))

    def answer(self, facts: Mapping[str, str], missing: Mapping[str, str]) -> str:
        return Phrase(N_("Refund done: {facts}."), facts=joined(list(facts.values()), "; "))

    def rules(self, tool: str, args: Mapping[str, Any]) -> str | None:
        if tool != "issue_refund":
            return None
        order = ORDERS.get(str(args.get("order_id")))
        amount = args.get("amount")
        if order and isinstance(amount, (int, float)) and amount > order["total"]:
            return f"a refund of {amount} is more than the order total of {order['total']}"
        return None

    def capabilities(self) -> frozenset[str]:
        return frozenset(self.granted)


WEATHER_CITIES: tuple[str, ...] = tuple(WEATHER)
