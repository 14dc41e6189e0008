"""The reading task types: answer from a document, recall facts, research across sources.

The lookups and actions (weather, order, refund) and the :class:`~agentloops.controller.task.task_types.TaskType`
protocol are in :mod:`~agentloops.controller.task.task_types`; this is the second half of the catalogue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, PositiveFloat, PositiveInt, model_validator

from agentloops.controller.policy.budgets import Budget, Limit
from agentloops.controller.task.joins import JoinRule
from agentloops.controller.task.task_types import TaskType
from agentloops.controller.vocabulary.readback import readable
from agentloops.controller.vocabulary.tools import ToolResult
from agentloops.i18n import N_, Phrase, joined


class DocumentTask(TaskType):
    """Read one field of an archived document's metadata (by default its publication date)."""

    document_id: str = "B"
    field: Literal["published", "version", "title"] = "published"

    name = "document_lookup"
    title = "read a document's publication date"
    title_zh = "读取资料的发布日期"
    condition = N_("the requested metadata field of the named document, from the archive")
    tools = ("read_metadata",)
    budget = Budget(
        steps=Limit(value=3, basis=N_("1 lookup + 1 answer + 1 spare")),
        wall_time_s=Limit(value=20, basis=N_("a 0.3 s lookup and 2 model calls, with room for one timeout")),
        model_calls=Limit(value=3, basis=N_("one per turn, so equal to steps: nothing else in this "
                                           "task calls the model")),
        tool_calls=Limit(value=3, basis=N_("1 lookup + 2 retries")),
        tokens=Limit(value=3000, basis=N_("3 short requests of ≈300 tokens plus replies, ×3")),
        context_tokens=Limit(value=1000, basis=N_("a one-lookup conversation stays near 300 tokens; 1 k catches "
                                                        "repeats piling up")),
        retries=Limit(value=2, basis=N_("two transient failures of a read-only lookup")),
    )
    allows_not_found = False

    def items(self) -> tuple[str, ...]:
        return (f"doc:{self.document_id}:{self.field}",)

    def goal(self) -> str:
        return f"read the {self.field} field of document {self.document_id}"

    def constraints(self) -> tuple[str, ...]:
        return (N_("only the archive is an authoritative source"),)

    def prompt(self) -> str:
        if self.field == "published":
            return f"When was document {self.document_id} published?"
        return f"What is the {self.field} of document {self.document_id}?"

    def action(self, item: str, inputs: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
        return ("read_metadata", {"document_id": self.document_id})

    def item_for(self, tool: str, args: Mapping[str, Any]) -> str | None:
        return f"doc:{args.get('document_id')}:{self.field}" if tool == "read_metadata" else None

    def fact(self, item: str, result: ToolResult) -> Any:
        data = result.data if isinstance(result.data, dict) else {}
        if self.field not in data:
            return Phrase(N_("no {field} field"), field=self.field)
        value = data[self.field]
        return {self.field: value}, f"{data.get('title', self.document_id)} {self.field} {value}"


# -- recall check (empty is an answer here) ----------------------------------------------------


class RecallTask(TaskType):
    """Is there any recall notice for a product?"""

    product: str = "kettle-k9"

    name = "recall_check"
    title = "is there a recall notice for a product?"
    title_zh = "查询产品召回"
    condition = N_("a search of the recall registry for the product; an empty result is an answer ('none found')")
    tools = ("search_recalls",)
    budget = Budget(
        steps=Limit(value=3, basis=N_("1 search + 1 answer + 1 spare")),
        wall_time_s=Limit(value=20, basis=N_("a 0.5 s search and 2 model calls, with room for one timeout")),
        model_calls=Limit(value=3, basis=N_("one per turn, so equal to steps: nothing else in this "
                                           "task calls the model")),
        tool_calls=Limit(value=3, basis=N_("1 search + 2 retries")),
        tokens=Limit(value=3000, basis=N_("3 short requests of ≈300 tokens plus replies, ×3")),
        context_tokens=Limit(value=1000, basis=N_("a one-search conversation stays near 300 tokens; 1 k catches "
                                                        "repeats piling up")),
        retries=Limit(value=2, basis=N_("two transient failures of a read-only search")),
    )
    allows_not_found = True

    def items(self) -> tuple[str, ...]:
        return (f"recalls:{self.product}",)

    def goal(self) -> str:
        return f"say whether {self.product} has any recall notice"

    def constraints(self) -> tuple[str, ...]:
        return (N_("only the official recall registry counts"),)

    def prompt(self) -> str:
        return f"Is there any recall notice for {self.product}?"

    def action(self, item: str, inputs: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
        return ("search_recalls", {"product": self.product})

    def item_for(self, tool: str, args: Mapping[str, Any]) -> str | None:
        return f"recalls:{args.get('product')}" if tool == "search_recalls" else None

    def fact(self, item: str, result: ToolResult) -> Any:
        notices = result.data if isinstance(result.data, list) else []
        if result.status == "empty" or not notices:
            return [], Phrase(N_("no recall notice found"))
        return notices, Phrase(N_("{n} recall notice(s): {notices}"), n=len(notices),
                               notices=", ".join(n.get("notice", "?") for n in notices))


# -- research with parallel fetches ------------------------------------------------------------


FACT_SUMMARY = readable(N_("“{title}” ({year})"))
"""A source's fact: its title and year (a trace line's ``+fact`` reads back with the title translated)."""


class ResearchTask(TaskType):
    """Summarise a topic from several sources; ``minimum`` of them must be read."""

    topic: str = N_("why agent loops fail to stop")
    sources: tuple[str, ...] = Field(default=("s1", "s2", "s3", "s4"), min_length=1)
    minimum: PositiveInt = 2
    join_timeout_s: PositiveFloat = 10.0

    @model_validator(mode="after")
    def _minimum_fits(self) -> ResearchTask:
        if self.minimum > len(self.sources):
            raise ValueError(f"minimum {self.minimum} is more than the {len(self.sources)} sources given")
        return self

    name = "research"
    title = "summarise a topic from several sources"
    title_zh = "多资料调研"
    condition = N_("at least {minimum} of the listed sources read, each fact pointing to its source (the minimum "
                 "evidence set)")
    tools = ("fetch",)
    budget = Budget(
        steps=Limit(value=4, basis=N_("1 turn of parallel fetches + 1 answer; +1 turn to re-fetch after a failed "
                                   "join, +1 spare")),
        wall_time_s=Limit(value=40, basis=N_("the join waits at most 10 s; two fetch turns + 4 model calls ≈ 25 s")),
        model_calls=Limit(value=4, basis=N_("one per turn, so equal to steps: nothing else in this "
                                           "task calls the model")),
        tool_calls=Limit(value=8, basis=N_("two rounds of 4 parallel fetches")),
        tokens=Limit(value=8000, basis=N_("source texts stay out of the context (references + summaries), so "
                                       "requests stay ≈ 1 k tokens")),
        context_tokens=Limit(value=3000, basis=N_("with out-of-context storage a request never carries a full "
                                               "source; 3 k catches a loop that pastes them in")),
        retries=Limit(value=2, basis=N_("one re-fetch per failed source, two at most")),
        output_reserve=600,
    )
    allows_not_found = False

    def items(self) -> tuple[str, ...]:
        return tuple(f"source:{s}" for s in self.sources)

    def need(self) -> int:
        return self.minimum

    def goal(self) -> str:
        return Phrase(N_("summarise '{topic}' from at least {minimum} of the sources {sources}"),
                      topic=Phrase(self.topic), minimum=self.minimum, sources=", ".join(self.sources))

    def constraints(self) -> tuple[str, ...]:
        return (N_("cite every claim with its source id"), N_("use only the listed sources"))

    def prompt(self) -> str:
        return f"Summarise '{self.topic}' using at least {self.minimum} of these sources: {', '.join(self.sources)}."

    def action(self, item: str, inputs: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
        return ("fetch", {"source_id": item.split(":", 1)[1]})

    def item_for(self, tool: str, args: Mapping[str, Any]) -> str | None:
        return (f"source:{args.get('source_id')}"
if tool == "fetch" and args.get("source_id") in self.sources else None)

    def fact(self, item: str, result: ToolResult) -> Any:
        data = result.data if isinstance(result.data, dict) else {}
        if "title" not in data or "published" not in data:
            return Phrase(N_("title or publication year missing"))
        summary = Phrase(FACT_SUMMARY, title=Phrase(str(data["title"])), year=data["published"])
        return {"title": data["title"], "published": data["published"]}, summary

    def answer(self, facts: Mapping[str, str], missing: Mapping[str, str]) -> str:
        return Phrase(N_("Summary from {facts}."), facts=joined(list(facts.values()), "; "))

    def join(self) -> JoinRule:
        return JoinRule(kind="minimum", minimum=self.minimum, timeout_s=self.join_timeout_s)

