"""Every mechanism Part 2 teaches is checked by a cell that asserts it — notebooks 10, 11, 12 and 14.

:data:`CLAIMS` lists each claim in words with its notebook and the slug of the cell that checks it:
a code cell tagged ``claim:<slug>``. This module keeps that table and the notebooks in step — each
listed cell exists once, is hidden (it is a check, not a lesson), holds a real ``assert`` and does not
read a widget's state (a learner may have played with the widget) — and no notebook carries a claim
cell the table does not list. The cells themselves run with their notebooks in tests/test_notebooks.py.
"""

from __future__ import annotations

import ast
import re
from typing import Any, NamedTuple

import pytest

from tests.test_notebooks import NOTEBOOKS, _read


class Claim(NamedTuple):
    """One claim a notebook makes, and the slug of the cell (tag ``claim:<slug>``) that asserts it."""

    notebook: str
    slug: str
    claim: str


N10, N11, N12, N14 = ("10-what-the-loop-updates.ipynb", "11-when-is-it-done.ipynb", "12-tool-errors.ipynb",
                      "14-traces-and-replay.ipynb")

CLAIMS: tuple[Claim, ...] = (
    # 10 · what the loop updates
    Claim(N10, "state-moves-each-turn", "with task state, each of the 3 turns moves the state version and settles an item"),
    Claim(N10, "task-state-contents", "the task state holds completed items with key facts and sources, open items, "
                                      "failed tools, the budgets left, and the question a paused task waits on"),
    Claim(N10, "stateless-requery", "without task state the planner re-queries city A; the repeated fingerprint is "
                                    "blocked at turn 5 as no_progress, under the step budget of 6"),
    Claim(N10, "fingerprint-progress-version", "a fingerprint uses the progress version, which a failure does not "
                                               "move; the same fingerprint after a timeout is a retry, not a repeat"),
    Claim(N10, "chart-crosses", "a cross marks exactly the trace's tool turns (run or blocked) with an unchanged "
                                "state version: turns 3, 4 and 5 without state, none with it"),
    Claim(N10, "fuse-only", "with the fingerprint and idle checks off, the step budget alone stops the run: 6 model "
                            "turns, 4 re-reads, a seventh record for the stop"),
    Claim(N10, "state-scales", "with the state block n cities take n + 1 turns; without it two or more end as "
                               "no_progress"),
    # 11 · when is it done
    Claim(N11, "completion-conditions", "each task type states its condition over state: recall accepts 'none found', "
                                        "weather does not, research needs 2 of 4 sources"),
    Claim(N11, "open-ended-goal", "an open-ended goal spins a cap-only loop to its cap of 8; the controller stops it "
                                  "as no_progress at turn 5 with every source kept; a bounded goal succeeds in 3"),
    Claim(N11, "no-tool-calls-is-a-claim", "a reply without tool calls is a claim: the naive loop reports 4 successes, "
                                           "the condition holds once; our routes for meanings 2 and 3 (hand-off, "
                                           "waiting for the user) are stated against what the runs do"),
    Claim(N11, "missing-parameter-waits", "a call without the user-only value waits for the user, saved, and "
                                          "resumes to success"),
    Claim(N11, "early-claim-rejected", "an early 'done' is answered once with what is missing, then ends partially "
                                       "completed"),
    Claim(N11, "claims-never-unverified", "over 60 runs the naive loop reports unverified successes, the controller "
                                          "none; pushing back once yields more verified successes"),
    Claim(N11, "none-found-allowed-by-task", "'none found' settles the recall item, not a weather item"),
    Claim(N11, "found-nothing-needs-the-search", "'found nothing' is accepted only after the allowed search really "
                                                 "ran, successfully, for the product asked"),
    Claim(N11, "nine-statuses", "nine stop statuses, each reached by a shipped scenario"),
    Claim(N11, "system-failure", "a provider outage ends as system_failure, keeps the verified fact, names no "
                                 "internal code to the user and says to try again later"),
    Claim(N11, "naive-trusts-claims", "the naive policy reports the early claimer's unverified 'done' as success"),
    # 12 · tool errors
    Claim(N12, "tool-result-fields", "a tool result carries status class, retryable, safe summary, source and "
                                     "next-step hint; the model gets them as a compact observation"),
    Claim(N12, "no-stack-trace", "a backend's exception reaches the model as its class only; the detail stays in "
                                 "the trace"),
    Claim(N12, "ambiguous-feedback", "'no result, please try again' feedback spins a cap-only loop to its cap on an "
                                     "empty search; sent with its status the result ends it in 2 calls, and the "
                                     "controller succeeds in 2"),
    Claim(N12, "routing-table-differences", "the naive policy's routes differ from the default's where the text says"),
    Claim(N12, "six-faults", "the article's six injected faults (format change included) and our missing parameter "
                             "take the routes retry, fallback, degrade, repair, ask and stop"),
    Claim(N12, "degrade-policy", "under the degrade policy spent retries give the item up with a partial answer"),
    Claim(N12, "side-effect-handoff", "a write that timed out goes to a person; the naive policy refunds twice"),
    Claim(N12, "no-route-around-denial", "a denial stops the run; the naive policy routes around it through db_write"),
    Claim(N12, "shared-retry-budget", "one shared retry budget caps Beijing's attempts at 4; per-tool budgets make 8 "
                                      "on a chain of 3 tools, two more per added tool"),
    Claim(N12, "same-backend-fallback", "a fallback on the same downstream service times out with it (shown by runs); "
                                        "only an independent backup helps, its data re-validated"),
    Claim(N12, "budget-keeps-results", "after the retry budget runs out the verified result and the last error are "
                                       "kept, no counter is reset, and the stop renders for the user (no codes, a next "
                                       "step) and for the system (status, code, tool, error class, budgets, state)"),
    Claim(N12, "budget-wall-time", "the wall-time budget stops a run before a call whose timeout could break it"),
    Claim(N12, "budget-model-calls", "the model-call budget stops a run before the call that would break it"),
    Claim(N12, "budget-tool-calls", "the tool-call budget blocks the call that would break it"),
    Claim(N12, "consecutive-failures", "failed turns in a row hand the run to a person at the policy's limit"),
    # 14 · traces and replay
    Claim(N14, "trace-line-kinds", "a trace is a start line, one line per turn and a stop line"),
    Claim(N14, "trace-fields", "every line carries the trace id; a turn line has every field; each turn's duration "
                               "is model call + tool attempts + back-off"),
    Claim(N14, "killed-run-keeps-trace", "a killed process leaves every finished turn readable, with no stop line"),
    Claim(N14, "replay-diff", "replay under the degrade policy serves all 5 results from the recording and changes "
                              "only the stop and turn 2's delta"),
    Claim(N14, "capped-review", "the capped run shows 6 acting turns, 4 re-reads with tools ok, then the stop; the "
                                "fix replayed on the same trace succeeds"),
    Claim(N14, "regression-set", "the regression set covers every scenario and changes almost every trajectory"),
    Claim(N14, "regression-replays-cleanly", "every recording replays to its own trajectory except the listed ones, "
                                             "and every faithful one meets its scenario file after the change"),
    # ---- 13 · 15 · 16 ---------------------------------------------------------------------------------------
    # Notebooks 13, 15 and 16 list their claims, in the same Claim shape, in tests/test_part2_claims_13_15_16.py.
)
"""Part 2's claims for notebooks 10, 11, 12 and 14, in notebook order."""

