"""Admission: the verdict on each tool call before anything runs — the same rules for one call or many.

In order: a cancel that came due; a repeated fingerprint (no progress since an identical
call that brought nothing); the pre-check (schema, permission gate, task rules, risk), with
a value the *user* gave that fails the schema sent back to the user; and, if the same call
failed retryably before, the retry rules (a side effect is never repeated blindly; anything
else needs a retry left in the shared budget).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agentloops.controller.engine import Engine, _Turn
from agentloops.controller.progress import (
    Fingerprint,
    Repeat,
    normalize_value,
)
from agentloops.controller.status import Stop
from agentloops.controller.tools import (
    ToolResult,
    ToolSpec,
    action_label,
    validate,
)
from agentloops.messages import Message
from agentloops.response import ToolCall

AdmissionVerdict = Literal["run", "repeat", "stop", "skip", "rejected"]
"""What admission decided for one tool call before anything ran."""


@dataclass(frozen=True)
class _Admission:
    """The verdict on one tool call before it runs — the same rules for single and parallel calls.

    Attributes:
        verdict: ``run``; ``repeat`` (a repeated fingerprint: not run); ``stop`` (the run must stop:
            cancelled, held by a rule or the risk policy, a side effect to re-check, retries spent);
            ``skip`` (not run; the item was given up because retries are spent); ``rejected``
            (answered before running by the schema or the permission gate).
        tool / args / label / fp: the call, its label and its fingerprint.
        spec: the tool, when it exists.
        kind: ``call``, or ``retry`` when the same call failed transiently before (the caller pays one
            retry from the shared budget when it launches the call).
        stop: for ``stop``, the stop.
        repeat: for ``repeat``, the earlier sighting.
        rejection: for ``rejected``, the result that answered the call.
    """

    verdict: AdmissionVerdict
    tool: str
    args: dict[str, Any]
    label: str
    fp: Fingerprint
    spec: ToolSpec | None = None
    kind: str = "call"
    stop: Stop | None = None
    repeat: Repeat | None = None
    rejection: ToolResult | None = None


def _no_handler(args: dict[str, Any]) -> Any:
    """The handler of a placeholder spec for a tool that does not exist (never called)."""
    return None


class Admission(Engine):
    """Decide, for each call of a reply, whether it runs — and answer the ones that do not."""

    def _admit(self, t: _Turn, call: ToolCall, *, in_batch: bool, reserved: Counter[str] | None = None
               ) -> _Admission:
        """Decide, before anything runs, what happens to one tool call (single and parallel calls alike).

        In order: a cancel that has come due; a repeated fingerprint; the pre-check (schema,
        permission gate, task rules, risk) — with a user-supplied value that fails the schema
        sent back to the user; then, if the same call failed transiently before, it is a
        *retry*: a side effect is never repeated (a person checks), and anything else needs a
        retry left in the shared budget (minus those ``reserved`` by earlier calls of the same
        batch), or it is blocked. The caller pays for an admitted retry when it launches it.
        """
        tool, args = call.name, dict(call.parsed_arguments or {})
        label = action_label(tool, args)
        spec = self.toolbox.tools.get(tool)
        fp = Fingerprint(tool, self._norm(tool, args), self.state.progress_version)

        def refuse(verdict: AdmissionVerdict, prefix: str, route_taken: str, **extra: Any) -> _Admission:
            self._record_action(t, f"{prefix}:{label}", None, tool, args, prefix, None, route_taken, fp)
            return _Admission(verdict, tool, args, label, fp, **extra)

        if self._cancel_due():
            return refuse("stop", "blocked", "stop:cancelled",
                          stop=self._cancel_stop(f"the user cancelled the task before {tool} ran", tool))
        if self.policy.detect_repeats and (repeat := self.monitor.check(fp)) is not None:
            self.state.note(repeat.explain())
            return refuse("repeat", "blocked", "skip" if in_batch else "stop:no_progress", repeat=repeat)
        checked = self._precheck(spec, tool, args)
        if isinstance(checked, Stop):
            return refuse("stop", "held", f"stop:{checked.status}", stop=checked, spec=spec)
        if checked is not None:
            asked = self._reask_user(spec, args, checked)
            if asked is not None:
                return refuse("stop", "held", "ask_user", stop=asked, spec=spec)
            return _Admission("rejected", tool, args, label, fp, spec=spec, rejection=checked)
        assert spec is not None
        if (tool, fp.args) not in self.failed_calls:
            return _Admission("run", tool, args, label, fp, spec=spec)
        if spec.side_effects and not self.policy.retry_side_effects:
            stop = self._make_stop("handed_off", "unknown_outcome_side_effect",
                                   f"{tool} changes the world and its last attempt failed transiently: whether it "
                                   "took effect is unknown, so a person must check before it runs again",
                                   tool=tool, pending_action=label)
            return refuse("stop", "held", "stop:handed_off", stop=stop, spec=spec)
        left = self._retries_left(tool, reserved)
        if left is not None and left < 1:
            return self._no_retry_left(spec, args, refuse)
        return _Admission("run", tool, args, label, fp, spec=spec, kind="retry")  # the model repeats it: a retry

    def _no_retry_left(self, spec: ToolSpec, args: Mapping[str, Any],
                       refuse: Callable[..., _Admission]) -> _Admission:
        """The model repeats a failed call with the shared retry budget spent: stop, or give the item up."""
        if self.policy.on_retries_exhausted == "stop":
            return refuse("stop", "blocked", "stop:budget_exhausted", stop=self._budget_stop("retries", 1), spec=spec)
        item = self.task.type.item_for(spec.name, args, self.task.params)
        if item is not None:
            self.state.mark_missing(item, "retry budget spent: the same call failed before and no retries are left",
                                    code="budget:retries")
        return refuse("skip", "blocked", "degrade", spec=spec)

    def _precheck(self, spec: ToolSpec | None, tool: str, args: Mapping[str, Any]) -> ToolResult | Stop | None:
        """Everything that answers before a tool runs: schema, permission gate, rules, risk."""
        if spec is None:
            known = ", ".join(self.toolbox.names())
            return ToolResult("invalid_arguments", error=f"there is no tool named {tool!r} (tools: {known})", ran=False)
        rejection = validate(spec, args)
        if rejection is not None:
            return rejection
        if self.policy.permission_gate == "uniform" and spec.capability and spec.capability not in self.task.granted:
            return ToolResult("permission_denied", error=f"{tool} needs the {spec.capability} permission, which this "
                                                         "caller does not have", ran=False, source="permission gate")
        rule = self.task.type.rules(tool, args, self.task.params)
        if rule is not None:
            return self._make_stop("failed_unrecoverable", "against_policy", rule, tool=tool,
                                   pending_action=action_label(tool, args))
        if spec.risk == "high" and self.policy.high_risk == "handoff":
            return self._make_stop("handed_off", "high_risk_action",
                                   f"{tool} is a high-risk action with side effects; a person must approve it",
                                   tool=tool, pending_action=action_label(tool, args))
        return None

    def _reask_user(self, spec: ToolSpec | None, args: Mapping[str, Any], rejection: ToolResult) -> Stop | None:
        """A value the *user* gave that the schema rejects goes back to the user, not to the model.

        The model cannot repair what only the user knows; asking it to would invite a guess.
        The question names the value and repeats the parameter's own question, never the
        tool's validation pattern.
        """
        name = rejection.parameter
        if spec is None or rejection.status != "invalid_arguments" or name is None or name not in spec.params:
            return None
        value = args.get(name)
        if not self._from_user(value):
            return None
        words = name.replace("_", " ")
        ask = spec.params[name].ask_user or f"Could you send the correct {words}?"
        question = f"{value!r} does not look like a valid {words}. {ask}"
        self.state.set_waiting(name, question)
        return self._make_stop("waiting_for_user", "invalid_user_input",
                               f"the {words} the user gave ({value!r}) is not valid for {spec.name}; only the user "
                               "can correct it, so the model is not asked to guess", tool=spec.name,
                               error_class="invalid_arguments", question=question)

    def _from_user(self, value: Any) -> bool:
        """True when ``value`` is one the user supplied (an input in state), not one the model made up."""
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            return False
        return any(normalize_value(str(given)) == normalize_value(str(value)) for given in self.state.inputs.values())

    def _record_action(self, t: _Turn, label: str, call_id: str | None, tool: str, args: Mapping[str, Any],
                       kind: str, result: ToolResult | None, route_taken: str | None,
                       fp: Fingerprint | None = None) -> None:
        t.actions.append({"label": label, "call_id": call_id, "tool": tool, "args": dict(args),
                          "args_norm": self._norm(tool, args), "kind": kind,
                          "status": result.status if result else None, "route": route_taken,
                          "result": result.to_dict() if result else None,
                          "fingerprint": None if fp is None else [fp.tool, fp.args, fp.state_version]})

    def _note_attempt(self, tool: str, args: Mapping[str, Any], result: ToolResult) -> None:
        """Remember a failed attempt in state, and which calls a repeat would *retry*."""
        key = (tool, self._norm(tool, args))
        if result.status in ("ok", "empty"):
            self.failed_calls.discard(key)
            for slip in [k for k in self.repairs if k.startswith(f"{tool}:")]:
                del self.repairs[slip]  # a success of the tool: the next slip is a first one again
            return
        self.state.record_failure(tool, result.status, result.error or "", self.turn)
        if result.retryable:  # the tool's judgement: calling it again is a retry, paid from the shared budget
            self.failed_calls.add(key)

    def _not_run(self, call: ToolCall, tool: str, why: str) -> None:
        """Answer a call that did not run, so every call in the transcript has its tool message."""
        text = json.dumps({"tool": tool, "status": "not run", "error": why}, ensure_ascii=False)
        self.groups[-1].append(Message("tool", text, tool_call_id=call.id, name=tool))
