"""The asyncio tasks of a harness subprocess, counted from inside it.

``$CHAOS_CENSUS_DIR`` set: :func:`install_from_env` makes every event loop the process creates (``asyncio.run``
asks the policy) report its number of tasks every :data:`CENSUS_SECONDS` to ``<dir>/<pid>.tasks``, one line
``<unix time> <tasks>`` rewritten in place, and its Python threads by name (their numbers dropped) to
``<dir>/<pid>.threads`` as JSON, so a rising thread count can be named. The count runs on the loop itself (handed
over with ``call_soon_threadsafe``), so it never reads the loop's task set from another thread. ``bench/soak.py``
reads the files next to what ``/proc`` says of each process.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import re
import threading
import time
from pathlib import Path

CENSUS_DIR_ENV = "CHAOS_CENSUS_DIR"
CENSUS_SECONDS = 5.0


def census_path(directory: Path, pid: int) -> Path:
    return directory / f"{pid}.tasks"


def read_census(directory: Path, pid: int) -> int | None:
    """The last task count the process ``pid`` wrote, or ``None`` (no file yet, or not a harness process)."""
    try:
        text = census_path(directory, pid).read_text().split()
    except OSError:
        return None
    return int(text[1]) if len(text) == 2 else None


def read_thread_names(directory: Path, pid: int) -> dict[str, int] | None:
    """The Python threads of the process ``pid`` by name, as it last wrote them, or ``None``."""
    try:
        names = json.loads(census_path(directory, pid).with_suffix(".threads").read_text())
    except (OSError, ValueError):
        return None
    return {str(name): int(count) for name, count in names.items()}


def _replace(path: Path, text: str) -> None:
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(text)
    temporary.replace(path)


def _write(path: Path) -> None:
    _replace(path, f"{time.time():.3f} {len(asyncio.all_tasks())}\n")
    names = collections.Counter(re.sub(r"\d+$", "", thread.name) for thread in threading.enumerate())
    _replace(path.with_suffix(".threads"), json.dumps(dict(sorted(names.items()))))


def _report(loop: asyncio.AbstractEventLoop, path: Path) -> None:
    while not loop.is_closed():
        try:
            loop.call_soon_threadsafe(_write, path)
        except RuntimeError:  # the loop closed between the check and the call
            return
        time.sleep(CENSUS_SECONDS)


class _CensusPolicy(asyncio.DefaultEventLoopPolicy):
    def __init__(self, directory: Path) -> None:
        super().__init__()
        self._directory = directory

    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        loop = super().new_event_loop()
        path = census_path(self._directory, os.getpid())
        threading.Thread(target=_report, args=(loop, path), name="task-census", daemon=True).start()
        return loop


def install_from_env() -> None:
    """Count this process's asyncio tasks when ``$CHAOS_CENSUS_DIR`` names a directory; else nothing."""
    directory = os.environ.get(CENSUS_DIR_ENV)
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        asyncio.set_event_loop_policy(_CensusPolicy(Path(directory)))
