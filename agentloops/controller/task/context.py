"""Context control: keep big outputs outside the context, compact safely, measure every request.

Each turn adds the model's reply, the tool arguments and the observation. Dump
whole web pages and repeated errors into the transcript and the model loses
the goal while every call costs more. Three tools against that:

1. :class:`ContextStore` — an output larger than ``offload_over_tokens`` is
   stored outside the context; the model gets a reference and a summary.
2. Compaction — when a request grows past ``compact_over_tokens``, older turns
   are replaced by a *memory* written from the task state. A memory must keep
   the goal, the hard constraints, what the user supplied (an order id…), the
   confirmed facts with their source pointers, the open items and what was
   already tried; dropping any of them sends the loop back down an old path
   (or back to the user with a question they already answered).
3. :func:`check_compaction` — verifies a memory against the state before it
   replaces anything; a compaction that lost a constraint is caught and the
   safe memory is used instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, NonNegativeInt, PositiveInt

from agentloops.controller.task.state import TaskState
from agentloops.controller.vocabulary.readback import readable
from agentloops.controller.vocabulary.tools import ToolResult
from agentloops.i18n import N_, Phrase, joined
from agentloops.tokens import Tokenizer, estimate_tokens


class ContextPolicy(BaseModel):
    """How the controller keeps the context small.

    Attributes:
        offload_over_tokens: tool data larger than this is stored outside the context (``None``: never).
        summary_chars: length of the summary left in the context for stored data.
        compact_over_tokens: compact when a request would be larger than this (``None``: never).
        keep_recent_turns: turns kept verbatim by a compaction.
        check_compaction: verify every memory against the state and refuse one that drops something.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    offload_over_tokens: PositiveInt | None = 150
    summary_chars: PositiveInt = 160
    compact_over_tokens: PositiveInt | None = None
    keep_recent_turns: NonNegativeInt = 2
    check_compaction: bool = True


class ContextStore:
    """Outputs kept outside the context, addressed by reference (``ref:1``, ``ref:2``…)."""

    def __init__(self) -> None:
        self.items: dict[str, Any] = {}

    def put(self, data: Any) -> str:
        """Store ``data``; return its reference."""
        ref = f"ref:{len(self.items) + 1}"
        self.items[ref] = data
        return ref

    def get(self, ref: str) -> Any:
        """The stored data for ``ref`` (raises KeyError for an unknown reference)."""
        return self.items[ref]

    def __len__(self) -> int:
        return len(self.items)


def summarize(data: Any, chars: int = 160) -> str:
    """A short, deterministic summary of tool data: short fields kept, long text cut."""
    if isinstance(data, Mapping):
        parts = []
        for key, value in data.items():
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            parts.append(f"{key}={text[:60] + '…' if len(text) > 60 else text}")
        text = "; ".join(parts)
    else:
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return text if len(text) <= chars else text[: chars - 1] + "…"


def observe(result: ToolResult, tool: str, args: Mapping[str, Any], store: ContextStore | None,
            policy: ContextPolicy, tokenizer: Tokenizer = estimate_tokens) -> tuple[dict[str, Any], str | None]:
    """The observation for the context, with large data replaced by a reference and a summary.

    Returns:
        (observation, reference or ``None``).
    """
    observation = result.observation(tool, args)
    limit = policy.offload_over_tokens
    if store is None or limit is None or result.status != "ok":
        return observation, None
    text = json.dumps(result.data, ensure_ascii=False)
    if tokenizer(text) <= limit:
        return observation, None
    ref = store.put(result.data)
    del observation["data"]
    observation["ref"] = ref
    observation["summary"] = summarize(result.data, policy.summary_chars)
    observation["stored_tokens"] = tokenizer(text)
    return observation, ref


MemoryUsed = Literal["compactor", "safe_memory"]
"""Which memory replaced the older turns: the compactor's, or (the check refused it) the one written from state."""

Compactor = Callable[[TaskState], str]
"""Writes the memory that replaces older turns, from the task state."""


def memory_from_state(state: TaskState) -> str:
    """The safe compactor: goal, constraints, user inputs, facts with source pointers, open and missing
    items, and what was tried."""
    data = {
        "goal": state.goal,
        "constraints": list(state.constraints),
        "inputs": dict(state.inputs),
        "facts": [{"item": f.item, "summary": f.summary, "source": f.source, **({"ref": f.ref} if f.ref else {})}
                  for f in state.facts.values()],
        "open": state.open_items(),
        "missing": state.missing_items(),
        "tried": state.failure_summary(),
    }
    return "MEMORY (older turns compacted)\n" + json.dumps(data, ensure_ascii=False)


