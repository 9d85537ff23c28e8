"""The SQLite store's tailing: a reader waits in :meth:`Watcher.wait` (the store's ``wait_for_chunks``) until a
chunk at its offset may exist.

An append made through the same store object wakes that run's waiters at once. Appends made by another process
(a worker, while this process is an API server or a dashboard) are noticed by one watcher thread per store:

- it runs only while at least one reader waits, and blocks on a condition otherwise (no CPU at all);
- every ``poll_interval`` (5 ms) it asks its probe connection for ``PRAGMA data_version``, which SQLite changes
  whenever another connection, in any process, has committed: one short read of the WAL index, no table read;
- only when another process committed, it reads the latest offset of every waited-on run in one query (a
  primary-key seek per run) and wakes the waiters whose offset now exists. Waiters of other runs stay asleep, so a
  commit to one run costs the tails of other runs nothing, and the cost of a quiet tick does not grow with the
  number of runs;
- a newly registered waiter is checked on the next tick even without a change when another process committed
  since its reader's last read began (the commit may have landed between that read and the registration).

Telling this process's commits from other processes' keeps a busy process from paying for its own writes (its own
appends wake their readers already): the probe changes on every commit, so after each job of the store's writer
thread, the probe's version is marked as this process's, and the writer's own connection, whose ``data_version``
changes only for other connections' commits, says whether another process committed before that mark. A tick
whose version is the mark, with nothing flagged, saw only this process's commits. A reader that waits right
after reading is also told at once when this process appended at its offset since that read began (remembered per
run, beside the reader's read in its task's context), where a commit between the read and the registration would
otherwise wait for the reader's timeout.

Why this and not something else, measured on 2 shared cores (Python 3.11, SQLite 3.40): a thread that only
sleeps 5 ms in a loop costs ~0.7% of a core in wake-ups alone; ``PRAGMA data_version`` adds ~2.5 us a call
(~0.5% at 200 checks a second), ``os.stat`` of the ``-wal`` file ~1.5 us, no material saving, and an mtime
check can miss a second commit in the same coarse clock tick, while ``data_version`` cannot. inotify is not
in the standard library. The old design, each reader re-reading its run every 50 ms, cost ~9% of a core for
an idle tail of 100 runs and put another process ~25 ms (p95 ~48 ms) behind an append; with the watcher that is
~1.5% (~1.2% of it the tick itself, whatever the number of runs) and ~4 ms (p95 ~6 ms), per
``bench/stream_latency.py`` (bench/README.md). Before the watcher told its own process's commits apart, a busy
``tempo-agents dev`` (20 clients) queried on nearly every tick: ~8 ms of CPU a run (bench/README.md,
``vs_reference.py``).
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

from tempo_agents.store._waiters import RecentAppends, Waiter, wake

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
        self._unchecked: dict[str, int] = {}
        """Runs with a waiter the watcher has not checked yet: the earliest sequence their readers' reads began at."""
        self.written = RecentAppends()
        """The last offset this process appended per run, in order with readers' reads and the ticks that saw
        another process's commit."""
        self._foreign_seen = 0
        """The sequence number of the last tick that saw another process's commit."""
        self._probe_lock = threading.Lock()
        self._probe: sqlite3.Connection | None = None
        self._own_mark: int | None = None
        """The probe's version right after this process's latest write."""
        self._writer_version: int | None = None
        self._foreign = True
        """Whether the writer saw another process's commit the watcher may not have (at first: unknown, so yes)."""
        self._watcher: threading.Thread | None = None
        self.closed = False

    def notify(self, run_id: str, last_offset: int) -> None:
        """Wake every waiter of the run (an append made through this store, up to ``last_offset``)."""
        with self._waiters_lock:
            self.written.appended(run_id, last_offset)
            waiters = self._waiters.pop(run_id, [])
        wake(waiters)

    async def wait(self, run_id: str, offset: int, timeout: float) -> None:
        """Return once a chunk at ``offset`` may exist in the run, or after ``timeout`` seconds, or at once when
        stopped or when this process appended at ``offset`` since the task's last read of the run began. The
        file's tables exist already (the watcher reads the journal)."""
        read_at = self.written.read_at(run_id)
        loop = asyncio.get_running_loop()
        waiter = Waiter(offset, loop, loop.create_future())
        with self._waiters_lock:
            if self.closed or self.written.answers(run_id, offset, read_at):
                return
            self._waiters.setdefault(run_id, []).append(waiter)
            self._unchecked[run_id] = min(read_at, self._unchecked.get(run_id, read_at))
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

    def after_own_writes(self, writer: sqlite3.Connection) -> None:
        """Mark the probe's version as this process's, after a job of the store's writer thread (on that thread,
        with its connection); flag another process's commit that the writer's connection saw before the mark."""
        with self._probe_lock:
            if self.closed:
                return
            try:
                mark = self._probe_version()
                seen = int(writer.execute("PRAGMA data_version").fetchone()[0])
            except sqlite3.Error:  # the writer's job is done: the watcher treats the change as another process's
                self._foreign, self._writer_version = True, None
                return
            if seen != self._writer_version:
                self._foreign = True
            self._writer_version, self._own_mark = seen, mark

    def stop(self) -> threading.Thread | None:
        """Stop the watcher (readers still waiting return at their timeout); returns its thread, to join."""
        with self._waiters_lock:
            self.closed = True
            self._waiters_changed.notify_all()
            return self._watcher

    def close(self) -> None:
        """Close the probe, once the watcher thread has ended (after :meth:`stop`)."""
        with self._probe_lock:
            if self._probe is not None:
                self._probe.close()
                self._probe = None

    def _probe_version(self) -> int:
        """The probe's ``data_version`` (the caller holds ``_probe_lock``)."""
        return int(self._probed().execute("PRAGMA data_version").fetchone()[0])

    def _probed(self) -> sqlite3.Connection:
        """The probe connection, read by the watcher thread and the writer thread in turn (under ``_probe_lock``)."""
        if self._probe is None:
            self._probe = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            self._probe.execute("PRAGMA query_only=ON")
        return self._probe

    def _watch(self) -> None:
        """The watcher thread (module docstring): wakes waiters for chunks other processes committed."""
        version: int | None = None
        failing = False
        while True:
            with self._waiters_lock:
                while not self._waiters and not self.closed:
                    self._waiters_changed.wait()
                if self.closed:
                    return
            try:
                version = self._tick(version)
                failing = False
            except sqlite3.Error:
                # Waiters still return at their timeout and re-read: tailing degrades to polling.
                level = logging.DEBUG if failing else logging.WARNING
                _log.log(level, "watching %s for appends failed", self.path, exc_info=True)
                failing, version, self._foreign = True, None, True
            time.sleep(self.poll_interval)

    def _tick(self, version: int | None) -> int:
        """One check of the file: wake the waiters another process's commits are for; returns the probe's version."""
        with self._probe_lock:
            current = self._probe_version()
            foreign = self._foreign or (current != version and current != self._own_mark)
            self._foreign = False
        with self._waiters_lock:
            if foreign:
                self._foreign_seen = self.written.next()
                runs = list(self._waiters)
            else:  # a waiter whose reader read before another process's last commit may have missed it
                runs = [run_id for run_id, read_at in self._unchecked.items() if read_at < self._foreign_seen]
            self._unchecked = {}
        if runs:
            with self._probe_lock:
                latest = self._probed().execute(_LATEST_OFFSETS, (json.dumps(runs),)).fetchall()
            self._wake_up_to({run_id: seq for run_id, seq in latest if seq is not None})
        return current

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
