"""What does the stop controller cost per turn? Against the plain correct loop, same script, same process.

Times, median of several batches, the three timed in alternating batches in one process:
  1. ``agentloops.run_loop(..., criterion="correct")`` on a 3-turn script (city A, city B, answer),
     with the same stub tools wrapped as text functions — the baseline;
  2. ``Controller(...).run()`` on the same script: task state, schema validation, permission gate,
     fingerprints, budgets, the completion check, stop records and an in-memory trace;
  3. the same with the trace also written to a JSON Lines file, flushed after every turn.

Run:  .venv/bin/python benchmarks/bench_controller.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agentloops import ScriptedModel, run_loop
from agentloops.controller import Controller, load_controller_scenario, make_task
from agentloops.controller.sim.executor import as_plain_tools

SCRIPT = load_controller_scenario("weather-normal")
TASK = make_task("weather_compare", cities=["Shanghai", "Beijing"])
RESPONSES = [
    {"content": None, "tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {"city": "Shanghai"}}],
     "finish_reason": "tool_calls"},
    {"content": None, "tool_calls": [{"id": "c2", "name": "get_weather", "arguments": {"city": "Beijing"}}],
     "finish_reason": "tool_calls"},
    {"content": "Shanghai 24°C sunny, Beijing 18°C cloudy.", "finish_reason": "stop"},
]
TURNS = len(RESPONSES)


def plain() -> object:
    return run_loop(ScriptedModel(RESPONSES), as_plain_tools(TASK.toolbox()), criterion="correct",
                    prompt=TASK.prompt)


def controlled() -> object:
    return Controller(TASK, ScriptedModel(RESPONSES), trace_id="bench").run()


def controlled_to_file(path: Path) -> Callable[[], object]:
    def run() -> object:
        return Controller(TASK, ScriptedModel(RESPONSES), trace=path, trace_id="bench").run()
    return run


def per_turn_us(fns: dict[str, Callable[[], object]], repeat: int = 9, number: int = 200) -> dict[str, float]:
    """Median per-turn time of each function, in microseconds, timed in *alternating* batches.

    Each round times one batch of ``number`` runs of every function in turn, so a load spike from
    another process hits all of them alike instead of skewing one.
    """
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(number):
                fn()
            samples[name].append((time.perf_counter() - start) / number / TURNS * 1e6)
    return {name: statistics.median(times) for name, times in samples.items()}


def main() -> None:
    run = controlled()
    assert run.status == "succeeded" and run.steps == TURNS  # the same work: 3 turns, 2 tools, verified answer
    assert plain().steps == TURNS  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory() as folder:
        times = per_turn_us({"plain": plain, "memory": controlled,
                             "file": controlled_to_file(Path(folder) / "bench.jsonl")})
    baseline, controller, to_file = times["plain"], times["memory"], times["file"]
    print(f"plain run_loop(criterion='correct'):       {baseline:8.1f} µs/turn")
    print(f"Controller, trace in memory:               {controller:8.1f} µs/turn   "
          f"ratio {controller / baseline:5.1f}×")
    print(f"Controller, trace flushed to a file:       {to_file:8.1f} µs/turn   "
          f"ratio {to_file / baseline:5.1f}×")
    print(f"overhead per turn (in memory):             {controller - baseline:8.1f} µs "
          f"(a real model call takes 10⁵–10⁶ µs)")


if __name__ == "__main__":
    main()
