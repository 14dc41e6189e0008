"""Working ahead of the learner: the budget explorer's likely next settings are computed while the page is read."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
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


def test_the_moved_slider_can_go_on_to_its_ends_and_back_after_the_other_neighbours():
    key, steps, lows, highs = (5, 2), [1, 1], [0, 0], [9, 4]
    order = neighbours(key, steps, lows, highs, moved=0, direction=1, reach=9, back=9)
    assert order == [(6, 2), (7, 2), (8, 2), (4, 2), (5, 3), (5, 1), (9, 2), (3, 2), (2, 2), (1, 2), (0, 2)]
    assert neighbours(key, steps, lows, highs, moved=0, direction=1)[-1] == (5, 1)  # by default: no further


def test_a_setting_that_fails_in_the_worker_is_not_kept_and_the_worker_goes_on():
    def compute(key):
        if key == "bad":
            raise ValueError(key)
        return key

    ahead = Prewarm(compute)
    ahead.ahead(["bad", "good"])
    _until(lambda: "good" in ahead)
    assert "bad" not in ahead and ahead.computed_ahead == 1
    ahead.stop()
    assert ahead._thread is not None and not ahead._thread.is_alive()


def test_the_worker_works_at_most_half_its_cache_ahead():
    release = threading.Event()
    ahead = Prewarm(lambda key: release.wait(10) and key, size=4)
    ahead.ahead(list(range(10)))
    assert len(ahead._queue) <= 2  # what it computes never pushes out what it has just computed
    release.set()
    ahead.stop()


# ---- every controller widget: what a setting shows is computed once, and ahead


def _panel_controls():
    from agentloops.controller.teaching.widgets.panel import positions

    return positions


def test_positions_are_every_value_a_control_can_take():
    import ipywidgets

    positions = _panel_controls()
    assert positions(ipywidgets.Checkbox(value=True)) == [False, True]
    assert positions(ipywidgets.IntSlider(value=2, min=1, max=4)) == [1, 2, 3, 4]
    assert positions(ipywidgets.FloatSlider(value=0.3, min=0.0, max=0.2, step=0.05)) == [0.0, 0.05, 0.1, 0.15, 0.2]
    assert positions(ipywidgets.Dropdown(options=[("all", None), ("last 1", 1)], value=1)) == [None, 1]


def test_a_panel_works_ahead_on_the_control_just_moved_then_its_neighbours_then_every_menu_option():
    explorer = widgets.state_explorer()
    key = explorer._key()
    assert key[:-1] == (False, 2, 2, True)
    first = explorer._next_keys(key)
    # at first nothing moved: every control one position either way, then every option of the window menu
    assert [k[:-1] for k in first[:7]] == [(True, 2, 2, True), (False, 3, 2, True), (False, 1, 2, True),
                                         (False, 2, 3, True), (False, 2, 1, True), (False, 2, 2, False),
                                         (False, None, 2, True)]
    assert {k[1] for k in first} == {None, 1, 2, 3, 4, 6} and all(k[-1] == key[-1] for k in first)
    explorer.cities.value = 3  # moved up: on to the end of the slider first, then back
    after = [k[:-1] for k in explorer._next_keys(explorer._key())]
    assert after[:2] == [(False, 2, 4, True), (False, 2, 2, True)]
    assert after.index((False, 2, 1, True)) > after.index((True, 2, 3, True))  # further back comes after the rest


def test_another_scenario_is_worked_ahead_with_its_own_budgets():
    explorer = widgets.controller_explorer()
    others = [key for key in explorer._next_keys(explorer._key()) if key[0] != "weather-normal"]
    assert len(others) == len(explorer.scenario.options) - 1  # every other scenario of the menu
    for key in others:
        assert key[1:3] == explorer._key()[1:3] and tuple(key[3:-1]) == tuple(explorer._budgets_of(key[0]).values())
    assert {tuple(key[3:-1]) for key in others} != {tuple(explorer._key()[3:-1])}  # not the budgets shown now


def test_a_step_to_a_setting_worked_ahead_runs_nothing_in_the_kernels_thread(monkeypatch):
    from agentloops.controller.teaching.widgets import storm

    threads: list[str] = []
    real = storm.storm_runs

    def counted(*args):
        threads.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(storm, "storm_runs", counted)
    explorer = widgets.storm_explorer(tools=2, retries=3)
    assert threads[0] == "MainThread"  # the first setting is drawn before the widget is returned
    nxt = (3, 3, explorer._key()[-1])
    _until(lambda: nxt in explorer._views)
    shown = len(threads)
    explorer.tools.value = 3
    assert threads[shown:].count("MainThread") == 0 and "agentloops-prewarm" in threads
    fresh = widgets.storm_explorer(tools=3, retries=3)
    assert explorer.state == fresh.state and explorer.table.value == fresh.table.value
    assert bytes(explorer.chart.value)[16:24] == bytes(fresh.chart.value)[16:24]  # IHDR: the same size
    explorer._views.stop()
    fresh._views.stop()


def test_without_working_ahead_every_new_setting_is_computed_in_the_kernels_thread(monkeypatch):
    from agentloops.controller.teaching.widgets import panel, storm

    threads: list[str] = []
    real = storm.storm_runs
    monkeypatch.setattr(storm, "storm_runs", lambda *args: threads.append(threading.current_thread().name)
                        or real(*args))
    monkeypatch.setattr(panel, "PREWARM", False)
    explorer = widgets.storm_explorer(tools=2, retries=3)
    explorer.tools.value = 3
    explorer.tools.value = 2  # shown before: kept, not computed again
    time.sleep(0.2)
    assert threads.count("MainThread") == 2 and explorer._views._thread is None


def test_an_empty_gantt_chart_draws_without_a_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        explorer = widgets.parallel_explorer(cancel_at_s=0.5)
    assert not explorer.state.run.calls and explorer.state.run.status == "cancelled"  # cancelled before any call


def test_a_setting_the_worker_is_computing_is_waited_for_not_computed_twice():
    started, release = threading.Event(), threading.Event()
    calls: list[str] = []

    def compute(key):
        calls.append(threading.current_thread().name)
        if key == "slow":
            started.set()
            release.wait(10)
        return key

    ahead = Prewarm(compute)
    ahead.ahead(["slow"])
    assert started.wait(10)
    threading.Timer(0.2, release.set).start()
    assert ahead.get("slow") == "slow" and calls == ["agentloops-prewarm"]  # the learner's pick: the worker's
    assert ahead.get("other") == "other" and calls[-1] == "MainThread"  # not in hand: computed now
    ahead.stop()


# ---- every setting a single move reaches, and every setting of a small grid


def test_one_move_reaches_every_position_of_every_control_ends_first_then_nearest():
    from agentloops.controller.teaching.prewarm import one_move

    order = one_move((2, 1), [6, 3])
    assert order[:3] == [(0, 1), (5, 1), (2, 0)]  # each control's ends (the second control's other end: (2, 2))
    assert order[3:] == [(2, 2), (1, 1), (3, 1), (4, 1)]  # then the rest, nearest first
    assert one_move((0,), [3]) == [(2,), (1,)]  # at an end: the other end, then the middle


def test_whole_grid_is_every_other_setting_nearest_first():
    from agentloops.controller.teaching.prewarm import whole_grid

    order = whole_grid((1, 1), [3, 2])
    assert sorted(order) == [(0, 0), (0, 1), (1, 0), (2, 0), (2, 1)]
    assert [sum(abs(k - a) for k, a in zip(key, (1, 1), strict=True)) for key in order] == [1, 1, 1, 2, 2]


def test_a_small_grid_is_worked_ahead_whole_and_kept_whole():
    from agentloops.controller.teaching.prewarm import WHOLE_GRID

    explorer = widgets.storm_explorer(tools=2, retries=3)
    explorer._views.stop()
    grid = [len(panel_positions(c)) for c in explorer._keyed]
    assert grid[0] * grid[1] <= WHOLE_GRID
    ahead = explorer._next_keys(explorer._key())
    assert len(ahead) == len(set(ahead)) == grid[0] * grid[1] - 1 and explorer._key() not in ahead
    assert explorer._views.size >= 2 * len(ahead)  # nothing worked ahead is dropped before it can be picked


def test_a_large_grid_is_worked_ahead_one_move_away_every_control_to_its_ends():
    explorer = widgets.controller_explorer()
    explorer._views.stop()
    key = explorer._key()
    ahead = explorer._next_keys(key)
    lines = [panel_positions(c) for c in explorer._keyed]
    budgets = slice(3, len(key) - 1)
    for index in range(budgets.start, budgets.stop):  # every slider: every position, the others unchanged
        moved = {k[index] for k in ahead if k[:index] == key[:index] and k[index + 1:] == key[index + 1:]}
        assert moved == set(lines[index]) - {key[index]}
    assert explorer._views.size >= 2 * (sum(map(len, lines)) - len(lines))


def panel_positions(control):
    from agentloops.controller.teaching.widgets.panel import positions

    return positions(control)


def test_a_far_jump_of_two_controls_at_once_runs_nothing_in_the_kernels_thread_once_worked_ahead(monkeypatch):
    from agentloops.controller.teaching.widgets import storm

    threads: list[str] = []
    real = storm.storm_runs
    monkeypatch.setattr(storm, "storm_runs", lambda *args: threads.append(threading.current_thread().name)
                        or real(*args))
    explorer = widgets.storm_explorer(tools=2, retries=3)
    far = (explorer.tools.max, explorer.retries.min)  # two controls, each to an end: not one move away
    _until(lambda: (*far, explorer._key()[-1]) in explorer._views, 120)
    shown = len(threads)
    with explorer._sync():  # both sliders at once, then one redraw
        explorer.tools.value, explorer.retries.value = far
    explorer.refresh()
    assert threads.count("MainThread") == 1 and "MainThread" not in threads[shown:]
    assert (explorer.state.tools, explorer.state.retries) == far
    explorer._views.stop()


def test_the_budget_explorer_runs_the_cap_only_arm_once_per_cap(monkeypatch):
    from agentloops.controller.teaching.widgets import budgets

    caps: list[int] = []
    real = budgets.cap_only_runs
    def counted(n, seed, cap, between=None, kept=None):  # this explorer computes in the main thread (no prewarm);
        if threading.current_thread() is threading.main_thread():  # another test's worker may still be running
            caps.append(cap)
        return real(n, seed, cap, between, kept)

    monkeypatch.setattr(budgets, "cap_only_runs", counted)
    explorer = widgets.budget_explorer(n=6, prewarm=False)
    steps = explorer.sliders["steps"].value
    explorer.sliders["retries"].value += 1
    explorer.sliders["steps"].value = steps - 1
    explorer.sliders["retries"].value -= 1
    assert caps == [steps, steps - 1]
    shared = widgets.budget_comparison(6, steps=steps - 1, retries=explorer.sliders["retries"].value,
                                       tool_calls=explorer.sliders["tool_calls"].value,
                                       wall_time_s=explorer.sliders["wall_time_s"].value)
    assert explorer.state.comparison == shared  # the kept cap-only runs: what running them again gives


def test_the_interpreter_hands_its_lock_over_sooner_only_while_a_worker_computes():
    import sys

    from agentloops.controller.teaching.prewarm import SWITCH_S, _stop_workers

    _stop_workers()  # the widgets of earlier tests: no worker computes now
    default = sys.getswitchinterval()
    started, release = threading.Event(), threading.Event()
    seen: list[float] = []

    def compute(key):
        seen.append(sys.getswitchinterval())
        started.set()
        release.wait(10)
        return key

    ahead = Prewarm(compute)
    ahead.ahead(["slow"])
    assert started.wait(10)
    release.set()
    _until(lambda: "slow" in ahead)
    ahead.stop()
    assert seen == [SWITCH_S] and default > SWITCH_S and sys.getswitchinterval() == default


def test_the_workers_wait_a_moment_after_each_answer_while_it_is_sent(monkeypatch):
    from agentloops.controller.teaching import prewarm

    monkeypatch.setattr(prewarm, "GRACE_S", 2.0)  # long beside the sleeps: a loaded machine oversleeps
    ahead = Prewarm(lambda key: key)
    with ahead.answering():
        pass
    assert not prewarm._FREE.is_set()
    time.sleep(0.8)
    with ahead.answering():  # another answer within the first one's grace: the grace runs from its end
        pass
    time.sleep(1.5)  # 2.3 s after the first answer (its grace is over), 1.5 s after the second
    assert not prewarm._FREE.is_set()
    _until(prewarm._FREE.is_set, 5)


def test_a_setting_likely_next_and_computed_before_is_not_pushed_out_by_what_is_computed_after_it():
    ahead = Prewarm(lambda key: key, size=4)
    for key in (1, 2, 3, 4):
        ahead.get(key)
    ahead.ahead([1, 5])  # 1 is likely next again: kept; 5 is computed, and pushes out 2, the oldest
    _until(lambda: 5 in ahead)
    assert 1 in ahead and 2 not in ahead and 3 in ahead and 4 in ahead
    ahead.stop()


def test_a_fork_waits_until_no_worker_is_computing():
    """The exercise checker forks the kernel for each check: a copy taken while a worker is inside a library's lock
    would hang on that lock, and a right answer would read as "an infinite loop?"."""
    started, finished = threading.Event(), []

    def compute(key):
        started.set()
        time.sleep(0.3)
        finished.append(time.monotonic())
        return key

    ahead = Prewarm(compute)
    ahead.ahead(["slow"])
    assert started.wait(10)
    pid = os.fork()
    if pid == 0:  # the copy: nothing to do
        os._exit(0)
    forked_at = time.monotonic()
    os.waitpid(pid, 0)
    assert finished and finished[0] <= forked_at
    ahead.stop()


def test_a_fork_waits_for_the_run_in_hand_not_the_whole_setting():
    """A setting of many runs (the budget explorer's) takes seconds: the check's fork is taken at the worker's next
    checkpoint, between two runs, and the worker goes on with the setting after it."""
    runs, inside = [0], [False]
    ahead: Prewarm

    def compute(key):
        for _ in range(10):
            inside[0] = True
            time.sleep(0.2)  # one run: inside it, a library's lock may be held
            inside[0] = False
            runs[0] += 1
            ahead.checkpoint()
        return key

    ahead = Prewarm(compute)
    ahead.ahead(["many runs"])
    _until(lambda: runs[0] >= 2)
    asked = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the copy sees the worker as it was at the fork
        os._exit(1 if inside[0] else 0)
    waited = time.monotonic() - asked
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0  # never taken inside a run
    assert waited < 1.0  # one run at most, not the 1.6 s left of the setting
    _until(lambda: "many runs" in ahead)  # the worker finishes the setting after the fork
    assert runs[0] == 10


def test_a_copy_forked_while_a_worker_waits_never_hangs_on_the_parents_locks():
    """A worker holds the inner lock of the event it waits on for a moment at each wait. A copy forked in that
    moment, touching the parent's event, would hang before the check's first case ("an infinite loop?" for a
    right answer): in a thousand forks beside threads that wait and release all the time, every copy starts."""
    script = textwrap.dedent("""
        import os, sys, threading, time
        from agentloops.controller.teaching import prewarm
        sys.setswitchinterval(prewarm.SWITCH_S)

        def wait_and_release():
            while True:
                prewarm._FREE.set()
                prewarm._FREE.wait()

        for _ in range(3):
            threading.Thread(target=wait_and_release, daemon=True).start()
        hung = 0
        for _ in range(1000):
            if hung:
                break
            pid = os.fork()
            if pid == 0:
                prewarm._FREE.wait()  # what a copy's code may do: the copy's own event, set
                os._exit(0)
            began = time.monotonic()
            while not os.waitpid(pid, os.WNOHANG)[0]:
                if time.monotonic() - began > 5:  # a hung copy never ends; a slow one ends well within this
                    hung += 1
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                    break
                time.sleep(0.001)
        print(hung)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0"]


# ---- pause points inside one setting: the learner's pick never waits for the worker's runs


def test_a_learners_pick_is_computed_at_once_while_the_worker_is_mid_way_through_another_setting(monkeypatch):
    """The worker holds the chart lock only while it draws, and pauses before drawing: a new pick is computed
    at once (not after the worker's setting), and the setting the worker held, left behind, is never drawn."""
    from agentloops.controller.teaching.widgets import storm

    started, release = threading.Event(), threading.Event()
    held: list[tuple[int, int]] = []
    real = storm.storm_runs

    def runs(tools, retries, between=None):
        found = real(tools, retries, between)
        if threading.current_thread().name == "agentloops-prewarm" and not started.is_set():
            held.append((tools, retries))  # its runs done, the worker is held before it draws
            started.set()
            release.wait(20)
        return found

    monkeypatch.setattr(storm, "storm_runs", runs)
    explorer = widgets.storm_explorer(tools=2, retries=3)
    drawn: list[tuple[str, int]] = []
    chart_update = explorer._chart.update
    monkeypatch.setattr(explorer._chart, "update", lambda runs, retries: drawn.append(
        (threading.current_thread().name, len(next(iter(runs.values())).turns))) or chart_update(runs, retries))
    assert started.wait(30)
    pick = 4 if held[0][1] != 4 else 2
    learner = threading.Thread(target=setattr, args=(explorer.retries, "value", pick), name="learner", daemon=True)
    learner.start()  # a setting nobody computed yet: the learner's thread computes it now, not after the worker's
    learner.join(10)
    assert not learner.is_alive() and not release.is_set() and explorer.state.retries == pick
    assert drawn == [("learner", drawn[0][1])]
    key = (*held[0], explorer._key()[-1])
    explorer._views.ahead([])  # the setting it holds is no longer likely
    release.set()
    _until(lambda: explorer._views._in_hand != key)  # the worker is past the setting it held
    assert key not in explorer._views  # dropped at the pause point before drawing
    explorer._views.stop()


def test_storm_and_claim_runs_call_between_before_each_run():
    from agentloops.controller.teaching.widgets import claim_counts, storm_runs

    calls: list[int] = []
    assert storm_runs(2, 3, lambda: calls.append(1)) == storm_runs(2, 3)
    assert len(calls) == 2  # one run per retry scope
    calls.clear()
    assert claim_counts(0.3, 1, 3, between=lambda: calls.append(1)) == claim_counts(0.3, 1, 3)
    assert len(calls) == 6  # 3 cases, each under 2 policies


def test_a_widget_with_two_runs_per_setting_pauses_between_them_and_before_drawing(monkeypatch):
    from agentloops.controller.teaching.widgets import panel

    monkeypatch.setattr(panel, "PREWARM", False)
    for build in (widgets.state_explorer, widgets.context_explorer, widgets.replay_explorer):
        explorer = build()
        order: list[str] = []
        monkeypatch.setattr(explorer, "_between", lambda order=order: order.append("pause"))
        chart_update = explorer._chart.update
        monkeypatch.setattr(explorer._chart, "update", lambda *data, order=order, chart_update=chart_update:
                            order.append("draw") or chart_update(*data))
        explorer._view(explorer._key()[:-1])
        assert order == ["pause", "pause", "draw"], build.__name__


def test_the_budget_explorer_works_every_caps_cap_only_runs_ahead_after_every_setting_one_move_away():
    from agentloops.controller.teaching.prewarm import neighbours
    from agentloops.controller.teaching.widgets.budgets import CAP_ONLY

    explorer = widgets.budget_explorer(n=4, prewarm=False, steps=5)
    key = tuple(s.value for s in explorer.sliders.values())
    sliders = list(explorer.sliders.values())
    explorer._moved = (0, 1)  # the steps slider just moved up
    grid = [s.step for s in sliders], [s.min for s in sliders], [s.max for s in sliders]
    near = neighbours(key, *grid, 0, 1, reach=23, back=23)
    order = explorer._ahead_of(key)
    caps = [k[1] for k in order if k[0] == CAP_ONLY]
    assert order[:len(near)] == near  # the likeliest settings first
    settings = [k for k in order if k[0] != CAP_ONLY]
    assert order[:len(settings)] == settings and (*key[:3], 5) in settings  # every setting one move away first
    assert caps == [4, 6, 3, 7, 2, 8, 1, 9, 10, 11, 12]  # then every cap not run yet (5 was, for the one shown)


def test_once_every_cap_is_worked_ahead_a_setting_never_computed_runs_no_cap_only_run_in_the_kernels_thread(
        monkeypatch):
    from agentloops.controller.teaching.widgets import budgets

    caps: list[tuple[str, int, object]] = []
    real = budgets.cap_only_runs

    def counted(n, seed, cap, between=None, kept=None):  # who ran it, for which explorer (another test's may run)
        caps.append((threading.current_thread().name, cap, getattr(between, "__self__", None)))
        return real(n, seed, cap, between, kept)

    monkeypatch.setattr(budgets, "cap_only_runs", counted)
    explorer = widgets.budget_explorer(n=4, steps=5)
    steps = explorer.sliders["steps"]
    _until(lambda: set(explorer._cap_only) == set(range(steps.min, steps.max + 1)))
    explorer._settings.stop()
    ran = len(caps)
    explorer.sliders["retries"].value = explorer.sliders["retries"].min  # with the cap far away: never computed
    steps.value = steps.max
    assert explorer.state.budget["steps"] == steps.max
    mine = [(name, cap) for name, cap, owner in caps if owner is explorer._settings]
    assert mine[0] == ("MainThread", 5) and {name for name, _cap in mine[1:]} == {"agentloops-prewarm"}
    assert not [cap for _name, cap, owner in caps[ran:] if owner is explorer._settings]


def test_a_budget_explorer_built_not_to_work_ahead_starts_no_worker():
    explorer = widgets.budget_explorer(n=4, prewarm=False)
    explorer.sliders["retries"].value += 1
    assert not explorer.prewarm and explorer._settings._thread is None


def test_a_setting_in_hand_that_is_still_likely_after_the_learner_moves_is_finished_not_dropped():
    started, release = threading.Event(), threading.Event()
    calls: list[str] = []
    ahead: Prewarm

    def compute(key):
        calls.append(key)
        if key == "slow" and not started.is_set():
            started.set()
            release.wait(10)
        ahead.checkpoint()  # the learner moved on meanwhile: go on only if this key is still wanted
        return key

    ahead = Prewarm(compute)
    ahead.ahead(["slow"])
    assert started.wait(10)
    ahead.ahead(["slow", "next"])  # moved on, but "slow" is still likely: finished, not dropped and begun again
    ahead.ahead(["other", "slow"])
    release.set()
    _until(lambda: "other" in ahead)
    assert "slow" in ahead and calls.count("slow") == 1
    ahead.ahead(["gone"])  # the same with a key no longer wanted: dropped (see the test of moving away above)
    ahead.stop()
