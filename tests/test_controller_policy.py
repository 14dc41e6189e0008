"""The error policy as a pure function, and as a swappable value."""

from __future__ import annotations

import pytest

from agentloops.controller import (
    DEFAULT_POLICY,
    DEGRADE_POLICY,
    NAIVE_POLICY,
    ConfigError,
    ErrorPolicy,
    RouteContext,
    ToolResult,
    ToolSpec,
    resolve_policy,
    route,
    routing_table,
)
from agentloops.controller.policy.error_policy import (
    Accept,
    AcceptNotFound,
    AskUser,
    Degrade,
    Fallback,
    Repair,
    Retry,
    ReturnToModel,
    StopRun,
)

READ = ToolSpec("read", "", {}, lambda a: 1, backend="svc-a", fallback="backup")
BACKUP = ToolSpec("backup", "", {}, lambda a: 1, backend="svc-b")
MIRROR = ToolSpec("mirror", "", {}, lambda a: 1, backend="svc-a")
WRITE = ToolSpec("write", "", {}, lambda a: 1, side_effects=True)


def result(status: str, **kw) -> ToolResult:
    return ToolResult(status, retryable=status in ("timeout", "rate_limited"), error=f"({status})", **kw)  # type: ignore[arg-type]


def test_transient_failures_retry_with_backoff_then_fall_back_then_stop():
    assert route(DEFAULT_POLICY, result("timeout"), RouteContext(READ, 1, 3, BACKUP)) == Retry(
        1.0, "timeout is transient and read has no side effects")
    assert isinstance(route(DEFAULT_POLICY, result("timeout"), RouteContext(READ, 2, 2, BACKUP)), Fallback)
    stop = route(DEFAULT_POLICY, result("timeout"), RouteContext(READ, 1, 0, BACKUP))
    assert isinstance(stop, StopRun) and (stop.status, stop.budget) == ("budget_exhausted", "retries")
    assert isinstance(route(DEGRADE_POLICY, result("timeout"), RouteContext(READ, 1, 0, BACKUP)), Degrade)
    assert [DEFAULT_POLICY.backoff(n) for n in (1, 2, 3, 4, 5)] == [1.0, 2.0, 4.0, 8.0, 8.0]


def test_a_fallback_on_the_same_backend_is_not_a_fallback():
    decision = route(DEFAULT_POLICY, result("timeout"), RouteContext(READ, 2, 2, MIRROR))
    assert isinstance(decision, Retry)  # a new name on the same failing service fixes nothing
    assert isinstance(route(NAIVE_POLICY, result("timeout"), RouteContext(READ, 3, 2, MIRROR)), Fallback)


def test_side_effects_are_never_retried_blindly():
    decision = route(DEFAULT_POLICY, result("timeout"), RouteContext(WRITE, 1, 3))
    assert isinstance(decision, StopRun) and decision.status == "handed_off"
    assert isinstance(route(NAIVE_POLICY, result("timeout"), RouteContext(WRITE, 1, 3)), Retry)


def test_the_side_effect_rule_comes_before_handing_a_timeout_back_to_the_model():
    # handing it back would invite the model to repeat the write: a person must check first
    hands_back = DEFAULT_POLICY.model_copy(update={"transient": "return_to_model"})
    decision = route(hands_back, result("timeout"), RouteContext(WRITE, 1, 3))
    assert isinstance(decision, StopRun) and (decision.status, decision.code) == (
        "handed_off", "unknown_outcome_side_effect")
    assert isinstance(route(hands_back, result("timeout"), RouteContext(READ, 1, 3)), ReturnToModel)


