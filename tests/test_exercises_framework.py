"""q.check() / q.hint() / q.solution(), the registry and the session's progress summary."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agentloops.errors import UsageError
from agentloops.exercises import progress, session
from agentloops.exercises.exercise import is_stub
from agentloops.exercises.registry import SETS, all_exercises, get_exercise, register
from agentloops.exercises.stopping import q1, q3
from agentloops.scenario import scenario_names


@pytest.fixture(autouse=True)
def _fresh():
    session.reset()
    q1._hints_shown = 0
    yield
    session.reset()
    q1._hints_shown = 0


def test_stubs_are_not_attempted_but_real_code_is() -> None:
    def dots(response):
        ...

    def documented(response):
        """Nothing yet."""

    def passes(response):
        pass

    def answers(response):
        return "retry"

    def returns_none(response):
        value = None
        return value

    assert is_stub(dots) and is_stub(documented) and is_stub(passes)
    assert not is_stub(answers) and not is_stub(returns_none) and not is_stub(len)


@pytest.mark.parametrize("answer", [..., None, lambda response: None])
def test_nothing_written_yet_is_not_attempted(answer: object) -> None:
    result = q1.judge(answer)
    assert result.status == "not attempted" and not result.cases
    assert result.message == "write stop_criterion(response) in the cell above, run it, then run this check again"


def test_check_finds_the_function_by_name_in_the_notebook() -> None:
    namespace = {"q1": q1}
    exec("missing = q1.check()", namespace)
    assert namespace["missing"].status == "not attempted"
    exec("def stop_criterion(response):\n    return not response.tool_calls\nfound = q1.check()", namespace)
    shipped = len(scenario_names(["article", "extra"]))  # one case per shipped core scenario
    assert namespace["found"].status == "incorrect" and len(namespace["found"].cases) == shipped >= 8


def test_check_records_progress_and_passed_stays_passed() -> None:
    q1.check(q1.reference())
    q1.check(lambda response: "oops")
    entry = session.entry(q1.id)
    assert (entry.last, entry.passed, entry.checks) == ("incorrect", True, 2)
    assert progress.rows("stopping")[0][2] == "passed earlier; the latest check did not"


@pytest.mark.parametrize(("answer", "message"), [
    (42, "stop_criterion should be a function, stop_criterion(response); it is int (42)"),
    (lambda response, extra: True, "stop_criterion is called as stop_criterion(response), but yours takes "
                                   "(response, extra); give it exactly 1 parameter"),
    (lambda: True, "stop_criterion is called as stop_criterion(response), but yours takes (); give it exactly 1 "
                   "parameter"),
])
def test_a_wrong_shape_is_explained_before_anything_runs(answer: object, message: str) -> None:
    result = q1.judge(answer)
    assert result.status == "incorrect" and result.message == message and not result.cases
    assert result.hint == "Stuck? q1.hint() gives a hint; q1.solution() shows one solution."


def test_the_hint_ladder_climbs_then_repeats_its_last_rung() -> None:
    titles = [q1.hint().title for _ in range(len(q1.hints) + 1)]
    assert titles == [f"Hint {i}/{len(q1.hints)}" for i in range(1, len(q1.hints) + 1)] + [
        f"Hint {len(q1.hints)}/{len(q1.hints)}"]
    assert "True/False cannot say" in q1.hints[0] and "al.Abort('truncated'" in q1.hints[-1]


def test_the_solution_shows_the_reference_source_and_is_noted() -> None:
    note = q3.solution()
    assert note.code.startswith("def count_wasted(rounds: tuple[LoggedCall, ...]) -> int:")
    assert session.entry(q3.id).solution_viewed
    assert progress.rows("stopping")[3][4] == "yes"


def test_every_exercise_is_registered_in_order_with_a_unique_variable() -> None:
    exercises = all_exercises()
    assert [(e.set_name, e.number) for e in exercises] == [
        *(("part1", n) for n in range(1, 6)), *(("stopping", n) for n in (1, 2, 2, 3)),
        *(("controlling", n) for n in (4, 5, 6)), *(("building", n) for n in range(7, 15))]
    assert len({e.variable for e in exercises}) == len(exercises)
    assert {e.set_name for e in exercises} == set(SETS)
    assert get_exercise("wasted-calls") is q3
    with pytest.raises(UsageError, match="unknown exercise 'nope'; expected one of: split-the-tests"):
        get_exercise("nope")
    with pytest.raises(UsageError, match="unknown exercise set 'extra'; expected one of: part1, stopping, controlling"):
        all_exercises("extra")


def test_the_registry_collects_the_exercises_a_set_module_defines_and_refuses_a_clash() -> None:
    """An exercise knows nothing of the registry: ``load_all`` collects those at a set module's top level; one
    built elsewhere is not listed; a registered exercise of an unknown set, or a second one under a taken id,
    is refused; the same one again is not a clash."""
    elsewhere = replace(q1, id="built-elsewhere")
    assert elsewhere.id not in {e.id for e in all_exercises()}
    assert register(q1) is q1
    with pytest.raises(UsageError, match="exercise 'q-extra': unknown set 'extra'; expected one of: part1, stopping"):
        register(replace(q1, id="q-extra", set_name="extra"))
    with pytest.raises(UsageError, match="exercise id 'stop-criterion' is registered twice"):
        register(replace(q1))
    assert get_exercise(q1.id) is q1


def test_the_progress_text_names_what_remains() -> None:
    q1.check(q1.reference())
    q3.check(lambda rounds: "x")
    text = progress.progress_text("stopping")
    assert text.startswith("Progress this session: 1 of 4 passed (remaining: q2, q2b, q3)")
    assert [line.split()[:1] for line in text.splitlines()[3:]] == [["q1"], ["q2"], ["q2b"], ["q3"]]
    assert "not yet" in text.splitlines()[6] and "to do" in text.splitlines()[4]


def test_the_summary_widget_redraws_itself_after_each_check() -> None:
    widget = progress.summary("stopping")
    assert "0 of 4 passed" in widget.view.value
    q1.check(q1.reference())
    assert "1 of 4 passed" in widget.view.value
    assert widget._repr_mimebundle_()["text/plain"].startswith("Progress this session: 1 of 4 passed")
    assert "agentloops-progress" in widget._dom_classes
    widget.close()
    with pytest.raises(UsageError, match="unknown exercise set"):
        progress.summary("nope")


def test_a_checker_failure_is_reported_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    import agentloops.exercises.exercise as exercise_module

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("pipe closed")

    monkeypatch.setattr(exercise_module, "run_cases", broken)
    result = q1.judge(q1.reference())
    assert result.status == "incorrect"
    assert result.message == ("the checker itself failed (RuntimeError: pipe closed); this is not your fault — "
                              "please report it")
