"""Progress and stopping, the third layer: did anything move, and how the run ends.

A layer of its own because "no progress" is neither a task fact nor a spent budget: a repeated
action fingerprint stops a loop before any cap, and every end is one named status.

- ``progress``: the action fingerprint, and the rule that tells a loop from a retry
- ``status``: the stop statuses, each rendered for the user and for the system, with a next step
"""
