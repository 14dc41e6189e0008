"""``agentloops controller …``: run scenarios, read and replay traces, and print the six pieces of evidence.

Added to the main command by :func:`add_controller_commands`. Every user
mistake (an unknown scenario or policy, a malformed trace) ends in one line
on stderr and exit status 2; ``controller check`` exits 1 when a scenario no
longer does what its file expects; a run a ``crash`` fault kills on purpose is
one line on stderr naming the trace it kept, and status 137 (a shell's ``kill -9``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import Any

from agentloops.arguments import positive_int
from agentloops.controller.policy.error_policy import resolve_policy
from agentloops.controller.vocabulary.errors import ConfigError, ProcessKilled
from agentloops.controller.vocabulary.render import Table
from agentloops.i18n import N_, Phrase, _, joined, speaking
from agentloops.jsonfile import read_json

FORMATS = ("text", "markdown", "json")


def _policy(text: str | None) -> Any:
    """A policy name, or a path to a JSON file of policy fields."""
    if text is None:
        return None
    if not text.endswith(".json"):
        return text
    data = read_json(text, error=ConfigError, what=N_("policy file (a JSON object of policy fields)"))
    if not isinstance(data, dict):
        raise ConfigError(_("{path}: expected a JSON object of policy fields; got {kind}").format(
            path=text, kind=type(data).__name__))
    try:
        return resolve_policy(data)
    except ConfigError as exc:
        raise ConfigError(f"{text}: {exc}") from None


def _render(table: Table, fmt: str) -> str:
    if fmt == "markdown":
        return table.to_markdown()
    if fmt == "json":
        return json.dumps(table.records(), ensure_ascii=False, indent=1, default=str)
    return str(table)


def _list(args: argparse.Namespace) -> str:
    from agentloops.controller.running.scenarios import scenario_table

    return _render(scenario_table(), args.format)


def _json(run: Any) -> dict[str, Any]:
    with speaking("en"):  # --json output is data (the user message inside it too), the same in every language
        return dict(run.to_dict())


def _run_output(run: Any, as_json: bool) -> str:
    if as_json:
        return json.dumps(_json(run), ensure_ascii=False, indent=1, default=str)
    return str(run)


def _run(args: argparse.Namespace) -> str:
    from agentloops.controller.running.resuming import resume
    from agentloops.controller.running.scenarios import build_controller
    from agentloops.controller.sim.scenario_files import load_controller_scenario

    scenario = load_controller_scenario(args.scenario)
    run = build_controller(scenario, policy=_policy(args.policy), trace=args.trace).run()
    parts = [_run_output(run, args.json)]
    answer = args.answer
    if answer is None and args.resume and scenario.resume is not None:
        answer = scenario.resume.answer
    if run.status == "waiting_for_user":
        if args.save:
            run.save(args.save)
            if not args.json:
                parts.append(_("saved state to {path}; continue with: agentloops controller resume {path} "
                               "--answer …").format(path=args.save))
        if answer is not None:
            resumed = resume(run, answer)
            if args.json:  # one JSON document: the run's keys, and the resumed run under "resumed"
                return json.dumps({**_json(run), "resumed": _json(resumed)}, ensure_ascii=False, indent=1,
                                  default=str)
            parts.append("\n" + _("=== the user answers {answer!r}; resuming from saved state ===").format(
                answer=answer) + "\n" + _run_output(resumed, args.json))
    elif args.answer is not None:
        raise ConfigError(_("--answer given, but {scenario} stopped as {status}, not waiting_for_user").format(
            scenario=scenario.name, status=run.status))
    if args.trace and not args.json:
        parts.append(_("trace written to {path}").format(path=args.trace))
    return "\n".join(parts)


def _resume(args: argparse.Namespace) -> str:
    from agentloops.controller.persistence.saved import unwitnessed_resume
    from agentloops.controller.running.resuming import resume

    unwitnessed = unwitnessed_resume(args.saved, args.trace)  # before the resume writes a trace of its own
    run = resume(args.saved, args.answer, trace=args.trace)
    note = _("note: no trace file was there to check, so nobody can know whether a copy of this saved run was "
             "resumed before; keep one trace (--trace) that every copy shares to have a second resume refused")
    if args.json:
        return json.dumps({**_json(run), "resume_unchecked": note if unwitnessed else None}, ensure_ascii=False,
                          indent=1, default=str)
    return _run_output(run, False) + ("\n" + note if unwitnessed else "")


def _replay(args: argparse.Namespace) -> str:
    from agentloops.controller.running.replaying import replay

    result = replay(args.trace, policy=_policy(args.policy), trace_out=args.out)
    if args.json:
        diff = result.diff
        return json.dumps({"trace_id": result.original.trace_id, "policy": result.run.policy.name,
                           "served_from_trace": result.served, "unrecorded": diff.unrecorded, "same": diff.same,
                           "before": {"actions": list(diff.before_actions), "stop": list(diff.before_stop)},
                           "after": {"actions": list(diff.after_actions), "stop": list(diff.after_stop)},
                           "first_divergence": diff.first_divergence,
                           "state_delta_changes": [list(c) for c in diff.delta_changes]},
                          ensure_ascii=False, indent=1)
    return str(result)


def _show(args: argparse.Namespace) -> str:
    from agentloops.controller.persistence.trace import read_trace

    trace = read_trace(args.trace)
    if args.json:
        return json.dumps([t.to_row() for t in trace.turns], ensure_ascii=False, indent=1, default=str)
    text = str(trace)
    if trace.truncated_tail:
        text += "\n" + _("(the last line was cut off mid-write and was skipped)")
    return text


def _check(args: argparse.Namespace) -> tuple[str, int]:
    from agentloops.controller.running.scenarios import check_scenario
    from agentloops.controller.sim.scenario_files import controller_scenario_names

    names = args.scenarios or controller_scenario_names()
    checks = [check_scenario(name, policy=_policy(args.policy)) for name in names]
    rows = [(c.name, joined([Phrase(N_("{status} ({code})"), status=r.status, code=r.code) for r in c.runs], " → "),
             "ok" if c.ok else Phrase(N_("FAILED")), joined(c.problems, "; ")) for c in checks]
    failed = sum(not c.ok for c in checks)
    note = _("{ok} of {n} scenarios behave as their files expect.").format(ok=len(checks) - failed, n=len(checks))
    table = Table.build(_("Controller scenarios: expected stop status, reason and actions"),
                        [N_("scenario"), N_("stop"), N_("check"), N_("problems")], rows, note=note)
    return _render(table, args.format), 1 if failed else 0


def _conditions(args: argparse.Namespace) -> str:
    from agentloops.controller.teaching.evidence import completion_conditions

    return _render(completion_conditions(), args.format)


def _budgets(args: argparse.Namespace) -> str:
    from agentloops.controller.teaching.evidence import budget_basis

    return _render(budget_basis(args.task, measure=args.measure or 0, seed=args.seed), args.format)


def _statuses(args: argparse.Namespace) -> str:
    from agentloops.controller.teaching.evidence import stop_statuses

    return _render(stop_statuses(), args.format)


def _repeat(args: argparse.Namespace) -> str:
    from agentloops.controller.teaching.evidence import repeated_call_trace

    return _render(repeated_call_trace(args.scenario), args.format)


def _routing(args: argparse.Namespace) -> str:
    from agentloops.controller.policy.error_policy import routing_table
    from agentloops.controller.teaching.evidence import error_routing

    if args.table:
        return _render(routing_table(_policy(args.policy)), args.format)
    return _render(error_routing(_policy(args.policy)), args.format)


def _regression(args: argparse.Namespace) -> str:
    from agentloops.controller.teaching.evidence import fault_regression

    result = fault_regression(_policy(args.before), _policy(args.after), args.scenarios)
    if args.format == "text":
        return str(result)
    return _render(result.table(), args.format)


def _compare(args: argparse.Namespace) -> str:
    from agentloops.controller.teaching.experiments import compare_loops

    result = compare_loops(args.runs, args.seed, cap=args.cap, policy=_policy(args.policy))
    if args.format == "json":
        return json.dumps({"summary": result.summary(), "counts": result.counts().records()}, indent=1)
    return _render(result.counts(), args.format) + "\n" + json.dumps(result.summary())


def _evidence(args: argparse.Namespace) -> str:
    from agentloops.controller.teaching.evidence import evidence_index

    return _render(evidence_index(), args.format)


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def add_controller_commands(sub: Any) -> argparse.ArgumentParser:
    """Add ``controller`` and its subcommands to the main parser's subparsers."""
    top = sub.add_parser("controller",
                         help=_("the production stop controller: scenarios, traces, replay, evidence"))
    cmds = top.add_subparsers(dest="controller_command", required=True, metavar="COMMAND")
    _add_run_commands(cmds)
    _add_evidence_commands(cmds)
    return top


