"""What every notebook widget shares: stable CSS classes for browser tests, label widths, argument checks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets

from agentloops.errors import UsageError
from agentloops.i18n import _
from agentloops.widgets.script import (
    MAX_CAP,
)


def _classed(widget: widgets.DOMWidget, *classes: str) -> Any:
    for name in classes:
        widget.add_class(name)
    return widget


_STYLE = {"description_width": "100px"}

def _check_choice(name: str, value: object, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise UsageError(_("unknown {name} {value}; expected one of: {allowed}").format(
            name=name, value=repr(value), allowed=", ".join(allowed)))


def _check_cap(max_steps: object) -> None:
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or not 1 <= max_steps <= MAX_CAP:
        raise UsageError(_("max_steps must be a whole number from 1 to {most} in the explorer; got {value}").format(
            most=MAX_CAP, value=repr(max_steps)))