@pytest.mark.parametrize("fallback", [
    ToolSpec("backup_write", "", {}, lambda a: 1, backend="svc-b", side_effects=True),
    ToolSpec("backup_admin", "", {}, lambda a: 1, backend="svc-b", capability="admin"),
    ToolSpec("backup_risky", "", {}, lambda a: 1, backend="svc-b", risk="high"),
], ids=["side-effects", "ungranted-capability", "high-risk"])
def test_a_fallback_that_would_need_approval_is_never_chosen(fallback):
    for status, ctx in (("timeout", RouteContext(READ, 2, 2, fallback)),
                        ("permanent_error", RouteContext(READ, 1, 3, fallback)),
                        ("empty", RouteContext(READ, 1, 3, fallback))):
        assert not isinstance(route(DEFAULT_POLICY, result(status), ctx), Fallback), status
    if fallback.capability:  # granted, it is an ordinary independent fallback
        granted = RouteContext(READ, 1, 3, fallback, granted=frozenset({"admin"}))
        assert isinstance(route(DEFAULT_POLICY, result("permanent_error"), granted), Fallback)


def test_invalid_arguments_repair_once_then_stop():
    assert isinstance(route(DEFAULT_POLICY, result("invalid_arguments"), RouteContext(READ, repairs_used=0)), Repair)
    stop = route(DEFAULT_POLICY, result("invalid_arguments"), RouteContext(READ, repairs_used=1))
    assert isinstance(stop, StopRun) and stop.code == "invalid_arguments_repeated"


def test_missing_parameters_go_to_the_user_with_the_question():
    decision = route(DEFAULT_POLICY, result("missing_parameter", question="Which order?", parameter="order_id"),
                     RouteContext(READ))
    assert decision == AskUser("Which order?", "order_id", "only the user can supply it; guessing spreads errors")
    assert isinstance(route(NAIVE_POLICY, result("missing_parameter"), RouteContext(READ)), ReturnToModel)


def test_empty_is_an_answer_only_where_the_task_allows_it():
    assert isinstance(route(DEFAULT_POLICY, result("empty"), RouteContext(READ, allows_not_found=True)),
                      AcceptNotFound)
    assert isinstance(route(DEFAULT_POLICY, result("empty"), RouteContext(READ, retries_left=3, fallback=BACKUP)),
                      Fallback)
    assert isinstance(route(DEFAULT_POLICY, result("empty"), RouteContext(READ, retries_left=3)), Degrade)


def test_permission_denied_stops_and_is_never_routed_around():
    for fallback in (None, BACKUP):
        stop = route(DEFAULT_POLICY, result("permission_denied"), RouteContext(READ, 1, 3, fallback))
        assert isinstance(stop, StopRun) and (stop.status, stop.code) == ("failed_unrecoverable", "permission_denied")
    handoff = route(DEGRADE_POLICY, result("permission_denied"), RouteContext(READ))
    assert isinstance(handoff, StopRun) and handoff.status == "handed_off"


def test_not_found_and_permanent_errors():
    assert isinstance(route(DEFAULT_POLICY, result("not_found"), RouteContext(READ)), Degrade)
    assert isinstance(route(DEGRADE_POLICY, result("not_found"), RouteContext(READ)), AskUser)
    assert isinstance(route(DEFAULT_POLICY, result("permanent_error"), RouteContext(READ, 1, 3, BACKUP)), Fallback)
    assert isinstance(route(DEFAULT_POLICY, result("permanent_error"), RouteContext(READ, 1, 3)), Degrade)
    assert route(DEFAULT_POLICY, result("ok"), RouteContext(READ)) == Accept()


def test_routing_table_is_computed_from_route():
    table = routing_table("default")
    rows = {(r[0], r[2]): r[3] for r in table.rows}
    assert rows[("timeout", "retry budget spent")] == "stop:budget_exhausted"
    assert rows[("permission_denied", "")] == "stop:failed_unrecoverable"
    assert rows[("empty", "task accepts 'not found'")] == "accept_not_found"
    assert rows[("permanent_error", "fallback needs a permission the caller lacks")] == "degrade"
    naive = {(r[0], r[2]): r[3] for r in routing_table("naive").rows}
    assert naive[("permission_denied", "")] == "return_to_model"


