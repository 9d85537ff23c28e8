"""A worker for the chaos App, through the real CLI::

    python -m tests.support.chaos.worker --address HOST:PORT --store sqlite:///PATH --task-queue NAME

is ``tempo-agents worker --app tests.support.chaos.app:app ...`` (run from the repository root); with
``$CHAOS_CENSUS_DIR`` set it also reports its asyncio tasks (``task_census.py``).
"""

from __future__ import annotations

import sys

from tempo_agents.cli import main
from tests.support.chaos.task_census import install_from_env

APP_SPEC = "tests.support.chaos.app:app"

if __name__ == "__main__":
    install_from_env()
    main(["worker", "--app", APP_SPEC, *sys.argv[1:]])
