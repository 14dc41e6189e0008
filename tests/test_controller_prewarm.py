"""Working ahead of the learner: the budget explorer's likely next settings are computed while the page is read."""

from __future__ import annotations

import threading
import time

from agentloops.controller.teaching import widgets
from agentloops.controller.teaching.prewarm import Prewarm, neighbours


def test_the_slider_just_moved_goes_on_first_then_every_neighbour():
    key, steps, lows, highs = (6, 10, 3, 60), [1, 1, 1, 5], [1, 1, 0, 5], [12, 16, 8, 120]
    order = neighbours(key, steps, lows, highs, moved=2, direction=1)
    assert order[:4] == [(6, 10, 4, 60), (6, 10, 5, 60), (6, 10, 6, 60), (6, 10, 2, 60)]
    assert order[4:] == [(7, 10, 3, 60), (5, 10, 3, 60), (6, 11, 3, 60), (6, 9, 3, 60), (6, 10, 3, 65),
                         (6, 10, 3, 55)]
    assert neighbours((1, 16, 8, 5), steps, lows, highs, moved=0, direction=-1) == [
        (2, 16, 8, 5), (1, 15, 8, 5), (1, 16, 7, 5), (1, 16, 8, 10)]  # nothing off a slider's range


def _until(condition, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the worker did not get there"
        time.sleep(0.02)


def test_the_worker_fills_the_cache_and_the_learner_reads_from_it():
    calls: list[tuple[str, int]] = []

    def compute(key):
        calls.append((threading.current_thread().name, key))
        return key * 10

    ahead = Prewarm(compute)
    assert ahead.get(1) == 10 and calls == [("MainThread", 1)]
    ahead.ahead([2, 3])
    _until(lambda: 3 in ahead)
    assert ahead.get(2) == 20 and ahead.get(3) == 30 and ahead.computed_ahead == 2
    assert [name for name, _key in calls[1:]] == ["agentloops-prewarm"] * 2


def test_a_setting_the_learner_moved_away_from_is_dropped_mid_way():
    started, release = threading.Event(), threading.Event()
    ahead: Prewarm

    def compute(key):
        if key == "slow":
            started.set()
            release.wait()
            ahead.checkpoint()  # the learner moved on in between: this raises in the worker
        return key

    ahead = Prewarm(compute)
    ahead.ahead(["slow"])
    started.wait(10)
    ahead.ahead(["next"])
    release.set()
    _until(lambda: "next" in ahead)
    assert "slow" not in ahead and ahead.computed_ahead == 1


def test_the_cache_keeps_only_its_size():
    ahead = Prewarm(lambda key: key, size=2)
    for key in (1, 2, 3):
        ahead.get(key)
    assert 1 not in ahead and 2 in ahead and 3 in ahead


def test_a_step_to_a_setting_computed_ahead_shows_what_computing_it_now_would():
    explorer = widgets.budget_explorer(n=10)
    retries = explorer.sliders["retries"]
    nxt = tuple(s.value + (s.step if s is retries else 0) for s in explorer.sliders.values())
    _until(lambda: nxt in explorer._settings)
    start = time.perf_counter()
    retries.value += retries.step
    answered_ms = (time.perf_counter() - start) * 1000
    fresh = widgets.budget_explorer(n=10, prewarm=False, **explorer.state.budget)
    assert explorer.state.comparison == fresh.state.comparison
    assert explorer.table.value == fresh.table.value
    # the same chart: a PNG of the same size (its bytes may differ by font caching, which depends on what the
    # process drew before: seen under xdist, where other tests draw first)
    assert bytes(explorer.chart.value)[:8] == bytes(fresh.chart.value)[:8] == b"\x89PNG\r\n\x1a\n"
    assert bytes(explorer.chart.value)[16:24] == bytes(fresh.chart.value)[16:24]  # IHDR width and height
    assert answered_ms < 100, answered_ms
