"""Stub "planner" models: they decide from what they can see, like a model reading its context.

A :class:`TaskPlanner` is a deterministic stand-in for a model. Each turn it
looks at the request it was sent and picks the next action:

- with ``use_state=True`` it reads the ``TASK STATE`` block the controller
  appends and works on the first open item — the way a model uses a reliable
  state summary;
- without it, it reconstructs progress from the messages it can *see*: with
  ``window=2`` only the last two messages of the transcript, which is how key
  state drowns in a long context. That planner re-queries city A.

Quirks make it misbehave on purpose (re-ask a finished item, claim success
early, send bad arguments, try a tempting tool after a denial), either a fixed
number of times or with a probability drawn from a seeded RNG, for the
randomised runs in :mod:`agentloops.controller.teaching.experiments`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

from agentloops.controller.sim.scenario_files import ControllerScenario
from agentloops.controller.task.tasks import Task
from agentloops.controller.vocabulary.tools import ASK_USER, ToolResult
from agentloops.i18n import N_, Phrase
from agentloops.messages import Message
from agentloops.response import Response, ToolCall
from agentloops.stubs import FunctionModel, Model, ScriptedModel

USER_ANSWER_PREFIX = "USER ANSWER"
"""How the controller passes a resumed user answer into the transcript: ``USER ANSWER order_id: A-1042``."""


def parse_block(text: str | None, header: str) -> dict[str, Any] | None:
    """The JSON object after a ``header`` line (``TASK STATE``, ``MEMORY…``), or ``None``."""
    if not text or not text.startswith(header):
        return None
    _, _, body = text.partition("\n")
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


class TaskPlanner(FunctionModel):
    """A stub model that plans the next action for a task from the request it receives.

    Args:
        task: the task it works on (it "read the prompt").
        use_state: read the ``TASK STATE`` block when the controller sends one.
        window: how many recent transcript messages it can see (``None``: all).
        parallel: issue every open item at once (parallel tool calls).
        reask: re-query the first finished item this many times.
        claim_early_after: claim success once this many items are done, even if more are open.
        bad_arguments: send invalid arguments on this many calls.
        alternative: ``(tool, args)`` to try after a permission denial (the tempting route around).
        ask_for_inputs: ask the user via ``ask_user`` instead of calling a tool without a required input.
        open_ended: the prompt has no exit ("find as much as you can"): the planner never judges that it
            has enough, so once every item is done it searches again (re-queries the first finished item).
        seed: seed for the probabilistic quirks.
        p_repeat / p_early_claim / p_bad_arguments / p_forget: per-call probabilities of the quirks
            (``p_forget``: ignore the state this turn).
    """

    def __init__(self, task: Task, *, use_state: bool = True, window: int | None = None, parallel: bool = False,
                 reask: int = 0, claim_early_after: int | None = None, bad_arguments: int = 0,
                 alternative: tuple[str, Mapping[str, Any]] | None = None, ask_for_inputs: bool = False,
                 open_ended: bool = False, seed: int | None = None, p_repeat: float = 0.0, p_early_claim: float = 0.0,
                 p_bad_arguments: float = 0.0, p_forget: float = 0.0) -> None:
        super().__init__(self._plan)
        self.task = task
        self.use_state = use_state
        self.window = window
        self.parallel = parallel
        self.reasks_left = reask
        self.claim_early_after = claim_early_after
        self.bad_left = bad_arguments
        self.alternative = alternative
        self.alternative_used = False
        self.ask_for_inputs = ask_for_inputs
        self.open_ended = open_ended
        self.seed = seed
        self.p = {"repeat": p_repeat, "early": p_early_claim, "bad": p_bad_arguments, "forget": p_forget}

    def __repr__(self) -> str:
        return (f"TaskPlanner({self.task.name}, use_state={self.use_state}, window={self.window}, "
                f"{len(self.requests)} calls so far)")

    # -- what the planner can see ---------------------------------------------------------------
    def _view(self, messages: Sequence[Message]) -> dict[str, Any]:
        state = None
        body = [m for m in messages]
        if body and parse_block(body[-1].content, "TASK STATE") is not None:
            state_message = body.pop()
            state = parse_block(state_message.content, "TASK STATE")
        first_reply = next((i for i, m in enumerate(body) if m.role == "assistant"), len(body))
        head, transcript = body[:first_reply], body[first_reply:]
        visible = transcript if self.window is None else transcript[-self.window:] if self.window else []
        memory = None
        for message in head + visible:
            memory = parse_block(message.content, "MEMORY") or memory
        return {"state": state, "memory": memory, "visible": head + visible}

    def _knowledge(self, view: dict[str, Any], forget: bool) -> dict[str, Any]:
        items = list(self.task.items)
        state = view["state"] if self.use_state and not forget else None
        inputs = dict(self.task.kind.inputs())
        if state is not None:
            inputs.update(state.get("inputs", {}))
            return {"open": list(state.get("open", [])), "done": dict(state.get("done", {})),
                    "missing": dict(state.get("missing", {})), "inputs": inputs}
        done: dict[str, str] = {}
        memory = view["memory"]
        if memory:
            inputs.update({str(k): str(v) for k, v in (memory.get("inputs") or {}).items()})
            for fact in memory.get("facts", []):
                done[fact["item"]] = f"{fact['summary']} [{fact['source']}]"
        for message in view["visible"]:
            if message.role == "user" and message.content and message.content.startswith(USER_ANSWER_PREFIX):
                name, _, value = message.content[len(USER_ANSWER_PREFIX):].strip().partition(":")
                inputs[name.strip()] = value.strip()
            if message.role != "tool" or not message.content:
                continue
            try:
                obs = json.loads(message.content)
            except ValueError:
                continue
            if not isinstance(obs, dict) or obs.get("status") not in ("ok", "empty"):
                continue
            item = self.task.kind.item_for(str(obs.get("tool")), obs.get("args") or {})
            if item is None:
                continue
            result = ToolResult(obs["status"], data=obs.get("data"), source=str(obs.get("source", "")))
            fact = self.task.kind.fact(item, result) if "data" in obs else None
            summary = fact[1] if isinstance(fact, tuple) else str(obs.get("summary", "(stored)"))
            done[item] = f"{summary} [{obs.get('source', '?')}]"
        open_items = [i for i in items if i not in done]
        return {"open": open_items, "done": done, "missing": {}, "inputs": inputs}

    def _last_tool_status(self, view: dict[str, Any]) -> str | None:
        for message in reversed(view["visible"]):
            if message.role == "tool" and message.content:
                try:
                    return str(json.loads(message.content).get("status"))
                except (ValueError, AttributeError):
                    return None
        return None

    # -- deciding ----------------------------------------------------------------------------------
    def _plan(self, messages: Sequence[Message]) -> Response:
        n = len(self.requests)
        rng = random.Random(f"{self.seed}:{n}") if self.seed is not None else None

        def chance(name: str) -> bool:
            return rng is not None and self.p[name] > 0 and rng.random() < self.p[name]

        view = self._view(messages)
        know = self._knowledge(view, forget=chance("forget"))
        open_items = [i for i in know["open"] if i not in know["missing"]]
        done = know["done"]

        if self.alternative and not self.alternative_used and self._last_tool_status(view) == "permission_denied":
            self.alternative_used = True
            tool, args = self.alternative
            return self._calls(n, [(tool, dict(args))])
        if done and (self.reasks_left > 0 or chance("repeat")):
            self.reasks_left = max(0, self.reasks_left - 1)
            first = next(iter(done))
            return self._calls(n, [self.task.kind.action(first, know["inputs"])])
        early = self.claim_early_after is not None and len(done) >= self.claim_early_after
        if open_items and done and (early or chance("early")):
            return _answer(Phrase(N_("All done. {answer}"), answer=self.task.kind.answer(_plain(done), {})))
        if self.open_ended and done and not open_items:  # no exit in the goal: one more search, always
            return self._calls(n, [self.task.kind.action(next(iter(done)), know["inputs"])])
        if not open_items or (len(done) >= self.task.need and not self.open_ended):  # it knows what is enough
            return _answer(self.task.kind.answer(_plain(done), know["missing"]))
        targets = open_items if self.parallel else open_items[:1]
        actions = []
        for item in targets:
            tool, args = self.task.kind.action(item, know["inputs"])
            spec = self.task.toolbox().tools.get(tool)
            if self.ask_for_inputs and spec is not None:
                missing = [p for p, param in spec.params.items() if param.ask_user and not args.get(p)]
                if missing:
                    question = spec.params[missing[0]].ask_user or f"What is the {missing[0]}?"
                    return self._calls(n, [(ASK_USER, {"question": question, "parameter": missing[0]})])
            if self.bad_left > 0 or chance("bad"):
                self.bad_left = max(0, self.bad_left - 1)
                args = _mangle(args)
            actions.append((tool, args))
        return self._calls(n, actions)

    def _calls(self, n: int, actions: Sequence[tuple[str, Mapping[str, Any]]]) -> Response:
        calls = tuple(ToolCall(id=f"call_{n + 1}_{k + 1}", name=tool,
                               arguments=json.dumps(dict(args), ensure_ascii=False))
                      for k, (tool, args) in enumerate(actions))
        return Response(content=None, tool_calls=calls, finish_reason="tool_calls")


def _plain(done: Mapping[str, str]) -> dict[str, str]:
    return {item: text.rsplit(" [", 1)[0] for item, text in done.items()}


def _answer(text: str) -> Response:
    return Response(content=text, finish_reason="stop")


def _mangle(args: Mapping[str, Any]) -> dict[str, Any]:
    """Break the arguments the way models do: a number where a string belongs."""
    out = dict(args)
    for key, value in out.items():
        if isinstance(value, str):
            out[key] = 404
            return out
    out["unexpected"] = True
    return out


def build_model(scenario: ControllerScenario, task: Task, skip: int = 0) -> Model:
    """The scenario's stub model (a planner, or a script starting after ``skip`` replies already used)."""
    spec = scenario.model
    model: Model
    if spec.script is not None:
        model = ScriptedModel(spec.script[skip:] or spec.script[-1:])
    else:
        options = spec.planner.model_dump() if spec.planner is not None else {}
        alternative = options.pop("alternative", None)
        model = TaskPlanner(task, alternative=(alternative["tool"], alternative["args"]) if alternative else None,
                            **options)
    if spec.outage_after is None:
        return model
    return ProviderOutage(model, max(0, spec.outage_after - skip))


class ProviderUnavailable(ConnectionError):
    """What a client raises when the provider answers HTTP 503: the service, not the request, failed."""


class ProviderOutage:
    """A model whose provider goes down after ``replies`` answers (a stand-in for an HTTP 503 outage)."""

    def __init__(self, model: Model, replies: int) -> None:
        self.model = model
        self.replies_left = replies

    def __call__(self, messages: Sequence[Message]) -> Response:
        if self.replies_left <= 0:
            raise ProviderUnavailable("503 Service Unavailable")
        self.replies_left -= 1
        return self.model(messages)
