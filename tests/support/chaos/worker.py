"""A worker for the chaos App, through the real CLI::

    python -m tests.support.chaos.worker --address HOST:PORT --store sqlite:///PATH --task-queue NAME

is ``tempo-agents worker --app tests.support.chaos.app:app ...`` (run from the repository root).
"""

from __future__ import annotations

import sys

from tempo_agents.cli import main

APP_SPEC = "tests.support.chaos.app:app"

if __name__ == "__main__":
    main(["worker", "--app", APP_SPEC, *sys.argv[1:]])
