"""What drives the engine: run a scenario, resume a saved run, replay a trace.

Above the engine because each of these starts a run again; persistence's readers and writers, and
the simulated world, sit below it.

- ``scenarios``: a scenario run, checked against its expected stop
- ``resuming``: resume a task that waits for the user, from its saved state, once
- ``replaying``: replay a trace under another policy, and diff the trajectories
"""
