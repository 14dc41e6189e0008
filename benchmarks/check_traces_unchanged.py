"""Did a change to the controller change what it does? Compare every shipped trace, byte for byte.

For every shipped scenario under its own policy and under every shipped policy, the run is made
twice — trace in memory, and trace written to a file — with a trace id derived from the case's
name, and the resumed run too when the scenario waits for the user and ships an answer. What is
kept per case: every in-memory trace line as JSON text, the file's bytes, ``run.to_dict()`` and the
saved run state (minus its random ``pause_id``). Then ``agentloops controller run FILE --json`` for
each scenario file under ``data/`` (and with ``--resume``), its random trace id replaced by a
placeholder (a random value, not a timing: the id is the only field that differs between two runs).

Run:  .venv/bin/python benchmarks/check_traces_unchanged.py --save before.json   (before a change)
      .venv/bin/python benchmarks/check_traces_unchanged.py --against before.json  (after it: exit 1 on a diff)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentloops.controller.engine import new_trace_id
from agentloops.controller.policy.error_policy import POLICIES
from agentloops.controller.running.resuming import resume
from agentloops.controller.running.scenarios import build_controller
from agentloops.controller.sim.scenario_files import (
    controller_scenario_names,
    controller_scenarios_dir,
    load_controller_scenario,
)


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _run_case(name: str, policy: str | None, folder: Path) -> dict[str, Any]:
    """One scenario under one policy: memory and file traces, the result, and the resumed run."""
    case = f"{name}/{policy or 'own'}"
    out: dict[str, Any] = {}
    for where in ("memory", "file"):
        path = folder / f"{name}-{policy}-{where}.jsonl" if where == "file" else None
        run = build_controller(name, policy=policy, trace=path, trace_id=new_trace_id(case)).run()
        out[f"{where}:lines"] = [_text(line) for line in run.trace_lines]
        out[f"{where}:result"] = _text(run.to_dict())
        if run.run_state is not None:
            saved = run.run_state.model_dump(mode="json")
            saved.pop("pause_id", None)
            saved.pop("trace_path", None)
            out[f"{where}:run_state"] = _text(saved)
        if path is not None:
            out["file:bytes"] = path.read_text(encoding="utf-8")
        answer = load_controller_scenario(name).resume
        if run.status == "waiting_for_user" and answer is not None:
            resumed = resume(run, answer.answer)
            out[f"{where}:resumed:lines"] = [_text(line) for line in resumed.trace_lines]
            out[f"{where}:resumed:result"] = _text(resumed.to_dict())
            if path is not None:
                out["file:resumed:bytes"] = path.read_text(encoding="utf-8")
    return out


def _cli_case(path: Path, extra: Sequence[str]) -> str:
    done = subprocess.run([sys.executable, "-m", "agentloops", "controller", "run", str(path), "--json", *extra],
                          capture_output=True, text=True, check=False, timeout=120)
    text = done.stdout + (f"\n[exit {done.returncode}] {done.stderr}" if done.returncode else "")
    try:
        trace_id = json.loads(done.stdout)["trace_id"]
    except (ValueError, KeyError):
        return text
    return text.replace(trace_id, "<trace id>")


def collect(cli: bool = True) -> dict[str, Any]:
    """Every case's output, by case name."""
    cases: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in controller_scenario_names():
            for policy in (None, *POLICIES):
                cases[f"{name}/{policy or 'own'}"] = _run_case(name, policy, Path(tmp))
    if cli:
        for path in sorted(controller_scenarios_dir().glob("*.json")):
            cases[f"cli:{path.name}"] = _cli_case(path, [])
            cases[f"cli:{path.name} --resume"] = _cli_case(path, ["--resume"])
    return cases


def diff(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """One line per case (and part) that differs."""
    problems = []
    for case in sorted(set(before) | set(after)):
        old, new = before.get(case), after.get(case)
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            for part in sorted(set(old) | set(new)):
                if old.get(part) != new.get(part):
                    problems.append(f"{case}: {part} differs")
        else:
            problems.append(f"{case}: differs")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--save", type=Path, help="write the current outputs to this file")
    parser.add_argument("--against", type=Path, help="compare the current outputs with this file")
    parser.add_argument("--no-cli", action="store_true", help="skip the CLI cases (faster)")
    args = parser.parse_args(argv)
    cases = collect(cli=not args.no_cli)
    if args.save:
        args.save.write_text(json.dumps(cases, ensure_ascii=False, indent=0), encoding="utf-8")
        print(f"saved {len(cases)} cases to {args.save}")
    if args.against:
        before = json.loads(args.against.read_text(encoding="utf-8"))
        if args.no_cli:
            before = {k: v for k, v in before.items() if not k.startswith("cli:")}
        problems = diff(before, cases)
        print("\n".join(problems) or f"byte-identical: {len(cases)} cases")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
