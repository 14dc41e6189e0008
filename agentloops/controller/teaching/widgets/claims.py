"""Notebook 11: premature claims of done, and how many a policy lets through."""


from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from agentloops.controller.controller import Controller
from agentloops.controller.policy.error_policy import resolve_policy
from agentloops.controller.sim.planners import TaskPlanner
from agentloops.controller.teaching.experiments import (
    random_case,
)
from agentloops.controller.teaching.widgets.panel import (
    _STYLE,
    PREFIX,
    _chart_image,
    _classed,
    _headers,
    _Panel,
    _View,
)
from agentloops.controller.vocabulary.render import html_table
from agentloops.i18n import N_, Phrase, _
from agentloops.tables import text_table


def claim_counts(p_early_claim: float = 0.3, premature_claims: int = 1, n: int = 60, seed: int = 0, *,
                 between: Callable[[], None] | None = None) -> dict[str, Counter[str]]:
    """How ``n`` runs of a model that claims success early end, under the naive and the default policy.

    Each run compares two cities drawn from seed ``seed + i``, with a planner
    that, once it has one city, answers "all done" with probability
    ``p_early_claim`` per turn. No tool fails. A run counts as ``verified``
    when it reported success and the completion condition holds, as
    ``unverified`` when it reported success and the condition does not hold,
    and by its stop status otherwise.

    Args:
        p_early_claim: probability per turn of an early "done".
        premature_claims: how many unfounded "done" replies the default policy answers with what is missing.
        n: runs per policy.
        seed: first seed.
        between: called before each run (the explorer's worker waits there while the learner is answered).
    """
    out: dict[str, Counter[str]] = {"naive": Counter(), "default": Counter()}
    policies = {"naive": resolve_policy("naive"),
                "default": resolve_policy("default").model_copy(update={"premature_claims": premature_claims})}
    for i in range(n):
        case = random_case(seed + i)
        for name, policy in policies.items():
            if between is not None:
                between()
            task = case.task()
            model = TaskPlanner(task, p_early_claim=p_early_claim, seed=seed + i)
            run = Controller(task, model, policy=policy, trace_id=f"claim-{seed + i}", label=name).run()
            if run.status == "succeeded":
                out[name]["verified" if run.stop.verified else "unverified"] += 1
            else:
                out[name][run.status] += 1
    return out


CLAIM_HEADERS: tuple[str, ...] = (N_("policy"), N_("ended as"), N_("runs"))
"""Columns of :meth:`ClaimsState.rows`."""


@dataclass(frozen=True)
class ClaimsState:
    """Counts behind the claims explorer (see :func:`claim_counts`)."""

    p_early_claim: float
    premature_claims: int
    n: int
    counts: Mapping[str, Mapping[str, int]]

    def rows(self) -> list[list[Any]]:
        """One row per policy and outcome (a verified or unverified success as a phrase: shown translated)."""
        return [[policy, _OUTCOMES.get(kind, kind), count] for policy, by_kind in self.counts.items()
                for kind, count in sorted(by_kind.items(), key=lambda kv: -kv[1])]

    def text(self) -> str:
        """The counts as a text table."""
        head = _("Claims explorer — {n} runs per policy, early-claim probability {p}, 'not done yet' answers "
                 "allowed: {pushback}").format(n=self.n, p=f"{self.p_early_claim:g}", pushback=self.premature_claims)
        return f"{head}\n" + text_table(_headers(CLAIM_HEADERS), self.rows())


_OUTCOMES = {"verified": Phrase(N_("verified")), "unverified": Phrase(N_("unverified"))}
"""A success's outcome as the claims table names it (the text is the outcome itself)."""

class ClaimsExplorer(_Panel):
    """How often is "done" true? Set how eagerly the model claims, and how often the controller pushes back."""

    def __init__(self, p_early_claim: float = 0.3, premature_claims: int = 1, n: int = 60) -> None:
        self._state: ClaimsState | None = None
        self.n = n
        self.p = _classed(widgets.FloatSlider(value=p_early_claim, min=0.0, max=0.8, step=0.05,
                                              description=_("early 'done' chance"), style=_STYLE,
                                              continuous_update=False), f"{PREFIX}-claim-chance")
        self.pushback = _classed(widgets.IntSlider(value=premature_claims, min=0, max=3,
                                                   description=_("'not done yet' replies"), style=_STYLE,
                                                   continuous_update=False), f"{PREFIX}-pushback")
        from agentloops.controller.teaching.plots import LiveClaimsChart

        self._chart = LiveClaimsChart(("naive", "default"), n)
        self.chart = _chart_image(self._chart)
        self.table = _classed(widgets.HTML(), f"{PREFIX}-table")
        self._wire([self.p, self.pushback])
        super().__init__([self.p, self.pushback, self.chart, self.table])
        self.add_class(f"{PREFIX}-claims-explorer")
        self.refresh()

    def _view(self, key: tuple[Any, ...]) -> _View:
        """The experiment for (chance of an early claim, pushback), its chart and its table."""
        p, pushback = key
        counts = {k: dict(v) for k, v in claim_counts(round(p, 4), pushback, self.n, between=self._between).items()}
        state = ClaimsState(p, pushback, self.n, counts)
        return _View(state, self._draw(counts),
                     {"table": html_table(_("How the runs ended"), _headers(CLAIM_HEADERS), state.rows())})

    def refresh(self) -> ClaimsState:
        """Show the experiment for the current settings (run once per setting) and work ahead."""
        return super().refresh()  # type: ignore[no-any-return]


def claims_explorer(p_early_claim: float = 0.3, premature_claims: int = 1, n: int = 60) -> ClaimsExplorer:
    """Build the claims explorer (see :class:`ClaimsExplorer`)."""
    return ClaimsExplorer(p_early_claim, premature_claims, n)
