"""The PostgreSQL store's tailing: every append ends with ``pg_notify(CHANNEL, '<last offset> <run id>')``.

The notification is sent inside the append's transaction, so it is delivered only after the commit. Each process
keeps one listening connection per database (a :class:`Listener`: a thread, shared by every store object on that
URL) and wakes the readers of that run whose offset now exists; a reader on another host is woken within
milliseconds, and nothing polls. If the listening connection drops, every reader is woken to re-read once it is
back, and meanwhile readers return at their timeout (tailing degrades to polling, never to silence).

A reader that waits right after reading need not ask the store whether a chunk came in between when the listener has
listened since before that read began: every commit after the read is notified to it. The listener remembers, per
run, the last offset notified and when (a sequence number, beside the reader's read in its task's context), so a
notification that arrived between the read and the wait answers the wait at once. Only a reader whose read began
before the listening connection was (re)made asks the store (``latest_offset``), as every reader did before: a
tail's wait then costs no query.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import ClassVar, Literal

import psycopg

from tempo_agents.store._waiters import RecentAppends, Waiter, wake
from tempo_agents.store.postgres.failures import one_line

__all__ = ["CHANNEL", "Listener"]

_log = logging.getLogger("tempo_agents.store.postgres")

CHANNEL = "tempo_agents_journal"
"""The NOTIFY channel of journal appends; the payload is ``'<last offset> <run id>'``."""

_NOTIFY_TIMEOUT = 1.0
"""How often the listening thread looks up from its connection to see whether it should stop."""


class Listener:
    """The one listening connection of this process for a database, and the readers waiting on it.

    A thread with a blocking psycopg connection: it sleeps in ``select`` until a notification arrives (no CPU
    while nothing is appended) and wakes readers on their own event loops, so it serves every store object
    and every event loop of the process alike.
    """

    _instances: ClassVar[dict[str, Listener]] = {}
    """One per database URL, process-wide."""
    _instances_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, url: str, display_url: str) -> None:
        self.url = url
        self.display_url = display_url
        self.ready = threading.Event()
        self._users = 0
        self._stopping = False
        self._lock = threading.Lock()
        self._waiters: dict[str, list[Waiter]] = {}
        self._ready_waiters: list[Waiter] = []
        """Readers waiting for the listening connection to be up (:meth:`until_ready`)."""
        self.notified = RecentAppends()
        """The last offset notified (or appended in this process) per run, in order with readers' reads."""
        self._listening_since: int | None = None
        """The sequence number when the listening connection began to listen (``None`` while it is down)."""
        self._thread = threading.Thread(target=self._listen, name="tempo-agents-pg-listen", daemon=True)

    @classmethod
    def acquire(cls, url: str, display_url: str) -> Listener:
        with cls._instances_lock:
            listener = cls._instances.get(url)
            if listener is None:
                listener = cls._instances[url] = Listener(url, display_url)
                listener._thread.start()
            listener._users += 1
            return listener

    def release(self) -> None:
        with self._instances_lock:
            self._users -= 1
            if self._users == 0:
                self._stopping = True  # the thread leaves within _NOTIFY_TIMEOUT
                if self._instances.get(self.url) is self:
                    del self._instances[self.url]
        if self._stopping:
            self.wake_all()

    async def until_ready(self, timeout: float) -> None:
        """Return once the listening connection is up, or after ``timeout`` seconds (on the caller's loop)."""
        waiter = Waiter.here(0)
        with self._lock:
            self._ready_waiters.append(waiter)
        try:
            if not self.ready.is_set():  # set before the waiter was added: nobody would wake it
                await asyncio.wait_for(waiter.future, timeout=timeout)
        except TimeoutError:
            pass
        finally:
            with self._lock:
                self._ready_waiters = [w for w in self._ready_waiters if w is not waiter]

    def add(self, run_id: str, waiter: Waiter) -> Literal["due", "wait", "check"]:
        """Register ``waiter`` of the run, unless a notification at its offset came after the task's last read of the
        run began (``"due"``: not registered, the chunk is there). ``"wait"``: every commit after that read is or
        will be notified; ``"check"``: the caller asks the store for the run's latest offset first (its read began
        before this connection listened, or is unknown)."""
        read_at = self.notified.read_at(run_id)
        with self._lock:
            if self.notified.answers(run_id, waiter.offset, read_at):
                return "due"
            self._waiters.setdefault(run_id, []).append(waiter)
            listening = self._listening_since
            if listening is not None and listening < read_at and self.notified.forgotten_at < read_at:
                return "wait"
            return "check"

    def remove(self, run_id: str, waiter: Waiter) -> None:
        with self._lock:
            remaining = [w for w in self._waiters.get(run_id, ()) if w is not waiter]
            if remaining:
                self._waiters[run_id] = remaining
            else:
                self._waiters.pop(run_id, None)

    def wake_up_to(self, run_id: str, last: int) -> None:
        """Wake the run's readers whose offset is at most ``last`` (a notification, or an append of this process)."""
        with self._lock:
            self.notified.appended(run_id, last)
            waiters = self._waiters.get(run_id)
            if not waiters:
                return
            due = [w for w in waiters if w.offset <= last]
            if not due:
                return
            keep = [w for w in waiters if w.offset > last]
            if keep:
                self._waiters[run_id] = keep
            else:
                del self._waiters[run_id]
        wake(due)

    def wake_all(self) -> None:
        """Wake every reader: those waiting for a chunk, and those waiting for the connection to be up."""
        with self._lock:
            due = [w for waiters in self._waiters.values() for w in waiters]
            self._waiters.clear()
            due += self._ready_waiters
        wake(due)

    def _listen(self) -> None:
        delay = 0.1
        failing = False
        while not self._stopping:
            try:
                with psycopg.connect(self.url, autocommit=True, connect_timeout=10) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    with self._lock:
                        self._listening_since = self.notified.next()
                    self.ready.set()
                    delay, failing = 0.1, False
                    self.wake_all()  # anything committed while nobody listened: every reader re-reads
                    while not self._stopping:
                        for notify in conn.notifies(timeout=_NOTIFY_TIMEOUT):
                            last, _, run_id = notify.payload.partition(" ")
                            if last.lstrip("-").isdigit():  # anything else on the channel is not ours
                                self.wake_up_to(run_id, int(last))
            except psycopg.Error as error:
                with self._lock:
                    self._listening_since = None
                self.ready.clear()
                if self._stopping:
                    return
                # Readers still return at their timeout and re-read: tailing degrades to polling meanwhile.
                _log.log(
                    logging.DEBUG if failing else logging.WARNING,
                    "listening to %s for appends failed (retrying): %s",
                    self.display_url,
                    one_line(error),
                )
                failing = True
                time.sleep(delay)
                delay = min(delay * 2, 1.0)  # back within a second of the database, whatever the outage's length
