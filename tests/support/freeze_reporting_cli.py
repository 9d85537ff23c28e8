"""The ``tempo-agents`` command, run as ``python -m tests.support.freeze_reporting_cli <command> ...``, saying on
stdout when it sets its start-up objects aside from the collector (``cli/_collector.py``) and how many the collector
then leaves alone: what a test needs to see of a process it cannot look into otherwise."""

from __future__ import annotations

import gc
import sys

import tempo_agents.cli._collector as collector

_freeze = collector.freeze_startup_objects


def _freeze_and_say() -> None:
    _freeze()
    print(f"start-up objects set aside: {gc.get_freeze_count()}", flush=True)


collector.freeze_startup_objects = _freeze_and_say  # before the commands' modules import it

from tempo_agents.cli.main import main  # noqa: E402

if __name__ == "__main__":
    main(sys.argv[1:])
