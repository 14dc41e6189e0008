"""Saved runs: the state a paused task needs to continue later, even in another process.

A task waiting for the user must not keep a loop spinning in the background.
It saves what it has — task state, budgets used, clock, transcript, action
fingerprints, fault counters — and stops. :func:`~agentloops.controller.controller.resume`
continues from exactly there once the user answers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from agentloops.controller.errors import ConfigError
from agentloops.errors import describe_validation_error


class SavedRun(BaseModel):
    """The shape of a saved run (validated when loaded)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int
    trace_id: str
    label: str
    status: str
    question: str | None
    parameter: str | None
    task: dict[str, Any]
    budget: dict[str, Any]
    policy: dict[str, Any]
    context: dict[str, Any]
    send_state: bool
    model_latency_s: float
    scenario: dict[str, Any] | None
    faults: list[dict[str, Any]]
    injector: dict[str, int]
    state: dict[str, Any]
    meter: dict[str, Any]
    clock: float
    turn: int
    head: list[dict[str, Any]]
    groups: list[list[dict[str, Any]]]
    monitor: dict[str, Any]
    repairs_used: int
    claims_rejected: int
    call_counter: int
    failed_calls: list[list[str]]
    model_calls: int
    turns: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    trace_path: str | None


def load_saved(saved: Mapping[str, Any] | str | Path) -> dict[str, Any]:
    """Validate a saved run given as a dict or a JSON file; one-line errors name the source and field."""
    source = "saved run"
    if isinstance(saved, (str, Path)):
        path = Path(saved)
        source = str(path)
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"{path}: no such saved-run file") from None
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ConfigError(f"{path}: not a readable JSON saved run ({exc.__class__.__name__})") from None
    else:
        data = dict(saved)
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a JSON object; got {type(data).__name__}")
    try:
        SavedRun.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{source}: {describe_validation_error(exc)}") from None
    if data["status"] != "waiting_for_user":
        raise ConfigError(f"{source}: status {data['status']!r} cannot be resumed; only a waiting_for_user run "
                          "continues with a user's answer (a handed-off run is picked up by a person)")
    return data
