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
    (``LiveRunChart.update``), so the ratio shows where the time goes.

There is no target in the assignment; the explorer that a browser drives
(the controller explorer) is the one to keep interactive.

Run:  .venv/bin/python benchmarks/bench_controller_widgets.py [--changes N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from agentloops.controller import widgets
from agentloops.controller.plots import LiveRunChart
from agentloops.controller.scenarios import build_controller


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


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--changes", type=int, default=20, help="changes per control (default 20)")
    args = parser.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    builds = {name: time_ms(builder) for name, builder in widgets.BUILDERS.items()}  # cold: imports, fonts

    ex = widgets.controller_explorer()
    state = widgets.state_explorer()
    claims = widgets.claims_explorer()
    storm = widgets.storm_explorer()
    budget = widgets.budget_explorer()
    replay = widgets.replay_explorer()
    parallel = widgets.parallel_explorer()
    context = widgets.context_explorer()
    practice = widgets.practice()
    answers = ["Set max_steps to 10.", "A completion condition over task state; retry budget; fingerprints; trace.",
               "最大步数只是保险丝；业务完成条件；统一重试预算；指纹；回放。"]

    cases: dict[str, tuple[Any, list[Any], int]] = {
        "controller · scenario": (ex.scenario, ["weather-normal", "weather-timeout-always", "order-missing-id",
                                                "research-parallel", "weather-no-state"], args.changes),
        "controller · policy": (ex.policy, ["default", "naive", "degrade"], args.changes),
        "controller · fault": (ex.fault, list(widgets.SIX_FAULTS), args.changes),
        "controller · budget": (ex.budgets["retries"], [0, 1, 2, 3, 5], args.changes),
        "state · TASK STATE": (state.state_block, [True, False], args.changes),
        "claims · chance": (claims.p, [0.1, 0.3, 0.6], max(3, args.changes // 4)),
        "storm · chain": (storm.tools, [1, 2, 3, 4], max(3, args.changes // 2)),
        "budget · steps": (budget.sliders["steps"], [3, 4, 6, 8], max(3, args.changes // 4)),
        "replay · policy": (replay.replayed, ["default", "naive", "degrade"], args.changes),
        "parallel · cancel": (parallel.cancel, [0.0, 2.0, 3.0, 6.0], args.changes),
        "context · check": (context.check, [True, False], args.changes),
    }
    results = {name: cycle(control, values, n) for name, (control, values, n) in cases.items()}
    clicks = []
    for i in range(args.changes):
        practice.answer.value = answers[i % len(answers)]  # typing does not grade; the button does
        clicks.append(time_ms(practice.button.click))
    results["practice · check button"] = clicks

    baseline = [time_ms(lambda: build_controller("weather-normal").run()) for _ in range(200)]
    runs = [build_controller(name).run() for name in ("weather-normal", "weather-timeout-always", "research-parallel")]
    chart = LiveRunChart()
    chart.update(runs[0])
    chart_only = []
    for i in range(args.changes):
        run = runs[i % len(runs)]
        chart_only.append(time_ms(lambda run=run: chart.update(run)))
    base = statistics.median(baseline)

    print(f"controller widgets: redraw per control change ({args.changes} changes per control unless slower)")
    print(f"{'widget · control':<28}{'median ms':>10}{'p95 ms':>9}{'× bare run':>12}")
    for name, timings in results.items():
        median = statistics.median(timings)
        print(f"{name:<28}{median:>10.1f}{percentile(timings, 0.95):>9.1f}{median / base:>12.0f}")
    explorer = [t for name, ts in results.items() if name.startswith("controller") for t in ts]
    print()
    print(f"baseline: one bare controller run of weather-normal: median {base:.2f} ms")
    print(f"the controller explorer, all its controls:            median {statistics.median(explorer):.1f} ms "
          f"(p95 {percentile(explorer, 0.95):.1f})")
    print(f"its chart alone (LiveRunChart.update, 3 runs in turn): median {statistics.median(chart_only):.1f} ms")
    print("cold builds (first build pays imports and font caches): "
          + ", ".join(f"{name} {ms:.0f} ms" for name, ms in builds.items()))


if __name__ == "__main__":
    main()
