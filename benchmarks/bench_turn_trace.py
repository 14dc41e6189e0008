"""How much of the package does one controller turn pass through? Count it, don't guess it.

One *turn* here is one full cycle of the pipeline, as the engine runs it for the
``weather-timeout-once`` scenario: from the moment the model's reply that asks for
``get_weather(city=Beijing)`` comes back, through classifying it, admitting the call,
running it (it times out once, then the retry succeeds), settling it, applying it to
state and keeping the turn's trace record (turned into a JSON line when the trace is read,
or at once when a file is open), up to the moment the next reply comes back. Code run
*inside* the stub model is not counted (it stands in for a real model), so the figure is
implementation-agnostic: it only looks at model calls as the turn's boundaries.

``sys.setprofile`` records every Python function whose code lives under ``agentloops/``;
comprehensions and generator expressions are not counted as functions of their own.

What counts: the targets (≤ 30 engine functions, ≤ 15 classes a reader meets, the turn function
≤ 40 lines and no function on the turn's path over 40) are about *the controller's own turn* — the
engine a reader must follow. The function figures are printed three ways:

- **all**: every package function the turn touches;
- **without the environment**: minus the simulated world the scenario runs against
  (:data:`ENVIRONMENT`: the stub tools in ``task/world.py``, the fault injection in ``sim/faults.py``,
  the stub-tool executor in ``sim/executor.py`` and the user's cancel on the simulated timeline in
  ``sim/timeline.py``) — they stand in for a real tool backend, as the
  stub model stands in for a real model;
- **the engine**: only ``agentloops.controller`` modules outside the environment — the
  figure the target is about; the core modules it reuses (the shared stop vocabulary,
  messages, token estimates) are listed apart, as a library the engine calls.

The **classes a reader meets** are the package's classes whose instances are passed into a package
function of the turn or returned from one (the elements of a returned tuple too): what a reader must
hold in their head to follow the values between stages. The **lines** are each turn-path function's
source lines, its docstring included.

Run:  .venv/bin/python benchmarks/bench_turn_trace.py [--list]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

import agentloops
from agentloops.controller.running.scenarios import build_controller

SCENARIO = "weather-timeout-once"
TURN = 2
"""The model call whose reply asks for Beijing (the call that times out once)."""

PACKAGE = str(Path(agentloops.__file__).resolve().parent)
_INLINE = {"<genexpr>", "<listcomp>", "<dictcomp>", "<setcomp>"}
ENVIRONMENT = frozenset({"agentloops.controller.task.world", "agentloops.controller.sim.faults",
                         "agentloops.controller.sim.executor", "agentloops.controller.sim.timeline"})
"""The simulated tool backend and its fault injection: the world a turn acts on, not the controller."""
ENGINE_PREFIX = "agentloops.controller."


class CountingModel:
    """Wraps the scenario's model: its calls are the turn boundaries, and nothing inside them is counted."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.calls = 0
        self.inside = False

    def __call__(self, messages: Any) -> Any:
        self.inside = True
        try:
            return self.model(messages)
        finally:
            self.inside = False
            self.calls += 1


def _package_classes(value: object) -> set[type]:
    """The package classes of ``value`` (and of its elements, when it is a tuple or a list)."""
    found = set()
    for item in (value, *value) if isinstance(value, (tuple, list)) else (value,):
        kind = type(item)
        if kind.__module__.startswith("agentloops") and kind.__module__ not in ENVIRONMENT:
            found.add(kind)
    return found


def trace_turn(turn: int = TURN, classes: set[type] | None = None,
               lines: dict[tuple[str, str], int] | None = None) -> set[tuple[str, str]]:
    """(module, function) pairs run between the return of model call ``turn`` and that of call ``turn + 1``;
    ``classes`` collects the package classes passed between them, ``lines`` each function's length."""
    controller = build_controller(SCENARIO, trace_id="bench")
    counting = CountingModel(controller_model(controller))
    set_controller_model(controller, counting)
    seen: set[tuple[str, str]] = set()
    met = classes if classes is not None else set()
    sizes = lines if lines is not None else {}

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event not in ("call", "return") or counting.inside or counting.calls != turn:
            return
        code = frame.f_code
        if code.co_name in _INLINE or not code.co_filename.startswith(PACKAGE):
            return
        module = frame.f_globals.get("__name__", "?")
        if event == "return":
            met.update(_package_classes(arg))
            return
        seen.add((module, code.co_qualname))
        sizes[(module, code.co_qualname)] = _length(code)
        for name in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
            met.update(_package_classes(frame.f_locals.get(name)))

    sys.setprofile(profile)
    try:
        run = controller.run()
    finally:
        sys.setprofile(None)
    assert run.status == "succeeded", run.status
    assert "retry:get_weather(city=Beijing)" in run.actions, run.actions
    return seen


def _length(code: Any) -> int:
    """A function's source lines, from its first line (decorators excluded) to its last."""
    last = max((line for _, _, line in code.co_lines() if line is not None), default=code.co_firstlineno)
    return last - code.co_firstlineno + 1


def controller_model(controller: Any) -> Any:
    """The model the controller will call (its attribute name is an implementation detail)."""
    return controller.current.model


def set_controller_model(controller: Any, model: Any) -> None:
    controller.current.model = model


def split(seen: set[tuple[str, str]]) -> dict[str, set[tuple[str, str]]]:
    """The three figures of the module docstring: all, without the environment, the engine."""
    without = {(m, f) for m, f in seen if m not in ENVIRONMENT}
    engine = {(m, f) for m, f in without if m.startswith(ENGINE_PREFIX)}
    return {"all": seen, "without the environment": without, "the engine (controller only)": engine}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list every function counted")
    args = parser.parse_args(argv)
    classes: set[type] = set()
    lines: dict[tuple[str, str], int] = {}
    seen = trace_turn(classes=classes, lines=lines)
    print(f"one turn of {SCENARIO} (model call {TURN} → {TURN + 1}):")
    for name, functions in split(seen).items():
        print(f"  {name + ':':30} {len(functions):3} distinct package functions in "
              f"{len({m for m, _ in functions}):2} modules")
    engine = {(m, f): n for (m, f), n in lines.items() if m.startswith(ENGINE_PREFIX) and m not in ENVIRONMENT}
    longest = max(engine, key=engine.__getitem__)
    print(f"  {'classes a reader meets:':30} {len(classes):3}"
          + (f"  ({', '.join(sorted(c.__qualname__ for c in classes))})" if args.list else ""))
    print(f"  {'the turn function:':30} {lines.get(('agentloops.controller.turn', 'turn'), 0):3} lines")
    print(f"  {'longest engine function:':30} {engine[longest]:3} lines ({longest[0]}.{longest[1]})")
    print(f"  {'engine functions over 40 lines:':30} {sum(1 for n in engine.values() if n > 40):3}")
    for module in sorted({module for module, _ in seen}):
        names = sorted(name for m, name in seen if m == module)
        where = " (environment)" if module in ENVIRONMENT else "" if module.startswith(ENGINE_PREFIX) else " (core)"
        print(f"  {module}{where}: {len(names)}" + (f"  ({', '.join(names)})" if args.list else ""))


if __name__ == "__main__":
    main()