def _command(cmds: Any, name: str, handler: Any, text: str, formats: bool = False) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = cmds.add_parser(name, help=text, description=text)
    parser.set_defaults(controller_handler=handler)
    if formats:
        parser.add_argument("--format", choices=FORMATS, default="text")
    return parser


def _add_run_commands(cmds: Any) -> None:
    """Run, resume, replay, show and check scenarios and traces."""
    _command(cmds, "list", _list, _("list the controller scenarios and their expected stops"), formats=True)

    p = _command(cmds, "run", _run, _("run one scenario, turn by turn, and show how and why it stopped"))
    p.add_argument("scenario", help=_("a shipped scenario name or a path to a scenario .json file"))
    p.add_argument("--policy", help=_("a policy name (default, naive, degrade) or a .json file of policy fields"))
    p.add_argument("--trace", help=_("write the trace here as JSON Lines, one line per turn"))
    p.add_argument("--json", action="store_true", help=_("print the run as JSON"))
    p.add_argument("--answer", help=_("when the run waits for the user, resume it with this answer"))
    p.add_argument("--resume", action="store_true",
                   help=_("when the run waits, resume with the scenario's answer"))
    p.add_argument("--save", help=_("when the run waits, write its saved state here"))

    p = _command(cmds, "resume", _resume, _("continue a saved waiting run with the user's answer"))
    p.add_argument("saved", help=_("a file written by 'controller run … --save'"))
    p.add_argument("--answer", required=True, help=_("the user's answer"))
    p.add_argument("--trace", help=_("append to this trace file (default: the run's own, if any)"))
    p.add_argument("--json", action="store_true", help=_("print the run as JSON"))

    p = _command(cmds, "replay", _replay, _("re-run a recorded trace's tool results and diff the trajectories"))
    p.add_argument("trace", help=_("a JSON Lines trace written by 'controller run --trace'"))
    p.add_argument("--policy", help=_("replay under this policy (default: the recorded one)"))
    p.add_argument("--out", help=_("write the replay's own trace here"))
    p.add_argument("--json", action="store_true", help=_("print the diff as JSON"))

    p = _command(cmds, "show", _show, _("print a trace file as a table (a killed run's trace too)"))
    p.add_argument("trace", help=_("a JSON Lines trace"))
    p.add_argument("--json", action="store_true", help=_("print the turns as JSON rows"))

    p = _command(cmds, "check", _check,
                 _("run every scenario and check its expected stop and actions (exit 1 on a mismatch)"), formats=True)
    p.add_argument("scenarios", nargs="*", help=_("scenario names (default: all)"))
    p.add_argument("--policy", help=_("run under this policy instead of each file's own"))


