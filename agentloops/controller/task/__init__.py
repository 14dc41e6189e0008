"""Task and state, the first layer: what the task asks, what is done, what is still missing.

A layer of its own because "done" is a business answer read from state kept outside the transcript,
not the model's say-so; it spends no budget and never reaches into the simulation (``sim``).

- ``tasks``: a task with validated parameters, and the check that says it is done
- ``task_types``: the task-type base (a type is its validated parameters); lookups and actions (weather, order, refund)
- ``reading_tasks``: the reading task types: answer from a document, recall facts, research
- ``world``: the stub tools the shipped task types offer, and the data behind them (no network)
- ``state``: the task state: facts, items done and missing, failures, versions
- ``answers``: a success answer checked against the facts, and replaced when it contradicts them
- ``context``: what each request carries: big outputs kept outside, safe compaction, its size
- ``joins``: when a batch of parallel calls has given the task what it needs (the join rule and stage)
"""
