"""The simulation the controller scenarios run in: injected faults, stub models, scenario files.

Apart from the engine because it stands in for a real backend's failures and a real model: the engine
runs against it, and the task, policy and stopping layers never import it.

- ``faults``: declarative fault injection: a stated failure, a stated number of times
- ``executor``: one stub tool attempt in the simulated world, with the declared faults applied
- ``timeline``: the simulated timeline: the user's cancel (the one value a waiting turn asks) and when results land
- ``planners``: stub planner models that decide from what they can see, and a scenario's stub model
- ``scenario_files``: the validated model of a scenario file, and loading it
"""