def _add_evidence_commands(cmds: Any) -> None:
    """The six pieces of evidence, the random comparison, and the index of them."""
    _command(cmds, "conditions", _conditions,
             _("evidence 1: the business completion condition of every task type"), True)

    p = _command(cmds, "budgets", _budgets,
                 _("evidence 2: budgets per task type with their basis and measured use"), True)
    p.add_argument("--task", help=_("one task type (default: all)"))
    p.add_argument("--measure", type=positive_int,
                   help=_("also measure this many uncapped random runs of each task type and derive each limit"))
    p.add_argument("--seed", type=int, default=0, help=_("first seed of the random runs"))

    _command(cmds, "statuses", _statuses, _("evidence 3: the stop status definitions"), True)

    p = _command(cmds, "repeat", _repeat,
                 _("evidence 4: a repeated-call trace showing why the state did not change"), True)
    p.add_argument("scenario", nargs="?", default="weather-reask", help=_("default: weather-reask"))

    p = _command(cmds, "routing", _routing, _("evidence 5: how each tool error is routed, run for real"), True)
    p.add_argument("--policy", help=_("a policy name or .json file (default: default)"))
    p.add_argument("--table", action="store_true",
                   help=_("print the policy's routing table instead of running probes"))

    p = _command(cmds, "regression", _regression,
                 _("evidence 6: fault-injection regression, recorded under one policy and replayed under another"),
                 True)
    p.add_argument("--before", default="naive", help=_("policy the traces are recorded under (default: naive)"))
    p.add_argument("--after", default="default", help=_("policy they are replayed under (default: default)"))
    p.add_argument("--scenarios", type=_csv, help=_("comma-separated scenario names (default: all)"))

    p = _command(cmds, "compare", _compare, _("many random runs: a cap-only loop against the controller"), True)
    p.add_argument("--runs", type=positive_int, default=200,
                   help=_("how many random cases to draw and run through both loops (default: 200)"))
    p.add_argument("--seed", type=int, default=0,
                   help=_("seed of the first case; cases use seeds SEED … SEED+RUNS-1, so a run is reproducible "
                          "(default: 0)"))
    p.add_argument("--cap", type=positive_int, default=8, help=_("max_steps of the cap-only loop"))
    p.add_argument("--policy", help=_("the controller's policy"))

    _command(cmds, "evidence", _evidence, _("the six pieces of evidence and the command that produces each"), True)


