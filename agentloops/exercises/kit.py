"""What a learner's answer may use: the values the exercises hand to the learner's functions and the helpers
they may call — an action and its attempts, a price task and its states, a logged call, running a tool.

Apart from the exercise sets (and below them) so that the reference solutions can use the same names as a
learner does without importing the exercises that are judged against them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentloops.controller.task.state import Fact, TaskState
from agentloops.controller.vocabulary.tools import ToolStatus
from agentloops.errors import UsageError
from agentloops.i18n import _
from agentloops.loop import Tools, execute
from agentloops.messages import Message
from agentloops.response import Response, ToolCall


@dataclass(frozen=True, slots=True)
class Action:
    """An action the model asks for: a tool, its arguments, and the state version it was asked at.

    Attributes:
        tool: the tool's name.
        args: the arguments as the model sent them (spelling and key order vary).
        state_version: the task state's *progress* version when the action was chosen
            (:attr:`TaskState.progress_version`, the one a fingerprint uses: it moves only when a
            fact or a settled item is added, so a failed attempt leaves it where it was).
    """

    tool: str
    args: Mapping[str, Any]
    state_version: int

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        return _("{tool}({args}) at v{version}").format(tool=self.tool, args=args, version=self.state_version)


@dataclass(frozen=True, slots=True)
class Attempt:
    """An earlier action and how it went.

    Attributes:
        action: what was done.
        status: the tool result's status (``ok``, ``timeout``, ``permission_denied``…).
        new_observation: it added something to the task state (a fact, an item settled).
        turn: the turn it happened in.
    """

    action: Action
    status: ToolStatus
    new_observation: bool
    turn: int = 0

    def __str__(self) -> str:
        news = _("something new") if self.new_observation else _("nothing new")
        return _("turn {turn}: {action} → {status}, {news}").format(turn=self.turn, action=self.action,
                                                                    status=self.status, news=news)


@dataclass(frozen=True, slots=True)
class PriceTaskSpec:
    """A new task type, ``price_compare``: find a product's price at several shops.

    Attributes:
        name: the task type's name.
        product: what is priced.
        shops: where to look; each is one work item ``price:<shop>``.
        minimum: how many shops must give a usable price.
        currency: the currency the user wants; a price in another one does not count.
    """

    name: str = "price_compare"
    product: str = "kettle-k9"
    shops: tuple[str, ...] = ("shop-a", "shop-b", "shop-c")
    minimum: int = 2
    currency: str = "EUR"

    @property
    def condition(self) -> str:
        """The completion condition in words."""
        return _("a price in {currency}, with its source, from at least {minimum} of the {shops} shops").format(
            currency=self.currency, minimum=self.minimum, shops=len(self.shops))

    @property
    def items(self) -> tuple[str, ...]:
        """The work items, one per shop."""
        return tuple(f"price:{shop}" for shop in self.shops)


PRICE_TASK = PriceTaskSpec()
"""The task type of ``q6``."""

PriceEntry = tuple[float, str, str] | str


def price_state(prices: Mapping[str, PriceEntry], task: PriceTaskSpec = PRICE_TASK) -> TaskState:
    """A task state for ``price_compare``, built through the controller's own API.

    Args:
        prices: shop → ``(amount, currency, source)`` for a price found, or a reason (text) for a shop
            given up. Shops not named stay open.
        task: the task type.

    Raises:
        UsageError: an unknown shop or a malformed entry.
    """
    state = TaskState(task.name, f"compare the price of {task.product}", (f"prices in {task.currency}",), task.items)
    for turn, (shop, value) in enumerate(prices.items(), 1):
        if shop not in task.shops:
            raise UsageError(_("price_state: unknown shop {shop}; expected one of: {shops}").format(
                shop=repr(shop), shops=", ".join(task.shops)))
        item = f"price:{shop}"
        if isinstance(value, str):
            state.mark_missing(item, value)
            continue
        if not (isinstance(value, tuple) and len(value) == 3):
            raise UsageError(_("price_state: {shop}: expected (amount, currency, source) or a reason; got {value}")
                             .format(shop=shop, value=repr(value)))
        amount, currency, source = value
        state.add_fact(Fact(item, {"amount": amount, "currency": currency}, f"{amount} {currency}", source, turn))
    return state


@dataclass(frozen=True, slots=True)
class LoggedCall:
    """One model call as a request log records it: what was sent and what came back — no verdict on it.

    Attributes:
        step: 1-based call number.
        request: every message sent on this call.
        new_from: index in ``request`` of the first message the previous call did not send.
        response: what the model returned.
    """

    step: int
    request: tuple[Message, ...]
    new_from: int
    response: Response


def run_tool(tools: Tools, call: ToolCall) -> str:
    """Run one tool call and return the text to send back, as the package's loop does.

    Args:
        tools: tool name → canned text (the scenario's ``tools``).
        call: the call the model made.
    """
    return execute(tools, call)[0]


def tool_results(messages: Sequence[Message]) -> list[tuple[str, str, str | None]]:
    """Each tool result in ``messages`` as (tool name, the call's arguments, the text sent back).

    A tool message carries only the call's id; the arguments live in the
    assistant message that made the call, so this pairs them up. A result
    whose call is not among ``messages`` gets ``"?"`` for its arguments.
    """
    arguments: dict[str, str] = {}
    found = []
    for message in messages:
        if message.role == "assistant":
            arguments.update({call.id: call.arguments for call in message.tool_calls})
        elif message.role == "tool":
            found.append((message.name or "?", arguments.get(message.tool_call_id or "", "?"), message.content))
    return found


__all__ = ["PRICE_TASK", "Action", "Attempt", "LoggedCall", "PriceEntry", "PriceTaskSpec", "price_state", "run_tool",
           "tool_results"]
