"""Persistence, beside the three layers: what a run leaves behind, and how it is read back.

Apart from the layers because a run must be stoppable, resumable and replayable without the engine
knowing where its lines go: one versioned run state is cut into trace lines, saved files and results.

- ``trace``: the JSON Lines trace, one line per turn, written as the turn finishes, and read back
- ``trace_lines``: the start line, an action, the event, resume and stop lines (a turn is a ``TurnRecord``)
- ``run_state``: the one versioned run state the other views are cut from, made of the runtime's own records
- ``saved``: a saved run: what a paused task needs to continue later, in another process
- ``result``: the result of a run, readable as text, HTML and frames

Resuming and replaying, which run the engine again, sit above it in ``running``.
"""
