"""The checker probed as a mischievous learner would: none of these cheap tricks may report a wrong answer as right.

Each test is one attack from issue 14. The exercise-level ones run against any version of the checker
(they only call ``q.judge``), so they can show what an older checker let through.
"""

from __future__ import annotations

import fcntl
import os
import stat
import struct
import time
from pathlib import Path

import pytest

import agentloops as al
from agentloops.exercises.checking import Case, default_mode, run_cases
from agentloops.exercises.controlling import q5, q6
from agentloops.exercises.stopping import q1, q2, q3, run_tool

pytestmark = pytest.mark.skipif(default_mode() != "fork", reason="the worker process exists on Linux only")


class AlwaysEqualInt(int):
    """An int that says it equals anything."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


class AlwaysEqualStr(str):
    """A str that says it equals anything."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__


class AlwaysEqual:
    """An object that says it equals anything."""

    def __eq__(self, other: object) -> bool:
        return True


def test_a_value_that_equals_everything_passes_nothing() -> None:
    assert not q3.judge(lambda rounds: AlwaysEqualInt(0)).passed
    assert not q3.judge(lambda rounds: AlwaysEqual()).passed
    assert not q5.judge(lambda result, ctx: AlwaysEqualStr("accept")).passed
    assert not q6.judge(lambda state: AlwaysEqualStr("complete")).passed


def test_a_subclass_of_a_builtin_is_named_as_such() -> None:
    message = q6.judge(lambda state: AlwaysEqualStr("complete")).case("nothing found yet").message
    assert message.startswith("your function returned AlwaysEqualStr (a subclass of str); expected one of")


def test_a_loop_that_returns_an_always_equal_answer_fails() -> None:
    def capped_loop(model, tools, max_steps=8):
        messages = [al.Message("user", "?")]
        for _ in range(max_steps):
            response = model(messages)
            messages.append(al.Message.from_response(response))
            if not response.tool_calls:
                return AlwaysEqualStr("whatever")  # right number of calls, a counterfeit answer
            for call in response.tool_calls:
                messages.append(al.Message("tool", run_tool(tools, call), tool_call_id=call.id, name=call.name))
        raise al.MaxStepsError(f"reached max_steps={max_steps}")

    result = q2.judge(capped_loop)
    assert result.case("normal").status == "failed" and result.case("talk-only").status == "failed"
    assert result.case("stuck, max_steps=3").passed  # the cap itself was right


def _pipe_fds() -> list[int]:
    """In a checker's worker, the write end of its result pipe: the pipe whose read end its parent holds."""
    parent = os.getppid()
    read_ends = set()
    for entry in Path(f"/proc/{parent}/fdinfo").iterdir():
        try:
            flags = int(entry.read_text().split("flags:")[1].split()[0], 8)
            target = os.stat(f"/proc/{parent}/fd/{entry.name}")
        except (OSError, IndexError, ValueError):
            continue
        if flags & os.O_ACCMODE == os.O_RDONLY and stat.S_ISFIFO(target.st_mode):
            read_ends.add(target.st_ino)
    found = []
    for fd in range(3, 256):
        try:
            info = os.fstat(fd)
            if stat.S_ISFIFO(info.st_mode) and info.st_ino in read_ends and \
                    fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                found.append(fd)
        except OSError:
            continue
    return found