EXIT_KILLED = 137
"""The status of a run a ``crash`` fault killed: what a shell reports for a ``kill -9`` (128 + 9)."""


def dispatch(args: argparse.Namespace) -> str | tuple[str, int]:
    """Run the chosen controller subcommand.

    A ``crash`` fault kills the run on purpose (a simulated ``kill -9``): that is the scenario working,
    not a bug, so it is one line on stderr saying where the trace is kept, and status :data:`EXIT_KILLED`.
    """
    try:
        return args.controller_handler(args)  # type: ignore[no-any-return]
    except ProcessKilled as killed:
        return _killed(args, killed)


_TRACE_OPTIONS = {"run": "--trace", "resume": "--trace", "replay": "--out"}
"""The option that keeps a trace, for each command that has one (replay's own trace is ``--out``)."""


def _killed(args: argparse.Namespace, killed: ProcessKilled) -> tuple[str, int]:
    """The one line reporting a simulated kill, naming the trace that survived it (or saying none was kept)."""
    option = _TRACE_OPTIONS.get(args.controller_command)
    kept = getattr(args, option[2:], None) if option else None
    if kept:
        line = _("the run was killed ({what}); its trace is kept in {path}: agentloops controller show {path}").format(
            what=killed, path=kept)
    elif option:
        line = _("the run was killed ({what}); no trace was kept (pass {option} to keep one)").format(
            what=killed, option=option)
    else:
        line = _("the run was killed ({what}); no trace was kept").format(what=killed)
    with contextlib.suppress(OSError):
        print(f"agentloops: {line}", file=sys.stderr)
    return "", EXIT_KILLED