def test_policies_resolve_from_names_dicts_and_values():
    assert resolve_policy(None) is DEFAULT_POLICY and resolve_policy("naive") is NAIVE_POLICY
    custom = resolve_policy({"name": "mine", "attempts_per_tool": 3})
    assert isinstance(custom, ErrorPolicy) and custom.attempts_per_tool == 3
    with pytest.raises(ConfigError, match=r"^unknown policy 'strict'; expected one of: default, naive, degrade$"):
        resolve_policy("strict")
    with pytest.raises(ConfigError, match=r"^policy: attempts_per_tool: expected greater than 0; got 0$"):
        resolve_policy({"attempts_per_tool": 0})
    with pytest.raises(ConfigError, match=r"^policy must be a name"):
        resolve_policy(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="frozen"):
        DEFAULT_POLICY.attempts_per_tool = 5  # type: ignore[misc]


def test_backoff_reaches_its_cap_instead_of_overflowing_on_a_long_run_of_attempts():
    assert DEFAULT_POLICY.backoff(1) == DEFAULT_POLICY.backoff_base_s
    assert DEFAULT_POLICY.backoff(5000) == DEFAULT_POLICY.backoff_max_s  # 2.0 ** 4999 overflows a float


def test_with_no_retry_budget_the_tools_own_attempts_bound_a_persistent_failure():
    limit = DEFAULT_POLICY.attempts_per_tool
    lone = ToolSpec("lone", "", {}, lambda a: 1)  # no fallback to switch to
    assert isinstance(route(DEFAULT_POLICY, result("timeout"), RouteContext(lone, limit - 1, None)), Retry)
    assert isinstance(route(DEFAULT_POLICY, result("timeout"), RouteContext(lone, limit, None)), Degrade)
    # with a shared budget on, that budget decides (the task layer), not the tool's attempts
    assert isinstance(route(DEFAULT_POLICY, result("timeout"), RouteContext(lone, limit, 3)), Retry)


def test_the_default_policy_answers_one_premature_claim_and_stops_after_three_idle_or_failed_turns():
    # the article's numbers; the boundary tests read them from the policy, so they are pinned here
    for policy in (ErrorPolicy(), DEFAULT_POLICY):
        assert (policy.premature_claims, policy.idle_turns, policy.max_consecutive_failures) == (1, 3, 3)


def test_a_one_letter_policy_name_is_a_name():
    assert resolve_policy({"name": "x"}).name == "x"


def test_a_first_invalid_argument_slip_is_repaired_by_default():
    assert isinstance(route(DEFAULT_POLICY, result("invalid_arguments"), RouteContext(READ)), Repair)


def test_the_last_retry_of_the_budget_is_still_a_retry():
    assert isinstance(route(DEFAULT_POLICY, result("timeout"), RouteContext(READ, 1, 1)), Retry)
    assert isinstance(route(DEFAULT_POLICY, result("timeout"), RouteContext(READ, 1, 0.5)), StopRun)
    assert isinstance(route(NAIVE_POLICY, result("empty"), RouteContext(READ, 1, 1)), Retry)


def test_an_empty_result_under_each_empty_rule():
    handed_back = DEFAULT_POLICY.model_copy(update={"empty": "return_to_model"})
    assert isinstance(route(handed_back, result("empty"), RouteContext(READ, 1, 3, BACKUP)), ReturnToModel)
    assert isinstance(route(NAIVE_POLICY, result("empty"), RouteContext(READ, 1, 3)), Retry)
    assert isinstance(route(NAIVE_POLICY, result("empty"), RouteContext(READ, 1, 0)), Degrade)


def test_each_routing_table_row_shows_the_situation_it_names():
    for policy in (DEFAULT_POLICY, NAIVE_POLICY):
        rows = {(r[0], r[2]): (r[3], r[4]) for r in routing_table(policy).rows}
        n = policy.attempts_per_tool
        assert rows[("timeout", "1st attempt, retries left")][0] == "retry"
        assert rows[("timeout", f"{n} attempts on this tool")] == ("fallback", f"read_tool failed {n}× (timeout); switching")
        assert rows[("invalid_arguments", "first time")][0] == "repair"
    default = {(r[0], r[2]): (r[3], r[4]) for r in routing_table(DEFAULT_POLICY).rows}
    assert default[("invalid_arguments", "after one repair")] == (
        "stop:failed_unrecoverable", "invalid arguments again after 1 repair(s): (invalid_arguments)")
