"""The ``tempo-agents`` command: workers, the embedded dev server, one-off runs and the demo.

Every command prints errors as one line on stderr and exits non-zero (2 for a bad command line
or ``--app``, 1 for anything else); set ``TEMPO_AGENTS_DEBUG=1`` to see tracebacks.
"""

from tempo_agents.cli.main import main

__all__ = ["main"]