def careless_compactor(state: TaskState) -> str:
    """A stub of a careless summariser: keeps the goal and open items, drops constraints, inputs and done work.

    It exists to be caught: :func:`check_compaction` reports what it lost, and
    a model that trusts it re-does finished steps.
    """
    data = {"goal": state.goal, "open": state.open_items() + state.done_items()}
    return "MEMORY (older turns compacted)\n" + json.dumps(data, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class CompactionCheck:
    """Whether a memory kept everything it must.

    Attributes:
        ok: nothing required was dropped.
        dropped: what is missing, one line each (``constraint: …``, ``fact: …``).
    """

    ok: bool
    dropped: tuple[str, ...] = ()

    def phrase(self) -> Phrase:
        """The check in one line: English, as trace notes keep it, and shown in the learner's language."""
        if self.ok:
            return Phrase(N_("compaction kept goal, constraints, inputs, facts, sources, open items and attempts"))
        return Phrase(N_("compaction dropped: {lines}"), lines=joined(self.dropped, "; "))

    def __str__(self) -> str:
        return self.phrase()

    def shown(self) -> str:
        """The check in one line, in the language in use (``print(check)`` prints the English)."""
        return self.phrase().shown()


DROPPED: dict[str, str] = {part: readable(template) for part, template in (
    ("goal", N_("goal: {goal}")), ("constraint", N_("constraint: {constraint}")),
    ("input", N_("input: {name} = {value}")), ("fact", N_("fact: {item} [{source}]")),
    ("open item", N_("open item: {item}")), ("tried", N_("tried: {attempt}")))}
"""How :func:`check_compaction` names each part a memory dropped: English lines in traces, read back translated."""


def _phrase(text: str) -> Phrase:
    """``text`` as a phrase: itself if it is one, else shown through the catalog (a constraint marked with ``N_``)."""
    return text if isinstance(text, Phrase) else Phrase(text)


def check_compaction(memory: str, state: TaskState) -> CompactionCheck:
    """Check that ``memory`` still carries the goal, every hard constraint, every user input (name and
    value), every confirmed fact with its source pointer, every open item, and every failed attempt
    (``tool: status``). Plain substring checks: any wording that keeps the exact texts passes."""
    dropped: list[str] = []
    if state.goal not in memory:
        dropped.append(Phrase(DROPPED["goal"], goal=_phrase(state.goal)))
    dropped += [Phrase(DROPPED["constraint"], constraint=_phrase(c)) for c in state.constraints if c not in memory]
    dropped += [Phrase(DROPPED["input"], name=name, value=value) for name, value in state.inputs.items()
                if name not in memory or value not in memory]
    for fact in state.facts.values():
        if fact.item not in memory or fact.source not in memory:
            dropped.append(Phrase(DROPPED["fact"], item=fact.item, source=fact.source))
    dropped += [Phrase(DROPPED["open item"], item=item) for item in state.open_items() if item not in memory]
    tried = dict.fromkeys(f"{f['tool']}: {f['status']}" for f in state.failures)
    dropped += [Phrase(DROPPED["tried"], attempt=attempt) for attempt in tried if attempt not in memory]
    return CompactionCheck(not dropped, tuple(dropped))


@dataclass(frozen=True, slots=True)
class CompactionEvent:
    """One compaction, as written to the trace.

    Attributes:
        turn: when it happened.
        tokens_before: request size before.
        tokens_after: request size after.
        turns_compacted: turns replaced by the memory.
        check: the result of :func:`check_compaction` on the compactor's output.
        used: ``compactor`` (its memory was used) or ``safe_memory`` (it was refused).
    """

    turn: int
    tokens_before: int
    tokens_after: int
    turns_compacted: int
    check: CompactionCheck
    used: MemoryUsed

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"turn": self.turn, "tokens_before": self.tokens_before, "tokens_after": self.tokens_after,
                "turns_compacted": self.turns_compacted, "ok": self.check.ok, "dropped": list(self.check.dropped),
                "used": self.used}


COMPACTORS: dict[str, Compactor] = {"state": memory_from_state, "careless": careless_compactor}
"""Compactors a scenario file can name: the safe one written from state, and a careless stub."""
