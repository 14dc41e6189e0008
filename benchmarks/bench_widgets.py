"""How long does the explorer take to redraw after a control changes? Target: median under 100 ms.

A redraw is everything one control change triggers, synchronously, in the
kernel: run the script under all four criteria, rebuild the side-by-side and
step-by-step tables, and redraw the chart into a new PNG. It is timed as the
assignment ``control.value = new`` (observers run inside it), for each kind of
control, cycling through values so that every change is a real change and
nothing is served from a cache (there is none).

Printed next to it, measured in the same process:
  - the baseline: one bare ``agentloops.run`` of the same scenario (the loop itself);
  - the four runs a redraw needs, and the chart alone (``LiveChart.update``),
    so the ratio shows where the time goes.

Run:  .venv/bin/python benchmarks/bench_widgets.py [--changes N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from agentloops import CRITERION_NAMES, run
from agentloops.widgets import CUSTOM, RoundSpec, explorer

TARGET_MS = 100.0


def percentile(values: Sequence[float], fraction: float) -> float:
    """The value below which ``fraction`` of ``values`` lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def time_ms(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return (time.perf_counter() - start) * 1000


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=30, help="changes per kind of control (default 30)")
    args = parser.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    build_ms = time_ms(lambda: explorer())
    ex = explorer()  # a second build: imports and font caches are warm, as in a notebook
    ex.scenario.value = "normal"

    row = ex.rounds[0]
    kinds: dict[str, tuple[Any, list[Any], Callable[[], None]]] = {
        "scenario": (ex.scenario, ["normal", "talk-and-call", "truncated", "talk-only", "content-filter",
                                   "tool-call-with-stop", "cut-off-arguments", "long-chain"], lambda: None),
        "criterion": (ex.criterion, list(CRITERION_NAMES), lambda: setattr(ex.scenario, "value", "truncated")),
        "max_steps": (ex.cap, [3, 8, 12, 5, 1, 10], lambda: setattr(ex.scenario, "value", "truncated")),
        "round finish_reason": (row.finish_reason, ["length", "stop", "content_filter", "tool_calls"],
                                lambda: ex.set_rounds([RoundSpec(tool_calls=1, finish_reason="tool_calls"),
                                                       RoundSpec(content="text")])),
        "round content": (row.content, ["text", "empty", "null"], lambda: None),
        "round tool calls": (row.tool_calls, [0, 2, 3, 1], lambda: None),
        "rounds": (ex.round_count, [3, 1, 5, 2], lambda: None),
    }

    results: dict[str, list[float]] = {}
    for name, (control, values, prepare) in kinds.items():
        prepare()
        timings = []
        for i in range(args.changes):
            value = values[i % len(values)]
            if control.value == value:  # make every assignment a real change
                value = values[(i + 1) % len(values)]
            timings.append(time_ms(lambda control=control, value=value: setattr(control, "value", value)))
        results[name] = timings
    assert ex.scenario.value in (CUSTOM, *kinds["scenario"][1])

    scenario = "truncated"
    state = ex.state
    baseline = [time_ms(lambda: run(scenario, "content", 8)) for _ in range(200)]
    four = [time_ms(lambda: [run(scenario, c, 8) for c in CRITERION_NAMES]) for _ in range(100)]
    chart = ex._chart
    assert chart is not None
    records = {c: run(scenario, c, 8) for c in CRITERION_NAMES}
    chart_only = []
    for i in range(args.changes):
        highlight = CRITERION_NAMES[i % len(CRITERION_NAMES)]
        chart_only.append(time_ms(lambda h=highlight: chart.update(records, 8, h)))

    every = [t for timings in results.values() for t in timings]
    base = statistics.median(baseline)
    print(f"explorer redraw per control change ({args.changes} changes per control; build: {build_ms:.0f} ms cold)")
    print(f"{'control':<22}{'median ms':>10}{'p95 ms':>9}{'× bare run':>12}")
    for name, timings in results.items():
        median = statistics.median(timings)
        print(f"{name:<22}{median:>10.1f}{percentile(timings, 0.95):>9.1f}{median / base:>12.0f}")
    median_all = statistics.median(every)
    print(f"{'all changes':<22}{median_all:>10.1f}{percentile(every, 0.95):>9.1f}{median_all / base:>12.0f}")
    print()
    print(f"baseline: one bare agentloops.run('{scenario}', 'content', 8): median {base * 1000:.0f} µs")
    print(f"the four runs a redraw makes:                         median {statistics.median(four):.2f} ms")
    print(f"the chart alone (LiveChart.update):                   median {statistics.median(chart_only):.1f} ms")
    print(f"share of a redraw spent in the chart: {statistics.median(chart_only) / median_all:.0%}")
    verdict = "meets" if median_all < TARGET_MS else "MISSES"
    print(f"target: median < {TARGET_MS:.0f} ms — {verdict} ({median_all:.1f} ms); state shown: {state.source}")


if __name__ == "__main__":
    main()
