"""Did a change to diagnose change what it says? Compare every report, byte for byte.

The cases: ``agentloops diagnose FILE --format F [--json]`` in English and in Chinese (``--lang zh``), for every
shipped log under ``data/diagnose/`` and every shipped provider scenario (``data/scenarios/providers/``), under
every ``--format`` (``auto`` and each of :data:`~agentloops.diagnose.LOG_FORMATS`: a file read in the wrong
format gives its one-line error, which is output too), plus ``--max-steps 10`` on the auto format, plus the
benchmark's generated logs (every shape, small) read in the auto format. What is kept per case: the exit status,
standard output and standard error, each command run in this process (as the command line runs it).

Run:  .venv/bin/python benchmarks/check_diagnose_unchanged.py --save before.json   (before a change)
      .venv/bin/python benchmarks/check_diagnose_unchanged.py --against before.json  (after it: exit 1 on a diff)
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from agentloops.cli import main as agentloops
from agentloops.diagnose import LOG_FORMATS
from agentloops.resources import data_dir

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_diagnose

GENERATED_MB = 0.2
"""Size of each generated log: a few runs of every shape, planted stop bugs included."""
AGENT_MB = 3.0
"""The agent log's size: its runs are long, and its first planted repeat is its 7th run."""


def shipped_logs() -> list[Path]:
    """Every shipped file diagnose is pointed at in tests and docs."""
    return [*sorted((data_dir() / "diagnose").rglob("*.json*")),
            *sorted((data_dir() / "scenarios" / "providers").glob("*.json"))]


def generated_logs(folder: Path) -> Iterator[Path]:
    """The benchmark's logs of every shape, small."""
    for shape in bench_diagnose.LOG_SHAPES:
        path = folder / f"{shape}.jsonl"
        if shape == "agent":
            bench_diagnose.make_agent_log(path, AGENT_MB)
        else:
            bench_diagnose.make_log(path, GENERATED_MB, shape)
        yield path


def run(argv: list[str]) -> dict[str, object]:
    """One command's exit status, standard output and standard error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = agentloops(argv)
    return {"status": status, "stdout": out.getvalue(), "stderr": err.getvalue()}


def cases(folder: Path) -> Iterator[tuple[str, list[str]]]:
    """Every case's name (paths relative, so two checkouts compare) and its arguments."""
    root = data_dir()
    runs: list[tuple[str, Path, list[str]]] = []
    for path in shipped_logs():
        name = str(path.relative_to(root))
        runs += [(f"{name} --format {f}", path, ["--format", f]) for f in ("auto", *LOG_FORMATS)]
        runs.append((f"{name} --max-steps 10", path, ["--max-steps", "10"]))
    runs += [(f"generated/{p.name}", p, []) for p in generated_logs(folder)]
    for label, path, options in runs:
        for lang in ("en", "zh"):
            for json_flag in ([], ["--json"]):
                yield f"{lang} {label} {' '.join(json_flag)}".strip(), ["--lang", lang, "diagnose", str(path),
                                                                          *options, *json_flag]


def outputs() -> dict[str, dict[str, object]]:
    """Every case's output, paths in it written relative to the data folder."""
    with tempfile.TemporaryDirectory() as folder:
        found = {}
        for name, argv in cases(Path(folder)):
            result = run(argv)
            for key in ("stdout", "stderr"):
                text = str(result[key]).replace(str(data_dir()) + "/", "DATA/").replace(folder + "/", "GEN/")
                result[key] = text.replace(json.dumps(str(data_dir()))[1:-1] + "/", "DATA/")
            found[name] = result
        return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", type=Path, help="write every case's output here")
    group.add_argument("--against", type=Path, help="compare every case's output with this file")
    args = parser.parse_args()
    found = outputs()
    if args.save:
        args.save.write_text(json.dumps(found, ensure_ascii=False, indent=1, sort_keys=True), encoding="utf-8")
        print(f"saved {len(found)} cases to {args.save}")
        return 0
    before = json.loads(args.against.read_text(encoding="utf-8"))
    differ = sorted(name for name in before.keys() | found.keys() if before.get(name) != found.get(name))
    for name in differ[:20]:
        print(f"DIFFERS: {name}\n  before: {json.dumps(before.get(name), ensure_ascii=False)[:600]}\n"
              f"  after:  {json.dumps(found.get(name), ensure_ascii=False)[:600]}")
    print(f"{len(found) - len(differ)} of {len(found)} cases unchanged; {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