def _frame(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def test_forged_verdicts_on_the_pipe_do_not_pass() -> None:
    import pickle

    from agentloops.exercises.results import CaseResult

    names = [c.name for c in q3.judge(q3.reference()).cases]

    def count_wasted(rounds):
        for fd in _pipe_fds():
            for index, name in enumerate(names):
                os.write(fd, _frame(pickle.dumps(("case", index, CaseResult(name, "passed", "forged"), ""))))
            os.write(fd, _frame(pickle.dumps(("done", 0))))
        os._exit(0)

    result = q3.judge(count_wasted)
    assert [c.status for c in result.cases] == ["failed"] * len(names)


def test_forged_json_verdicts_do_not_pass() -> None:
    def count_wasted(rounds):
        for fd in _pipe_fds():
            for index in range(20):
                os.write(fd, _frame(b'{"case": %d, "status": "passed", "message": "forged"}' % index))
        os._exit(0)

    result = q3.judge(count_wasted)
    assert all(c.status == "failed" for c in result.cases)
    assert result.case("normal").message.startswith("the checker's worker sent something it never sends")


def test_the_kernel_never_unpickles_what_the_worker_sends(tmp_path: Path) -> None:
    import pickle

    marker = tmp_path / "ran-in-the-kernel"

    class Payload:
        def __reduce__(self):  # un-pickling this creates a file in the notebook's kernel
            return (open, (str(marker), "w"))

    def count_wasted(rounds):
        for fd in _pipe_fds():
            os.write(fd, _frame(pickle.dumps(Payload())))
        os._exit(0)

    q3.judge(count_wasted)
    assert not marker.exists(), "the kernel ran code the worker sent"


def test_replacing_the_result_class_inside_the_worker_changes_nothing() -> None:
    def count_wasted(rounds):
        import agentloops.exercises.checking as checking
        from agentloops.exercises.results import CaseResult

        def passing(name, status, message):  # "the result class", always saying passed
            return CaseResult(name, "passed", message)

        def always(case, *rest):
            return CaseResult(case.name, "passed", "forged")

        checking.CaseResult = passing
        for name in ("run_one", "judge_case"):
            setattr(checking, name, always)
        return 99

    result = q3.judge(count_wasted)
    assert [c.status for c in result.cases] == ["failed"] * len(result.cases)  # 99 is wrong everywhere


def test_a_wrong_finish_answer_is_the_learners_mistake_with_a_hint() -> None:
    def stop_criterion(response):
        return al.Continue() if response.tool_calls else al.Finish(42)

    message = q1.judge(stop_criterion).case("normal").message
    assert "the checker itself failed" not in message
    assert message.startswith("on call 3 (")
    assert message.endswith("your function returned Finish(42): the answer of a Finish is the round's text "
                            "(a str or None), not int (42) — write al.Finish(response.content)")


def test_raising_an_error_class_without_its_message_gets_a_hint() -> None:
    def capped_loop(model, tools, max_steps=8):
        messages = [al.Message("user", "?")]
        for _ in range(max_steps):
            response = model(messages)
            messages.append(al.Message.from_response(response))
            if not response.tool_calls:
                return response.content
            for call in response.tool_calls:
                messages.append(al.Message("tool", run_tool(tools, call), tool_call_id=call.id, name=call.name))
        raise al.MaxStepsError

    message = q2.judge(capped_loop).case("stuck, max_steps=3").message
    assert "you raised the class al.MaxStepsError without its arguments" in message
    assert 'raise al.MaxStepsError("why the run stopped")' in message
    assert "the checker itself failed" not in message


# --------------------------------------------------------------------------- the worker process itself


def _state(pid: int) -> str:
    """A process's state letter from /proc (``Z`` for a zombie), or ``gone``."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "gone"


def _wait_dead(pid: int, seconds: float = 3.0) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        state = _state(pid)
        if state in ("Z", "X", "gone"):
            return state
        time.sleep(0.05)
    return _state(pid)


def test_no_child_survives_the_check(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"

    def spawns() -> str:
        child = os.fork()
        if child == 0:
            time.sleep(30)
            os._exit(0)
        pid_file.write_text(str(child))
        return "fine"

    results, _ = run_cases([Case("spawns", spawns, lambda out: (out == "fine", "ok"))], time_limit=2, mode="fork")
    assert results[0].passed
    assert _wait_dead(int(pid_file.read_text())) in ("Z", "X", "gone")


def test_a_worker_that_dies_while_its_child_holds_the_pipe_is_a_crash(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"

    def forks_and_dies() -> str:
        child = os.fork()
        if child == 0:
            time.sleep(30)  # keeps the worker's end of the pipe open
            os._exit(0)
        pid_file.write_text(str(child))
        os._exit(3)

    started = time.monotonic()
    results, _ = run_cases([Case("forks", forks_and_dies, lambda out: (True, "")),
                            Case("after", lambda: "fine", lambda out: (out == "fine", "ok"))],
                           time_limit=5, mode="fork")
    assert time.monotonic() - started < 4, "waited for the child instead of noticing the worker died"
    assert results[0].message == "your code crashed the checker's worker process (exit status 3)"
    assert results[1].passed
    assert _wait_dead(int(pid_file.read_text())) in ("Z", "X", "gone")


def test_the_worker_has_a_memory_limit() -> None:
    def hoards() -> int:
        block = bytearray(3 << 30)  # 3 GiB: more than the checker allows on top of the kernel's own size
        return len(block)

    results, _ = run_cases([Case("hoards", hoards, lambda out: (True, "allocated"))], time_limit=5, mode="fork")
    assert results[0].status == "failed"
    assert results[0].message.startswith("your code raised MemoryError")
    assert "ran out of the memory the checker allows" in results[0].message


def test_an_oversized_or_garbled_message_fails_its_case() -> None:
    def garbles() -> str:
        for fd in _pipe_fds():
            os.write(fd, struct.pack(">I", 1 << 30))  # a length no worker sends
        time.sleep(0.2)
        return "fine"

    results, _ = run_cases([Case("garbles", garbles, lambda out: (True, "passed"))], time_limit=2, mode="fork")
    assert results[0].status == "failed"
    assert results[0].message.startswith("the checker's worker sent something it never sends")
