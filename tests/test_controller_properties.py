"""Properties of the one tool-call path: a call's fate does not depend on the company it travels in.

(No budget is exceeded: ``test_controller_budgets.py``; no finished task is reopened by a late or
duplicate event: ``test_controller_parallel.py``.)
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentloops.controller import Controller, ControllerRun, Fault, TaskPlanner, make_task

KINDS = ("timeout", "rate_limited", "permanent_error", "empty", "not_found", "format_change")

faults = st.lists(
    st.tuples(st.sampled_from(("get_weather", "weather_backup")), st.sampled_from(KINDS),
              st.one_of(st.none(), st.integers(1, 3))),
    max_size=3,
).map(lambda drawn: [Fault(tool=tool, kind=kind, times=times, match={"city": "Beijing"})  # type: ignore[arg-type]
                     for tool, kind, times in drawn])

policies = st.sampled_from(("default", "degrade", {"name": "no-fallback", "use_fallback": False},
                            {"name": "patient", "attempts_per_tool": 3}))


def fate(run: ControllerRun, city: str) -> dict[str, Any]:
    """What happened to ``city``'s call: its attempts, its fact or the reason it is missing."""
    item = f"weather:{city}"
    attempts = [(a["kind"], a["tool"], a["status"], a["route"]) for t in run.turns for a in t.actions
                if a.get("args") and a["args"].get("city") == city]
    fact = next((f.summary for f in run.stop.facts if f.item == item), None)
    return {"attempts": attempts, "fact": fact, "missing": dict(run.stop.missing).get(item)}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(faults, policies)
def test_a_call_is_settled_the_same_alone_or_in_a_parallel_batch(drawn: list[Fault], policy: Any):
    task = make_task("weather_compare", cities=["Shanghai", "Beijing"])
    alone = Controller(task, TaskPlanner(task), faults=drawn, policy=policy).run()
    batched = Controller(task, TaskPlanner(task, parallel=True), faults=drawn, policy=policy).run()
    assert fate(alone, "Beijing") == fate(batched, "Beijing")
    assert alone.usage["retries"] == batched.usage["retries"]
    assert alone.status == batched.status
