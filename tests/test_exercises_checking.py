"""Running learner code safely: every misbehaviour becomes a verdict, in both isolation modes."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from functools import partial

import pytest

from agentloops.controller.teaching.prewarm import Prewarm
from agentloops.exercises.checking import (
    MAX_TIMEOUTS,
    Case,
    default_mode,
    describe_exception,
    is_learner_frame,
    run_cases,
    type_name,
)
from agentloops.exercises.results import CaseResult, ExerciseResult, Note

LIMIT = 0.4  # seconds: short, so the infinite-loop cases cost little
MODES = ["inprocess", *(["fork"] if default_mode() == "fork" else [])]


def fine() -> str:
    return "fine"


def divides_by_zero() -> float:
    return 1 / 0


def loops_forever() -> None:
    while True:
        pass


def swallows_everything() -> None:
    while True:
        try:
            while True:
                pass
        except BaseException:  # a learner who catches everything still gets stopped
            continue


def exits() -> None:
    sys.exit(3)


def talks() -> str:
    print("debugging output")
    return "fine"


def expect(value: object) -> Callable[[object], tuple[bool, str]]:
    """A judge that passes exactly ``value`` (compared by the notebook's process, on the decoded output)."""
    def judge(output: object) -> tuple[bool, str]:
        return (type(output) is type(value) and output == value), f"got {output!r}"
    return judge


def case(name: str, call: Callable[[], object], value: object = "fine") -> Case:
    return Case(name, call, expect(value))


@pytest.mark.parametrize("mode", MODES)
def test_each_misbehaviour_becomes_a_verdict(mode: str) -> None:
    cases = [case("ok", fine), case("wrong", fine, "other"), case("raises", divides_by_zero), case("exits", exits),
             case("loops", loops_forever), case("after", fine)]
    results, _ = run_cases(cases, time_limit=LIMIT, mode=mode)  # type: ignore[arg-type]
    by_name = {r.name: r for r in results}
    assert [r.name for r in results] == [c.name for c in cases]
    assert by_name["ok"] == CaseResult("ok", "passed", "got 'fine'")
    assert by_name["wrong"] == CaseResult("wrong", "failed", "got 'fine'")
    assert by_name["raises"].status == "failed"
    assert by_name["raises"].message.startswith("your code raised ZeroDivisionError: division by zero (in "
                                                "divides_by_zero, line ")
    assert by_name["exits"].message == "your code called sys.exit(3); return a value instead"
    assert by_name["loops"].status == "timeout"
    assert f"did not finish within {LIMIT:g} s and was stopped" in by_name["loops"].message
    assert by_name["after"].passed  # one infinite loop does not stop the cases after it


@pytest.mark.skipif(default_mode() != "fork", reason="only a forked child can be stopped whatever it catches")
def test_a_learner_who_catches_everything_is_still_stopped() -> None:
    results, _ = run_cases([case("stubborn", swallows_everything)], time_limit=LIMIT, mode="fork")
    assert results[0].status == "timeout"


@pytest.mark.parametrize("mode", MODES)
def test_after_too_many_timeouts_the_rest_is_skipped(mode: str) -> None:
    cases = [case(f"loop {i}", loops_forever) for i in range(MAX_TIMEOUTS)] + [case("later", fine)]
    results, _ = run_cases(cases, time_limit=LIMIT, mode=mode)  # type: ignore[arg-type]
    assert [r.status for r in results] == ["timeout"] * MAX_TIMEOUTS + ["skipped"]
    assert "fix the infinite loop first" in results[-1].message


@pytest.mark.parametrize("mode", MODES)
def test_the_whole_check_has_its_own_time_limit(mode: str) -> None:
    def slow() -> str:
        time.sleep(0.3)  # each case stays under its own limit…
        return "fine"

    started = time.monotonic()
    results, _ = run_cases([case(f"slow {i}", slow) for i in range(8)], time_limit=1.0, total_limit=1.0,
                           mode=mode)  # type: ignore[arg-type]
    assert time.monotonic() - started < 2.5  # …but eight of them would take 2.4 s
    statuses = [r.status for r in results]
    assert statuses[:2] == ["passed", "passed"] and statuses[-1] == "skipped" and "timeout" not in statuses[3:]
    assert results[-1].message == "not run: the whole check ran out of its 1 s; make each case faster"


def test_an_exception_is_blamed_on_the_learner_only_when_their_code_raised_it() -> None:
    def learner_bug() -> object:
        return {}["missing"]  # raised in a test file: learner code

    def broken_judge(output: object) -> tuple[bool, str]:
        raise ValueError("the judge has a bug")

    results, _ = run_cases([case("theirs", learner_bug), case("ours", partial(int, "x")),
                            Case("judge", fine, broken_judge)], mode="inprocess")
    assert results[0].status == "failed" and results[0].message.startswith("your code raised KeyError: 'missing'")
    assert results[1].status == "error"
    assert results[1].message.startswith("the checker itself failed (ValueError: invalid literal for int()")
    assert results[1].message.endswith("this is not your fault — please report it")
    assert results[2].status == "error" and "the judge has a bug" in results[2].message


@pytest.mark.skipif(default_mode() != "fork", reason="forked isolation is used on Linux only")
def test_fork_mode_captures_printing_and_survives_a_crash() -> None:
    def crashes() -> None:
        os._exit(7)

    results, printed = run_cases([case("talks", talks), case("crashes", crashes), case("after", fine)],
                                 time_limit=LIMIT, mode="fork")
    assert printed == "debugging output\n"
    assert results[1] == CaseResult("crashes", "failed",
                                    "your code crashed the checker's worker process (exit status 7)")
    assert results[2].passed


def test_describe_exception_points_at_the_learners_line() -> None:
    try:
        divides_by_zero()
    except ZeroDivisionError as exc:
        text = describe_exception(exc)
    assert text.startswith("ZeroDivisionError: division by zero (in divides_by_zero, line ")
    assert "`return 1 / 0`" in text


def test_learner_frames_exclude_the_package_and_the_standard_library() -> None:
    import json

    import agentloops

    assert is_learner_frame(__file__)
    assert is_learner_frame("/tmp/ipykernel_123/456.py")
    assert not is_learner_frame(agentloops.__file__)
    assert not is_learner_frame(json.__file__)


@pytest.mark.parametrize(("value", "shown"), [
    (None, "None"), ("done", "str ('done')"), (True, "bool (True)"), (3, "int (3)"), ([1, 2], "list of 2"),
    (object(), "object"),
])
def test_type_names_read_like_a_sentence(value: object, shown: str) -> None:
    assert type_name(value) == shown


def test_results_render_as_text_and_html() -> None:
    result = ExerciseResult("q1 · demo", "incorrect", "1 of 2 cases pass; first to fix: b.",
                            (CaseResult("a", "passed", "ok"), CaseResult("b", "timeout", "<stopped>")),
                            hint="Stuck? q1.hint()", output="x" * 3000)
    text = str(result)
    assert text.splitlines()[:3] == ["✗ Not yet — q1 · demo: 1 of 2 cases pass; first to fix: b.",
                                     "  ✓ a: ok", "  ◷ b: <stopped>"]
    assert "(1000 more characters)" in text and text.endswith("Stuck? q1.hint()")
    page = result._repr_html_()
    assert "&lt;stopped&gt;" in page and "✗ Not yet" in page and "<details>" in page
    assert result.failures == (result.cases[1],) and result.case("a").passed
    with pytest.raises(KeyError, match="no case named 'c'; cases: a, b"):
        result.case("c")
    note = Note("Solution", "one way", "def f():\n    return 1\n")
    assert str(note) == "Solution: one way\ndef f():\n    return 1"
    assert "<pre" in note._repr_html_()


def test_when_fork_fails_the_cases_run_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    import agentloops.exercises.checking as checking

    def no_fork() -> int:
        raise OSError("Resource temporarily unavailable")

    monkeypatch.setattr(checking.os, "fork", no_fork)
    results, _ = run_cases([case("ok", fine), case("wrong", fine, "other")], mode="fork")
    assert [r.status for r in results] == ["passed", "failed"]


# ---- a case that ran out of time without using the processor gets a second worker; a loop does not


STALL_LIMIT = 1.0  # a loop uses a tenth of it even on a crowded machine; a wait uses none


def _started(marker: str) -> int:
    """Count this start in ``marker`` (a file: each worker is a separate process); how many came before."""
    with open(marker, "a+", encoding="ascii") as file:
        file.seek(0)
        before = len(file.read())
        file.write("x")
    return before


def stuck_the_first_time(marker: str) -> str:
    if not _started(marker):
        time.sleep(30)  # a copy stuck on a lock, or not run on a busy machine: no processor time used
    return "fine"


def loops_counted(marker: str) -> None:
    _started(marker)
    loops_forever()


def sleeps_counted(marker: str) -> None:
    _started(marker)
    time.sleep(30)


@pytest.mark.skipif(default_mode() != "fork", reason="only a forked worker can be given a second try")
def test_a_case_that_waited_out_its_time_is_run_once_more_in_a_fresh_worker(tmp_path):
    marker = str(tmp_path / "starts")
    results, _ = run_cases([case("stuck once", partial(stuck_the_first_time, marker)), case("after", fine)],
                           time_limit=STALL_LIMIT, mode="fork")
    assert [r.status for r in results] == ["passed", "passed"]
    assert (tmp_path / "starts").read_text(encoding="ascii") == "xx"


@pytest.mark.skipif(default_mode() != "fork", reason="only a forked worker can be given a second try")
def test_a_loop_times_out_at_once_and_a_wait_after_its_second_worker(tmp_path):
    looped, slept = str(tmp_path / "looped"), str(tmp_path / "slept")
    results, _ = run_cases([case("loops", partial(loops_counted, looped)),
                            case("sleeps", partial(sleeps_counted, slept))], time_limit=STALL_LIMIT, mode="fork")
    assert [r.status for r in results] == ["timeout", "timeout"]
    assert (tmp_path / "looped").read_text(encoding="ascii") == "x"  # it used the processor: one worker was enough
    assert (tmp_path / "slept").read_text(encoding="ascii") == "xx"


def test_the_time_a_fork_waits_for_the_kernels_own_threads_is_not_the_checks():
    """A widget's worker in the middle of a run holds the fork back (a copy taken inside a library's lock would
    hang); that wait is the kernel's, so it does not eat the check's whole time."""
    if default_mode() != "fork":
        pytest.skip("no fork here")

    started = threading.Event()

    def one_long_run(key: object) -> object:
        started.set()
        time.sleep(0.8)  # no checkpoint inside: the fork waits for all of it
        return key

    ahead = Prewarm(one_long_run)
    ahead.ahead(["busy"])
    assert started.wait(10)

    def slow() -> str:
        time.sleep(0.3)
        return "fine"

    results, _ = run_cases([case("slow 1", slow), case("slow 2", slow)], time_limit=1.0, total_limit=1.0,
                           mode="fork")
    assert [r.status for r in results] == ["passed", "passed"]
    ahead.stop()
