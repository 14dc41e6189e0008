"""The criteria explorer works ahead: what a setting shows is computed once, and the likely next ones while the
page is read; a step to one of them runs no loop in the kernel's thread and shows what computing it would."""

from __future__ import annotations

import importlib
import threading
import time

from agentloops import widgets
from agentloops.criteria import CRITERION_NAMES
from agentloops.widgets import CUSTOM, RoundSpec
from agentloops.widgets.ahead import next_settings

explorer_module = importlib.import_module("agentloops.widgets.explorer")  # the package exports a function so named


def _until(condition, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the worker did not get there"
        time.sleep(0.02)


ROUNDS = [RoundSpec(content="text", tool_calls=1, finish_reason="tool_calls"), RoundSpec()]
SETTING = (CUSTOM, None, tuple(ROUNDS), "content", 8, "en")


def _changed(setting: tuple, rounds: list[RoundSpec]) -> list[str]:
    """What differs from the current rounds: ``"round 2 finish_reason=length"``, or the criterion, cap, …"""
    if setting[0] != CUSTOM:
        return [f"scenario {setting[0]}"]
    out = [f"round {i} {field}={getattr(new, field)}" for i, (old, new) in enumerate(zip(rounds, setting[2]), 1)
           for field in ("content", "tool_calls", "finish_reason") if getattr(old, field) != getattr(new, field)]
    out += [f"rounds {len(setting[2])}"] if len(setting[2]) != len(rounds) else []
    out += [f"criterion {setting[3]}"] if setting[3] != SETTING[3] else []
    out += [f"cap {setting[4]}"] if setting[4] != SETTING[4] else []
    return out


def test_the_field_just_edited_comes_first_then_every_criterion_and_the_cap_either_way():
    found = next_settings(SETTING, ROUNDS, ["normal", "truncated"], base=None, added=RoundSpec(),
                          moved=("finish_reason", 2))
    changes = [_changed(s, ROUNDS) for s in found]
    edits = [[f"round 2 finish_reason={r}"] for r in widgets.FINISH_REASONS if r != "stop"]
    assert changes[:len(edits)] == edits
    criteria = [[f"criterion {c}"] for c in CRITERION_NAMES if c != "content"]
    at = len(edits)
    assert changes[at:at + len(criteria)] == criteria
    at += len(criteria)
    assert changes[at:at + 2] == [["cap 7"], ["cap 9"]]
    rest = [c for [c] in changes[at + 2:]]
    assert rest.index("round 2 content=text") < rest.index("round 1 content=null")  # the edited round first
    caps = [c for c in rest if c.startswith("cap ")]  # at last every other cap: four nearest, the ends, the rest
    assert caps == [f"cap {c}" for c in (6, 10, 1, 12, 5, 11, 4, 3, 2)] and rest[-len(caps):] == caps
    assert rest[-len(caps) - 4:-len(caps)] == ["rounds 3", "rounds 1", "scenario normal", "scenario truncated"]
    assert all(len(c) == 1 for c in changes) and SETTING not in found and len(set(found)) == len(found)


def test_after_a_cap_move_every_cap_comes_first_nearest_first():
    found = next_settings(SETTING, ROUNDS, [], base=None, added=RoundSpec(), moved=("cap", 0))
    caps = [s[4] for s in found[:widgets.MAX_CAP - 1]]
    assert caps[:6] == [7, 9, 6, 10, 1, 12] and sorted(caps) == [c for c in range(1, widgets.MAX_CAP + 1) if c != 8]


def test_a_step_to_a_setting_worked_ahead_runs_no_loop_in_the_kernels_thread(monkeypatch):
    threads: list[str] = []
    real = explorer_module.run

    def counted(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(explorer_module, "run", counted)
    ex = widgets.explorer("truncated")
    row = ex.rounds[0]
    assert row.finish_reason.value == "length"
    nxt = (CUSTOM, ex._base.model_dump_json(), (row.spec().model_copy(update={"finish_reason": "stop"}),),
           "content", ex.cap.value, ex._key()[-1])
    _until(lambda: nxt in ex._views)
    shown = len(threads)
    row.finish_reason.value = "stop"
    assert ex.scenario.value == CUSTOM and ex._key() == nxt
    assert "MainThread" not in threads[shown:] and "agentloops-prewarm" in threads
    fresh = widgets.explorer("truncated", prewarm=False)
    fresh.rounds[0].finish_reason.value = "stop"
    assert ex.state == fresh.state
    assert (ex.header.value, ex.summary.value, ex.table.value) == (fresh.header.value, fresh.summary.value,
                                                                   fresh.table.value)
    assert bytes(ex.chart.value)[16:24] == bytes(fresh.chart.value)[16:24]  # IHDR: the same size
    ex._views.stop()


def test_without_working_ahead_a_setting_shown_before_is_kept(monkeypatch):
    threads: list[str] = []
    real = explorer_module.run
    monkeypatch.setattr(explorer_module, "run", lambda *a, **k: threads.append(threading.current_thread().name)
                        or real(*a, **k))
    ex = widgets.explorer("truncated", prewarm=False)
    ex.criterion.value = "tool_calls"
    ex.criterion.value = "content"  # shown before: nothing runs again
    assert threads.count("MainThread") == 2 * len(CRITERION_NAMES) and ex._views._thread is None
