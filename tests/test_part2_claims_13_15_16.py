"""Notebooks 13, 15 and 16: every claim they make has a check cell that asserts it from fresh runs.

A check cell is a code cell tagged ``claim:<slug>`` in its metadata (it may be hidden). The table
below is the list of claims in words; the test keeps the table and the notebooks in step: each
claim has exactly one cell, that cell asserts something, and no tagged cell is missing here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

CLAIMS: tuple[tuple[str, str, str], ...] = (
    ("13-budgets-and-no-progress", "each-budget-stops-a-run",
     "each of the seven budgets stops a run, names itself, is never exceeded, and the verified facts are kept"),
    ("13-budgets-and-no-progress", "budgets-bound-each-spend",
     "a budget holds because each spend is bounded before it is paid: a reply is cut at the output reserve, a tool "
     "call given up at its timeout; the actual cost is metered after"),
    ("13-budgets-and-no-progress", "limits-from-uncapped-distribution",
     "limits come from the uncapped distribution: shortest, typical, p95 of successful runs plus one "
     "recoverable failure; the long tail is explained by its stop codes"),
    ("13-budgets-and-no-progress", "derived-limits-hold-on-fresh-seeds",
     "on fresh seeds no derived limit cuts more than 3% of the normal runs of its task type"),
    ("13-budgets-and-no-progress", "fingerprint-normalisation",
     "normalisation ignores key order, surrounding spaces and None, and case only where the tool declares it"),
    ("13-budgets-and-no-progress", "fingerprint-catches-repeat",
     "a repeated fingerprint with nothing new is blocked before it runs, inside the step budget"),
    ("13-budgets-and-no-progress", "retry-after-timeout-passes",
     "a retry after a timeout has the same fingerprint (progress version unchanged), passes, and costs a retry"),
    ("13-budgets-and-no-progress", "controller-never-false-success",
     "over 200 randomized runs the cap-only loop hits its cap or fakes success; the controller never does"),
    ("13-budgets-and-no-progress", "cap-hits-have-different-causes",
     "the runs that hit the cap end in different ways under the controller"),
    ("13-budgets-and-no-progress", "shortest-path-limit-kills-normal-runs",
     "a step limit at the shortest path kills normal runs"),
    ("13-budgets-and-no-progress", "self-check-traces",
     "the self-check's trace and runs are the package's: a repeat's fingerprints at progress versions 0 and 1, a "
     "first transient failure is retried, one timeout fits a step budget at the shortest path, a slip does not"),
    ("15-parallel-calls", "four-fetches-timeline",
     "four parallel fetches: start, end and arrival times, states, and the run's end, as the text says"),
    ("15-parallel-calls", "duplicate-applied-once-late-ignored",
     "a duplicate delivery is applied once; a finished task refuses a late fact"),
    ("15-parallel-calls", "join-cancel-reasons-are-real",
     "every call cancelled because the join was satisfied was cancelled when it really was satisfied"),
    ("15-parallel-calls", "join-keeps-needed-calls",
     "a minimum join keeps a call it still needs; only its deadline cancels it; in time, nothing is re-issued"),
    ("15-parallel-calls", "cancel-on-user",
     "a user's cancel stops running calls, keeps what was done, and ignores later results"),
    ("15-parallel-calls", "budget-refuses-batch-before-it-starts",
     "a wall-time budget that cannot cover a batch refuses it before any call starts"),
    ("15-parallel-calls", "budget-runs-out-in-flight",
     "a budget that runs out while calls are in flight cancels them with the stop's reason in the trace; their "
     "late results are recorded and ignored"),
    ("16-context-compaction", "request-size-storage-and-compaction",
     "request size and growth per turn with no storage, storage outside the context, and compaction"),
    ("16-context-compaction", "compaction-must-keep",
     "a memory must keep goal, hard constraints, confirmed facts, source pointers, open items and attempts; "
     "dropping any one is caught by name"),
    ("16-context-compaction", "careless-compaction-sends-loop-back",
     "a careless compaction sends the loop back over finished work; checked, it is refused"),
    ("16-context-compaction", "task-state-survives-compaction",
     "a task state sent every turn survives a careless compaction"),
    ("16-context-compaction", "self-check-compaction-record",
     "the careless scenario keeps one recent turn, and the checked run's first compaction is refused for a "
     "dropped constraint and replaced by the safe memory (what the self-check questions describe)"),
)
"""(notebook, slug, the claim in words)."""


def _claim_cells(stem: str) -> dict[str, list[str]]:
    path = next(NOTEBOOKS.glob(f"{stem}.ipynb"))
    cells: dict[str, list[str]] = {}
    for cell in nbformat.read(path, as_version=4).cells:
        for tag in cell.get("metadata", {}).get("tags", []):
            if tag.startswith("claim:"):
                assert cell.cell_type == "code", f"{stem}: {tag} tags a {cell.cell_type} cell"
                cells.setdefault(tag.removeprefix("claim:"), []).append(cell.source)
    return cells


@pytest.mark.parametrize(("stem", "slug", "claim"), CLAIMS, ids=[f"{n[:2]}-{s}" for n, s, _ in CLAIMS])
def test_each_claim_has_one_cell_that_asserts_it(stem: str, slug: str, claim: str) -> None:
    sources = _claim_cells(stem).get(slug, [])
    assert len(sources) == 1, f"{stem}: expected one cell tagged claim:{slug} ({claim}), found {len(sources)}"
    asserts = [n for n in ast.walk(ast.parse(sources[0])) if isinstance(n, ast.Assert)]
    assert asserts, f"{stem}: the cell for claim:{slug} asserts nothing"


@pytest.mark.parametrize("stem", sorted({n for n, _, _ in CLAIMS}))
def test_every_tagged_cell_and_every_sanity_check_is_listed(stem: str) -> None:
    listed = {slug for n, slug, _ in CLAIMS if n == stem}
    assert set(_claim_cells(stem)) == listed
    path = next(NOTEBOOKS.glob(f"{stem}.ipynb"))
    for cell in nbformat.read(path, as_version=4).cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if "sanity-check" in tags:
            assert any(t.startswith("claim:") for t in tags), f"{stem}: a sanity check without a claim tag"