OWNED = (N10, N11, N12, N14)
"""The notebooks whose claim cells this table lists completely."""

_EXPLORER = re.compile(r"^(\w+)\s*=\s*widgets\.\w+_explorer\(", re.MULTILINE)


def claim_cells(notebook: str, slug: str) -> list[Any]:
    """The cells of ``notebook`` tagged ``claim:<slug>``."""
    return [c for c in _read(NOTEBOOKS / notebook).cells if f"claim:{slug}" in c.metadata.get("tags", [])]


def real_asserts(source: str) -> list[ast.Assert]:
    """The ``assert`` statements of a cell whose test is not a constant (``assert True`` checks nothing)."""
    return [node for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Assert) and not isinstance(node.test, ast.Constant)]


def widget_names(notebook: str) -> set[str]:
    """Names the notebook binds to a widget built by ``widgets.*_explorer(...)``."""
    return {name for c in _read(NOTEBOOKS / notebook).cells if c.cell_type == "code"
            for name in _EXPLORER.findall(c.source)}


def reads_widget_state(source: str, widgets: set[str]) -> list[str]:
    """Every attribute ``source`` reads on a widget (``explorer.state``, ``explorer.policy``…)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in widgets:
            found.append(f"{node.value.id}.{node.attr}")
    return found


@pytest.mark.parametrize("claim", CLAIMS, ids=[f"{c.notebook[:2]}-{c.slug}" for c in CLAIMS])
def test_each_claim_has_one_hidden_cell_that_asserts_it(claim: Claim) -> None:
    cells = claim_cells(claim.notebook, claim.slug)
    assert len(cells) == 1, f"{claim.notebook}: expected one cell tagged claim:{claim.slug}, found {len(cells)}"
    cell = cells[0]
    assert cell.cell_type == "code", f"{claim.notebook}: claim:{claim.slug} is on a {cell.cell_type} cell"
    assert cell.metadata.get("jupyter", {}).get("source_hidden") is True, f"claim:{claim.slug} is not hidden"
    assert real_asserts(cell.source), f"{claim.notebook}: claim:{claim.slug} has no real assert:\n{cell.source}"


@pytest.mark.parametrize("claim", CLAIMS, ids=[f"{c.notebook[:2]}-{c.slug}" for c in CLAIMS])
def test_no_claim_cell_reads_a_widget(claim: Claim) -> None:
    source = claim_cells(claim.notebook, claim.slug)[0].source
    assert not reads_widget_state(source, widget_names(claim.notebook)), \
        f"{claim.notebook}: claim:{claim.slug} reads a widget; check the claim from fresh runs instead"


@pytest.mark.parametrize("notebook", OWNED)
def test_every_claim_cell_of_a_notebook_is_in_the_table(notebook: str) -> None:
    tagged = [tag.removeprefix("claim:") for c in _read(NOTEBOOKS / notebook).cells
              for tag in c.metadata.get("tags", []) if tag.startswith("claim:")]
    listed = [c.slug for c in CLAIMS if c.notebook == notebook]
    assert sorted(tagged) == sorted(listed)


def test_the_table_has_unique_slugs_and_only_existing_notebooks() -> None:
    slugs = [(c.notebook, c.slug) for c in CLAIMS]
    assert len(slugs) == len(set(slugs))
    assert all((NOTEBOOKS / c.notebook).is_file() for c in CLAIMS)
    assert {c.notebook for c in CLAIMS} == set(OWNED)


def test_the_helpers_reject_what_they_should() -> None:
    assert not real_asserts("# assert x == 1\nx = 1")
    assert not real_asserts("assert True")
    assert real_asserts("assert run.status == 'succeeded'")
    assert reads_widget_state("assert explorer.state.run.ok", {"explorer"}) == ["explorer.state"]
    assert reads_widget_state("assert run.stop.state['x']", {"explorer"}) == []
    assert _EXPLORER.findall("explorer = widgets.state_explorer()\nx = widgets.state_run(True)") == ["explorer"]
