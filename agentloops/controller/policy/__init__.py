"""Budgets and error policy, the second layer: what the run may still spend, each error's next move.

A layer of its own because both are system limits, not task facts: they are swapped and tuned per
deployment (a policy is a value) while the task and its completion condition stay the same.

- ``budgets``: the seven budgets per task type, each with its basis, and the meter on a simulated clock
- ``error_policy``: the swappable error policy: a tool result in, a route out (``route``)
- ``routes``: the route values the policy returns and the engine dispatches on
"""
