"""``python -m agentloops``: the same command as the ``agentloops`` script."""

from agentloops.cli import main

raise SystemExit(main())
