"""How long does a controller widget take to redraw after a control changes?

A redraw is everything one control change triggers, synchronously, in the
kernel: re-run the controller (or the experiment behind the widget), rebuild
the HTML tables and redraw the chart into a new PNG. It is timed as the
assignment ``control.value = new`` (observers run inside it), cycling through
values so that every change is a real change.

Printed next to it, measured in the same process:
  - the baseline: one bare controller run of the explorer's default scenario
    (``build_controller("weather-normal").run()``) — the least a redraw can cost;
  - for the controller explorer, the run alone and the chart alone
    (``LiveRunChart.update``), so the ratio shows where the time goes;
  - for the budget explorer, the CPU time of settings never computed, met one move after another as a learner
    meets them, with their cap's cap-only runs still to run and with them run before (thread time: what the
    kernel pays whatever else the machine runs). The before/after ratio: run this file on a checkout of the
    commit before (``PYTHONPATH`` set to it), in the same window, and divide.

Every control of every widget is driven. "new state" is the median redraw
with the widget's kept views switched off: what a state never shown before costs. A widget computes what a
control state shows (runs, chart, tables) once and keeps it, so cycling back to a state costs a look-up;
working ahead (the worker thread, off here) is measured in the page by ``bench_widgets_browser.py``.

Run:  .venv/bin/python benchmarks/bench_controller_widgets.py [--changes N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from agentloops.controller.running.scenarios import build_controller
from agentloops.controller.teaching import widgets
from agentloops.controller.teaching.plots import LiveRunChart


def percentile(values: Sequence[float], fraction: float) -> float:
    """The value below which ``fraction`` of ``values`` lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def time_ms(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return (time.perf_counter() - start) * 1000


def cycle(control: Any, values: Sequence[Any], changes: int) -> list[float]:
    """Time ``changes`` real changes of ``control`` through ``values``."""
    timings = []
    for i in range(changes):
        value = values[i % len(values)]
        if control.value == value:
            value = values[(i + 1) % len(values)]
        timings.append(time_ms(lambda value=value: setattr(control, "value", value)))
    return timings


def forget(widget: Any) -> None:
    """Switch off a widget's kept views (it keeps nothing), so every change computes its setting now (the budget
    explorer's views are its ``_settings``; it still keeps its runs, reused where they hold: see below)."""
    views = getattr(widget, "_settings", None) or widget._views
    views.size = 0
    views._values.clear()


def cpu_ms(action: Callable[[], Any]) -> float:
    """The CPU time ``action`` takes in this thread (unlike wall time, not stretched by other processes)."""
    start = time.thread_time()
    action()
    return (time.thread_time() - start) * 1000


def budget_cold_cpu(explorer: Any, moves: int = 48, seed: int = 0) -> tuple[list[float], list[float]]:
    """Budget-explorer settings never computed, as a learner meets them: a seeded walk from the opening setting,
    each move one slider (a learner changes one at a time) one step either way, every sixth to anywhere on its
    line (a drag); every setting new. The CPU time of each, split by whether its cap's cap-only runs were still to
    run (the steps slider reached a new cap) or already run. What the explorer keeps from the settings before (its
    runs, its charts) counts, as in the page."""
    import random

    rng = random.Random(seed)
    sliders = list(explorer.sliders.values())
    key, seen = tuple(s.value for s in sliders), set()
    cold, warm = [], []
    while len(cold) + len(warm) < moves:
        i = rng.randrange(len(sliders))
        s = sliders[i]
        value = rng.randrange(s.min, s.max + 1, s.step) if (len(seen) + 1) % 6 == 0 else \
            min(s.max, max(s.min, key[i] + rng.choice((-1, 1)) * s.step))
        new = (*key[:i], value, *key[i + 1:])
        if new in seen or new == key:
            continue
        seen.add(key := new)
        (warm if key[0] in explorer._cap_only else cold).append(cpu_ms(lambda key=key: explorer._compute(key)))
    return cold, warm


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--changes", type=int, default=20, help="changes per control (default 20)")
    args = parser.parse_args(argv)

    import matplotlib

    from agentloops.controller.teaching.widgets import panel

    matplotlib.use("Agg")
    panel.PREWARM = False  # the kernel's own work per change: no worker computing ahead meanwhile
    builds = {name: time_ms(builder) for name, builder in widgets.BUILDERS.items()}  # cold: imports, fonts

    ex = widgets.controller_explorer()
    state = widgets.state_explorer()
    claims = widgets.claims_explorer()
    storm = widgets.storm_explorer()
    budget = widgets.budget_explorer(prewarm=False)
    replay = widgets.replay_explorer()
    parallel = widgets.parallel_explorer()
    context = widgets.context_explorer()
    n = args.changes
    controls: dict[str, list[tuple[str, Any, list[Any]]]] = {
        "controller explorer": [
            ("scenario", ex.scenario, ["weather-normal", "weather-timeout-always", "order-missing-id",
                                       "research-parallel", "weather-no-state"]),
            ("policy", ex.policy, ["default", "naive", "degrade"]),
            ("fault", ex.fault, list(widgets.SIX_FAULTS)),
            *((f"budget {name}", slider, list(range(slider.min, slider.max + 1, slider.step))[:6])
              for name, slider in ex.budgets.items())],
        "state": [("TASK STATE", state.state_block, [True, False]), ("window", state.window, [None, 1, 2, 6]),
                  ("cities", state.cities, [1, 2, 3, 4]), ("fingerprints", state.detect_repeats, [False, True])],
        "claims": [("chance", claims.p, [0.1, 0.3, 0.6]), ("pushback", claims.pushback, [0, 1, 2])],
        "storm": [("chain", storm.tools, [1, 2, 3, 4, 5]), ("retries", storm.retries, [1, 3, 5])],
        "budget": [(f"budget {name}", slider, list(range(slider.min, slider.max + 1, slider.step))[:4])
                   for name, slider in budget.sliders.items()],
        "replay": [("replayed", replay.replayed, ["default", "naive", "degrade"]),
                   ("recorded", replay.recorded, ["default", "naive", "degrade"]),
                   ("scenario", replay.scenario, ["weather-timeout-always", "weather-normal", "order-missing-id"])],
        "parallel": [("cancel", parallel.cancel, [0.0, 2.0, 3.0, 6.0]), ("join", parallel.minimum, [1, 2, 3, 4]),
                     ("s3", parallel.s3, [1.0, 2.5, 5.0]), ("s4", parallel.s4, [3.0, 8.0, 12.0])],
        "context": [("check", context.check, [True, False]), ("compactor", context.compactor, ["state", "careless"]),
                    ("compact", context.compact, [None, 300, 600]), ("offload", context.offload, [None, 150, 400]),
                    ("keep", context.keep, [0, 1, 2]), ("TASK STATE", context.state_block, [True, False])],
    }
    results = {widget: {label: cycle(control, values, n) for label, control, values in rows}
               for widget, rows in controls.items()}
    for widget in (ex, state, claims, storm, budget, replay, parallel, context):
        forget(widget)  # now every change is a state never seen: it pays its runs as well as the redraw
    fresh = {widget: [t for _, control, values in rows for t in cycle(control, values, max(2, n // 2))]
             for widget, rows in controls.items()}

    cold, warm = budget_cold_cpu(widgets.budget_explorer(prewarm=False))  # as it opens: only its first setting

    baseline = [time_ms(lambda: build_controller("weather-normal").run()) for _ in range(200)]
    runs = [build_controller(name).run() for name in ("weather-normal", "weather-timeout-always", "research-parallel")]
    chart = LiveRunChart()
    chart.update(runs[0])
    chart_only = [time_ms(lambda run=run: chart.update(run)) for run in runs * max(1, n // 3)]
    base = statistics.median(baseline)

    print(f"controller widgets: redraw per control change ({n} changes per control, cycling its values)")
    print(f"{'widget · control':<34}{'median ms':>10}{'p95 ms':>9}{'× bare run':>12}{'new state ms':>14}")
    for widget, by_control in results.items():
        every = [t for ts in by_control.values() for t in ts]
        median = statistics.median(every)
        print(f"{widget + ' (all controls)':<34}{median:>10.1f}{percentile(every, 0.95):>9.1f}{median / base:>12.0f}"
              f"{statistics.median(fresh[widget]):>14.1f}")
        for label, timings in by_control.items():
            print(f"{'  · ' + label:<34}{statistics.median(timings):>10.1f}{percentile(timings, 0.95):>9.1f}")
    print()
    print(f"baseline: one bare controller run of weather-normal: median {base:.2f} ms")
    print(f"the controller explorer's chart alone (LiveRunChart.update, 3 runs in turn): median "
          f"{statistics.median(chart_only):.1f} ms")
    print(f"the budget explorer, a setting never computed ({len(cold) + len(warm)} in a learner's walk), CPU (thread "
          f"time; load-proof): median {statistics.median(warm):.0f} ms (p90 {percentile(warm, 0.9):.0f}, worst "
          f"{max(warm):.0f}) once its cap's cap-only runs were run; {statistics.median(cold):.0f} ms (worst "
          f"{max(cold):.0f}) when they were still to run ({len(cold)} settings)")
    print("cold builds (first build pays imports and font caches): "
          + ", ".join(f"{name} {ms:.0f} ms" for name, ms in builds.items()))


if __name__ == "__main__":
    main()
