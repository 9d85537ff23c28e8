"""The SQLite store's tailing: a reader waits in :meth:`Watcher.wait` (the store's ``wait_for_chunks``) until a
chunk at its offset may exist.

An append made through the same store object wakes that run's waiters at once. Appends made by another process
(a worker, while this process is an API server or a dashboard) are noticed by one watcher thread per store:

- it runs only while at least one reader waits, and blocks on a condition otherwise (no CPU at all);
- every ``poll_interval`` (5 ms) it asks a dedicated connection for ``PRAGMA data_version``, which SQLite changes
  whenever another connection, in any process, has committed: one short read of the WAL index, no table read;
- only when that changed, it reads the latest offset of every waited-on run in one query (a primary-key seek per
  run) and wakes the waiters whose offset now exists. Waiters of other runs stay asleep, so a commit to one run
  costs the tails of other runs nothing, and the cost of a quiet tick does not grow with the number of runs;
- a newly registered waiter is checked on the next tick even without a change (a commit may have landed between
  the reader's last read and its registration).

Why this and not something else, measured on 2 shared cores (Python 3.11, SQLite 3.40): a thread that only
sleeps 5 ms in a loop costs ~0.7% of a core in wake-ups alone; ``PRAGMA data_version`` adds ~2.5 us a call
(~0.5% at 200 checks a second), ``os.stat`` of the ``-wal`` file ~1.5 us, no material saving, and an mtime
check can miss a second commit in the same coarse clock tick, while ``data_version`` cannot. inotify is not
in the standard library. The old design, each reader re-reading its run every 50 ms, cost ~9% of a core for
an idle tail of 100 runs and put another process ~25 ms (p95 ~48 ms) behind an append; with the watcher that is
~1.5% (~1.2% of it the tick itself, whatever the number of runs) and ~4 ms (p95 ~6 ms), per
``bench/stream_latency.py`` (bench/README.md).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from tempo_agents.store._waiters import Waiter, wake

__all__ = ["Watcher"]

_log = logging.getLogger("tempo_agents.store.sqlite")

_LATEST_OFFSETS = "SELECT value, (SELECT MAX(seq) FROM journal WHERE run_id = value) FROM json_each(?)"
"""The last offset of each run in a JSON list (one primary-key seek per run; ``IN (...) GROUP BY`` scans every
row of those runs)."""


class Watcher:
    """The readers waiting on one store's runs, and the thread that wakes them for other processes' appends."""

    def __init__(self, path: Path, poll_interval: float) -> None:
        self.path = path
        self.poll_interval = poll_interval
        self._waiters: dict[str, list[Waiter]] = {}
        self._waiters_lock = threading.Lock()
        self._waiters_changed = threading.Condition(self._waiters_lock)
        self._unchecked: set[str] = set()
        """Runs with a waiter the watcher has not checked yet."""
        self._watcher: threading.Thread | None = None
        self.closed = False

    def notify(self, run_id: str) -> None:
        """Wake every waiter of the run (an append made through this store)."""
        with self._waiters_lock:
            waiters = self._waiters.pop(run_id, [])
        wake(waiters)

    async def wait(self, run_id: str, offset: int, timeout: float) -> None:
        """Return once a chunk at ``offset`` may exist in the run, or after ``timeout`` seconds, or at once when
        stopped. The file's tables exist already (the watcher reads the journal)."""
        loop = asyncio.get_running_loop()
        waiter = Waiter(offset, loop, loop.create_future())
        with self._waiters_lock:
            if self.closed:
                return
            self._waiters.setdefault(run_id, []).append(waiter)
            self._unchecked.add(run_id)
            if self._watcher is None:
                self._watcher = threading.Thread(target=self._watch, name="tempo-agents-sqlite-watch", daemon=True)
                self._watcher.start()
            else:
                self._waiters_changed.notify()
        try:
            await asyncio.wait_for(waiter.future, timeout=timeout)
        except TimeoutError:
            pass
        finally:
            with self._waiters_lock:
                remaining = [w for w in self._waiters.get(run_id, []) if w is not waiter]
                if remaining:
                    self._waiters[run_id] = remaining
                else:
                    self._waiters.pop(run_id, None)

    def stop(self) -> threading.Thread | None:
        """Stop the watcher (readers still waiting return at their timeout); returns its thread, to join."""
        with self._waiters_lock:
            self.closed = True
            self._waiters_changed.notify_all()
            return self._watcher

    def _watch(self) -> None:
        """The watcher thread (module docstring): wakes waiters for chunks other connections committed."""
        db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA query_only=ON")
            version: int | None = None
            failing = False
            while True:
                with self._waiters_lock:
                    while not self._waiters and not self.closed:
                        self._waiters_changed.wait()
                    if self.closed:
                        return
                    fresh = self._unchecked
                    if fresh:
                        self._unchecked = set()
                try:
                    current = int(db.execute("PRAGMA data_version").fetchall()[0][0])
                    if current != version:
                        with self._waiters_lock:
                            runs = list(self._waiters)
                    else:
                        runs = list(fresh)
                    version = current
                    if runs:
                        latest = db.execute(_LATEST_OFFSETS, (json.dumps(runs),)).fetchall()
                        self._wake_up_to({run_id: seq for run_id, seq in latest if seq is not None})
                    failing = False
                except sqlite3.Error:
                    # Waiters still return at their timeout and re-read: tailing degrades to polling.
                    level = logging.DEBUG if failing else logging.WARNING
                    _log.log(level, "watching %s for appends failed", self.path, exc_info=True)
                    failing, version = True, None
                time.sleep(self.poll_interval)
        finally:
            db.close()

    def _wake_up_to(self, latest: Mapping[str, int]) -> None:
        """Wake the waiters whose offset is at most their run's latest offset."""
        due: list[Waiter] = []
        with self._waiters_lock:
            for run_id, last in latest.items():
                waiters = self._waiters.get(run_id)
                if not waiters:
                    continue
                keep = [w for w in waiters if w.offset > last]
                if len(keep) == len(waiters):
                    continue
                due += [w for w in waiters if w.offset <= last]
                if keep:
                    self._waiters[run_id] = keep
                else:
                    del self._waiters[run_id]
        wake(due)
