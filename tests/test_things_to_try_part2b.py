"""Play with every widget of notebooks 14–16 as each invites, then run on: nothing may fail.

The harness of ``tests/test_things_to_try.py``, for these three lessons of Part 2 and both editions: each
notebook runs cell by cell in a fresh kernel; right after a cell that shows a widget, a hidden cell plays with
it — every prediction locked in (on its last option) and revealed, every dropdown and toggle through each value,
every slider to both ends — and after each explorer, the notebook's own "Things to try", step by step, with what
the notebook says they show asserted. Then the rest runs, and every ``sanity-check`` cell runs again: a check
that read a widget instead of recomputing fails here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_notebooks import NOTEBOOKS, _read
from tests.test_things_to_try import PLAY_EVERYTHING, drive

LESSONS = [path for name in ("14-traces-and-replay", "15-parallel-calls", "16-context-compaction")
           for path in (NOTEBOOKS / f"{name}.ipynb", NOTEBOOKS / "zh" / f"{name}.ipynb")]

FIND = "_e = next(v for v in Out.values() if type(v).__name__ == {name!r})\n"

THINGS_TO_TRY = {
    "replay_explorer(": FIND.format(name="ReplayExplorer") + r"""
_e.scenario.value, _e.recorded.value, _e.replayed.value = "refund-permission-denied", "default", "naive"
_s = _e.refresh()
assert _s.replay.diff.unrecorded > 0, "the db_write call was never recorded: it runs live, and the diff says so"
_e.scenario.value, _e.replayed.value = "document-not-found", "degrade"
assert _e.refresh().replay.run.status == "waiting_for_user", "it asks which document you meant"
""",
    "parallel_explorer(": FIND.format(name="ParallelExplorer") + r"""
_e.minimum.value, _e.s3.value, _e.cancel.value = 2, 2.5, 0.0
_e.s4.value = 1.0                                                    # s4 faster than s3: now s3 is cancelled
_s3 = next(c for c in _e.refresh().run.calls if "s3" in c.args)
assert _s3.state in ("cancelled", "ignored"), _s3.state
_e.minimum.value, _e.s4.value = 3, 14.0                              # past the join's 10 s timeout
assert any("deadline" in (c.note or "") for c in _e.refresh().run.calls)
_e.cancel.value = 1.0                                                # cancel before anything lands
assert _e.refresh().run.status == "cancelled"
""",
    "context_explorer(": FIND.format(name="ContextExplorer") + r"""
_e.offload.value, _e.compact.value, _e.keep.value, _e.compactor.value = 150, 300, 1, "careless"
_e.state_block.value = False
_e.check.value = True                                                # tick "check each memory"
assert _e.refresh().run.status == "succeeded"
_e.check.value, _e.compactor.value = False, "state"                  # the compactor written from the state
assert _e.refresh().run.status == "succeeded"
_e.offload.value, _e.compact.value = None, None                      # never store, never compact
assert _e.refresh().run.code == "budget:context_tokens"
_e.offload.value, _e.compact.value = 150, 300
for _keep in (0, 3):                                                 # keep 0 and 3 recent turns
    _e.keep.value = _keep
    _e.refresh()
""",
}


def _shows_a_widget(source: str) -> bool:
    return "predict(" in source or any(marker in source for marker in THINGS_TO_TRY) or "widgets." in source


def play_and_run_on(path: Path) -> list[str]:
    """Execute ``path``: after each widget cell play with everything, then follow the Things to try it shows; then
    every sanity cell again. Returns what failed (empty: all fine)."""
    def after(cell: Any) -> list[tuple[str, str]]:
        play = [("playing with the widgets", PLAY_EVERYTHING)] if _shows_a_widget(cell.source) else []
        return play + [("the Things to try", steps) for marker, steps in THINGS_TO_TRY.items() if marker in cell.source]

    return drive(path, after, timeout=600)


def _explorers(path: Path) -> set[str]:
    return {marker for cell in _read(path).cells if cell.cell_type == "code" for marker in THINGS_TO_TRY
            if marker in cell.source}


def test_each_lesson_has_its_explorer_and_a_prediction_in_both_editions() -> None:
    assert len(LESSONS) == 6 and all(path.exists() for path in LESSONS)
    assert [sorted(_explorers(path)) for path in LESSONS] == [
        ["replay_explorer("]] * 2 + [["parallel_explorer("]] * 2 + [["context_explorer("]] * 2
    for path in LESSONS:
        assert any("predict(" in cell.source for cell in _read(path).cells if cell.cell_type == "code"), path


@pytest.mark.notebook
@pytest.mark.parametrize("path", LESSONS, ids=[str(p.relative_to(NOTEBOOKS)) for p in LESSONS])
def test_every_check_survives_play(path: Path) -> None:
    failures: Any = play_and_run_on(path)
    assert not failures, "\n\n".join(failures)
