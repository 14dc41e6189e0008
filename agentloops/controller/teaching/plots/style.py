"""What every controller chart shares: colours per stop status, loop, policy, call state and action; the
PNG and series helpers."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Union

from agentloops.i18n import N_, _
from agentloops.plots.style import (
    CAP_COLOR,
    OKABE_ITO,
    OTHER_COLOR,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from agentloops.controller.persistence.result import ControllerRun


STATUS_COLORS: dict[str, str] = {
    "succeeded": OKABE_ITO["bluish_green"],
    "partially_completed": OKABE_ITO["sky_blue"],
    "waiting_for_user": OKABE_ITO["yellow"],
    "failed_unrecoverable": OKABE_ITO["vermillion"],
    "system_failure": OKABE_ITO["black"],
    "budget_exhausted": OKABE_ITO["orange"],
    "no_progress": OKABE_ITO["reddish_purple"],
    "cancelled": OTHER_COLOR,
    "handed_off": OKABE_ITO["blue"],
}
"""One colour per stop status, in every chart and widget of the controller notebooks."""

STATUS_HATCHES: dict[str, str] = {
    "succeeded": "",
    "partially_completed": "..",
    "waiting_for_user": "oo",
    "failed_unrecoverable": "xx",
    "system_failure": "**",
    "budget_exhausted": "//",
    "no_progress": "\\\\",
    "cancelled": "--",
    "handed_off": "++",
}
"""A hatch per stop status: a second cue for readers who cannot tell two colours apart."""

CAP_OUTCOME_COLORS: dict[str, str] = {
    "succeeded": OKABE_ITO["bluish_green"],
    "false success": OKABE_ITO["vermillion"],
    "hit the cap": CAP_COLOR,
}
"""How a cap-only run ended (see :data:`agentloops.controller.teaching.experiments.CAP_OUTCOME_STATUS`)."""

LOOP_COLORS: dict[str, str] = {"cap-only": CAP_COLOR, "controller": OKABE_ITO["blue"]}
"""The two loops of the randomized comparisons: the cap-only loop in the colour of the cap (black, as part 1
draws the step cap), the controller in blue (its lines and bars in every widget)."""

POLICY_COLORS: dict[str, str] = {
    "naive": OKABE_ITO["vermillion"],
    "default": OKABE_ITO["blue"],
    "degrade": OKABE_ITO["sky_blue"],
}
"""The shipped error policies (naive is drawn like the blind retry of notebook 05)."""

CALL_STATE_LABELS: tuple[str, ...] = (N_("pending"), N_("running"), N_("succeeded"), N_("failed"), N_("cancelled"),
                                      N_("ignored"))
"""The call states as a legend names them (the states themselves stay English in traces and tables)."""

CALL_STATE_COLORS: dict[str, str] = {
    "pending": "#dddddd",
    "running": OKABE_ITO["yellow"],
    "succeeded": OKABE_ITO["bluish_green"],
    "failed": OKABE_ITO["vermillion"],
    "cancelled": OTHER_COLOR,
    "ignored": OTHER_COLOR,
}
"""Call states on the parallel timeline (an ignored call was cancelled, then its result arrived late)."""

ACTION_COLORS: dict[str, str] = {
    "call": OKABE_ITO["blue"],
    "retry": OKABE_ITO["orange"],
    "fallback": OKABE_ITO["reddish_purple"],
    "blocked": OKABE_ITO["vermillion"],
    "held": OKABE_ITO["vermillion"],
    "answer": OKABE_ITO["bluish_green"],
    "ask_user": OKABE_ITO["yellow"],
    "other": OTHER_COLOR,
}
"""Kinds of action in a trajectory (the prefix of an action label)."""

ACTION_LABELS: dict[str, str] = {"call": N_("call"), "retry": N_("retry"), "fallback": N_("fallback"),
                                  "blocked": N_("blocked"), "held": N_("held"), "answer": N_("answer"),
                                  "other": N_("other")}
"""The kinds of action as a legend names them (``ask_user`` keeps its code name)."""


def _action_label(kind: str) -> str:
    return _(ACTION_LABELS[kind]) if kind in ACTION_LABELS else kind


NO_CHANGE_COLOR = OKABE_ITO["vermillion"]
"""The cross that marks a turn whose state version did not move (vermillion: waste, as in part 1)."""

DIFFERS_EDGE = "black"
"""The thick outline of an action or stop where two trajectories differ (vermillion already means "blocked")."""

RunsLike = Union["ControllerRun", Sequence["ControllerRun"], Mapping[str, "ControllerRun"]]
"""One run, several runs (labelled by ``run.label``), or runs by label."""


def status_color(status: str) -> str:
    """The colour of a stop status (grey for anything else)."""
    return STATUS_COLORS.get(status, OTHER_COLOR)


def policy_color(name: str) -> str:
    """The colour of a policy; grey for a custom one."""
    return POLICY_COLORS.get(name, OTHER_COLOR)


def action_kind(label: str) -> str:
    """``retry``, ``fallback``, ``blocked``, ``held``, ``answer``, ``ask_user`` or ``call`` from an action label."""
    if label in ("answer", "ask_user"):
        return label
    prefix, sep, _rest = label.partition(":")
    if sep and prefix in ACTION_COLORS and "(" not in prefix:
        return prefix
    return "call" if "(" in label else "other"


def to_png(fig: Figure, dpi: int = 72) -> bytes:
    """The figure as PNG bytes (what a widget's ``Image`` shows)."""
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=dpi)
    return out.getvalue()


def _labelled(runs: RunsLike) -> list[tuple[str, ControllerRun]]:
    from agentloops.controller.persistence.result import ControllerRun

    if isinstance(runs, ControllerRun):
        pairs = [(runs.label, runs)]
    elif isinstance(runs, Mapping):
        pairs = [(str(k), v) for k, v in runs.items()]
    else:
        pairs = [(r.label, r) for r in runs]
    if not pairs:
        raise ValueError("nothing to plot: no controller runs were given")
    for label, run in pairs:
        if not isinstance(run, ControllerRun):
            raise TypeError(f"{label}: expected a ControllerRun (from run_scenario or Controller.run); "
                            f"got {type(run).__name__}")
    return pairs


_LINE_STYLES: tuple[tuple[str, str], ...] = (("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"))
_SERIES_COLORS: tuple[str, ...] = (OKABE_ITO["blue"], OKABE_ITO["vermillion"], OKABE_ITO["bluish_green"],
                                   OKABE_ITO["reddish_purple"], OKABE_ITO["orange"], OKABE_ITO["sky_blue"])


def _series_style(i: int, status: str | None = None) -> tuple[str, str, str]:
    """Colour, line style and marker of the ``i``-th line; with ``status``, the colour is that stop status's
    (a line's colour then means how its run ended, as everywhere else), and the style tells the lines apart."""
    style, marker = _LINE_STYLES[i % len(_LINE_STYLES)]
    color = status_color(status) if status is not None else _SERIES_COLORS[i % len(_SERIES_COLORS)]
    return color, style, marker


_DODGE = 0.09
"""Sideways shift between two lines of one panel, so the line drawn first is never hidden."""
