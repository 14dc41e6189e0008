"""Tool results with meaning: schema validation, fault injection, safe error summaries."""

from __future__ import annotations

import pytest

from agentloops.controller import ConfigError, Fault, FaultInjector, Param, ProcessKilled, Toolbox, ToolSpec
from agentloops.controller.sim.executor import call_tool, execute
from agentloops.controller.sim.faults import faults_from
from agentloops.controller.task.world import TOOLS
from agentloops.controller.vocabulary.tools import validate


def test_schema_rejects_before_the_tool_runs():
    spec = TOOLS["get_weather"]
    bad = validate(spec, {"city": 404})
    assert bad is not None and bad.status == "invalid_arguments" and not bad.ran
    assert "city must be a string" in (bad.error or "")
    assert validate(spec, {"city": "Beijing", "unit": "C"}).status == "invalid_arguments"  # type: ignore[union-attr]
    assert validate(spec, {"city": "Beijing"}) is None


def test_a_value_only_the_user_has_is_a_missing_parameter_with_a_question():
    result = validate(TOOLS["lookup_order"], {})
    assert result is not None and result.status == "missing_parameter"
    assert result.parameter == "order_id" and "order id" in (result.question or "")
    bad = validate(TOOLS["lookup_order"], {"order_id": "42"})
    assert bad is not None and (bad.status, bad.parameter) == ("invalid_arguments", "order_id")
    assert "[A-Z]" not in (bad.error or "") and r"[A-Z]-\d{4}" in bad.hint  # the regex is for the model only


def test_a_missing_value_the_model_should_know_is_invalid_arguments():
    assert validate(TOOLS["get_weather"], {}).status == "invalid_arguments"  # type: ignore[union-attr]


def test_an_exception_becomes_a_safe_summary_never_a_traceback():
    def broken(args):
        raise KeyError("/srv/secret/path.py line 42")

    spec = ToolSpec("broken", "breaks", {}, broken, source="svc")
    result = execute(spec, {})
    assert result.status == "permanent_error" and not result.retryable
    assert result.error == "broken failed with an internal error (KeyError)"
    observation = result.observation("broken", {})
    assert "secret" not in str(observation) and "Traceback" not in str(observation)
    assert "secret" in (result.detail or "")  # kept for engineers, in the trace only


@pytest.mark.parametrize(("kind", "status", "retryable"), [
    ("timeout", "timeout", True), ("rate_limited", "rate_limited", True), ("empty", "empty", False),
    ("reject_arguments", "invalid_arguments", False), ("missing_parameter", "missing_parameter", False),
    ("permission_denied", "permission_denied", False), ("not_found", "not_found", False),
    ("permanent_error", "permanent_error", False), ("format_change", "permanent_error", False),
])
def test_each_fault_kind_reports_its_status(kind, status, retryable):
    injector = FaultInjector([Fault(tool="get_weather", kind=kind)])
    result = execute(TOOLS["get_weather"], {"city": "Beijing"}, injector=injector)
    assert (result.status, result.retryable) == (status, retryable)


def test_faults_count_matching_calls_times_and_after():
    injector = FaultInjector([Fault(tool="get_weather", kind="timeout", times=1, after=1, match={"city": "beijing"})])
    spec = TOOLS["get_weather"]
    seen = [execute(spec, {"city": c}, injector=injector).status for c in ["Shanghai", "Beijing", "Beijing", "Beijing"]]
    assert seen == ["ok", "ok", "timeout", "ok"]


def test_slow_duplicate_and_crash_faults():
    slow = execute(TOOLS["fetch"], {"source_id": "s1"}, injector=FaultInjector([{"tool": "fetch", "kind": "slow",
                                                                                  "latency_s": 3.0}]))
    assert slow.ok and slow.latency_s == 3.0
    too_slow = execute(TOOLS["fetch"], {"source_id": "s1"}, injector=FaultInjector([{"tool": "fetch", "kind": "slow",
                                                                                      "latency_s": 99.0}]))
    assert too_slow.status == "timeout" and too_slow.latency_s == TOOLS["fetch"].timeout_s
    duplicate = execute(TOOLS["fetch"], {"source_id": "s1"}, injector=FaultInjector([{"tool": "fetch",
                                                                                       "kind": "duplicate"}]))
    assert duplicate.deliveries == 2
    with pytest.raises(ProcessKilled):
        execute(TOOLS["fetch"], {"source_id": "s1"}, injector=FaultInjector([{"tool": "fetch", "kind": "crash"}]))


def test_the_output_check_catches_a_changed_format():
    result = execute(TOOLS["get_weather"], {"city": "Beijing"},
                     injector=FaultInjector([Fault(tool="get_weather", kind="format_change")]))
    assert result.status == "permanent_error" and "output format changed" in (result.error or "")


def test_a_backend_that_checks_permissions_denies_and_one_that_does_not_is_a_hole():
    refund = call_tool(Toolbox.of([TOOLS["issue_refund"]]), "issue_refund", {"order_id": "A-1042", "amount": 5.0})
    assert refund.status == "permission_denied" and refund.ran
    write = call_tool(Toolbox.of([TOOLS["db_write"]]), "db_write", {"table": "refunds", "values": {"a": 1}})
    assert write.ok  # nothing stops it here: the controller's uniform gate has to


def test_fault_validation_errors_are_one_line():
    with pytest.raises(ConfigError, match=r"^faults\[0\]: kind: expected 'timeout', .*; got 'explode'$"):
        faults_from([{"tool": "get_weather", "kind": "explode"}])
    with pytest.raises(ConfigError, match=r"^faults\[0\]: colour: is not a known field"):
        faults_from([{"tool": "get_weather", "kind": "timeout", "colour": "red"}])


def test_toolbox_rejects_dangling_fallbacks_and_reserved_names():
    with pytest.raises(ConfigError, match="falls back to 'weather_backup', which is not in the toolbox"):
        Toolbox.of([TOOLS["get_weather"]])
    with pytest.raises(ConfigError, match="reserved"):
        Toolbox.of([ToolSpec("ask_user", "x", {}, lambda a: 1)])
    assert "ask_user(question)" in Toolbox.of([TOOLS["fetch"]]).describe()
    assert ToolSpec("t", "d", {"a": Param(), "b": Param(required=False)}, lambda a: 1).signature() == "t(a, [b])"


def test_a_fault_names_any_tool_however_short_but_not_none():
    assert faults_from([{"tool": "x", "kind": "timeout"}])[0].tool == "x"
    with pytest.raises(ConfigError, match="tool"):
        faults_from([{"tool": "", "kind": "timeout"}])
