"""RunTail: one reader of a run's journal per process, handing each new chunk to every stream that follows the run.

However many streams follow a run on one event loop, its tail asks the store for the run's new chunks once (woken
by the store: ``NOTIFY`` on PostgreSQL, the process's own commits or the file watcher on SQLite), parses each chunk
once and appends it to each follower's buffer. It keeps the most recent chunks in a bounded window, so that a
follower that fell a little behind starts again from memory; one further behind reads the store for itself until it
reaches the window. The window holds each chunk as its JSON text, which the garbage collector does not walk: parsed,
a chunk is some five objects it walks, with the event loop stopped, in each of the process's full collections (a
hundred long answers followed at once would keep a million of them). A follower's buffer is bounded too: one that
does not drain it leaves the live hand-out and catches up later from the window or the store, never slowing the
others. The tail stops when its last follower leaves.

A follower may also have a sink: a consumer that takes chunks at once, on the tail's task, while nothing waits in
the follower's buffer (an SSE stream writes them to its client's socket there and then). The tail hands each follower
all the chunks one read of the store brought, in one call: a thousand streams of a run then cost the tail a thousand
calls per read, not a thousand task wake-ups, and when the process falls behind, the chunks committed meanwhile
leave in one write a stream rather than one each, so the cost of catching up falls as the backlog grows. The chunks
the sink leaves (from the first it refuses on), and every chunk after them until the buffer is drained, wait in the
buffer for ``take`` as before.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from weakref import WeakKeyDictionary

from tempo_agents.errors import StoreUnavailableError
from tempo_agents.journal.chunks import Chunk, chunk_from_wire
from tempo_agents.store.base import JournalEntry, Store

__all__ = [
    "FOLLOWER_BUFFER",
    "IDLE_TICK_SECONDS",
    "OUTAGE_PAUSE_SECONDS",
    "PROBE_SHARED_SECONDS",
    "READ_BATCH",
    "TAIL_WINDOW",
    "ChunkSink",
    "RunTail",
    "TailFollower",
    "follow_run",
    "followers_of",
]

READ_BATCH = 1000
TAIL_WINDOW = 2048
"""How many of a run's latest chunks its tail keeps for followers that fell a little behind (the module's docstring)."""
FOLLOWER_BUFFER = 4096
"""How many chunks a follower may hold undrained before it leaves the live hand-out and catches up by itself."""
PROBE_SHARED_SECONDS = 1.0
"""How long the answer of one follower's probe (has the run closed?) answers the other followers' probes too."""
OUTAGE_PAUSE_SECONDS = 0.25
"""After the store gave up on an unreachable database, how long a reader pauses before it asks again."""
IDLE_TICK_SECONDS = 1.0
"""How long a tail waits on the store for a new chunk before it wakes its waiting followers empty-handed (they may
then ask whether the run closed)."""

_compact = json.JSONEncoder(separators=(",", ":")).encode
"""A chunk's wire form as the window keeps it."""

ChunkSink = Callable[[Sequence[Chunk]], int]
"""Takes the first chunks of a run of them at once and says how many (from none to all); the rest wait in the
follower's buffer. Never raises."""


class TailFollower:
    """One stream's place in a run's tail: the chunks handed to it and not yet taken, from ``offset`` on."""

    def __init__(self, tail: RunTail, offset: int) -> None:
        self.offset = offset
        """The offset of the next chunk this follower is to receive."""
        self.sink: ChunkSink | None = None
        """Offered the chunks first while the buffer is empty (the module's docstring)."""
        self.sunk = 0
        """How many chunks the sink took: what ``take`` did not return, though they were handed over."""
        self._tail = tail
        self._buffer: deque[Chunk] = deque()
        self._arrived = asyncio.Event()
        self._joined = False
        """Whether it has followed the hand-out once: until then it reads what came before from the store."""

    def receive(self, chunks: Sequence[Chunk]) -> None:
        """Called by the tail with the new chunks of each read of the store, in offset order (each with its
        offset)."""
        if chunks[0].offset != self.offset:  # it joined within this run of chunks: only those from its offset
            chunks = [chunk for chunk in chunks if chunk.offset is not None and chunk.offset >= self.offset]
            if not chunks:
                return
        if not self._buffer and self.sink is not None:
            taken = self.sink(chunks)
            if taken:
                self.offset = (chunks[taken - 1].offset or 0) + 1
                self.sunk += taken
                if taken == len(chunks):
                    return
                chunks = chunks[taken:]
        for chunk in chunks:
            if len(self._buffer) >= FOLLOWER_BUFFER:  # undrained: leave the hand-out, catch up once drained
                self._tail.detach(self)
                break
            self._buffer.append(chunk)
            self.offset = (chunk.offset or 0) + 1
        self._arrived.set()

    def wake(self) -> None:
        """Wake a waiting ``take`` (an idle tick, or the tail failed)."""
        self._arrived.set()

    async def take(self) -> list[Chunk]:
        """The chunks that arrived since the last call, waiting for one, or for the tail's next idle tick (``[]``:
        nothing was appended for about ``IDLE_TICK_SECONDS``, or the store is out). Raises what stopped the tail (a
        store error other than an outage).

        A follower holds no timer of its own: the tail's one wait on the store times the idle ticks of all its
        followers, so handing a chunk to a thousand followers arms and cancels no timers."""
        if not self._buffer and not self._tail.hands_to(self):
            await self._catch_up()
        if not self._buffer and self._tail.hands_to(self):
            await self._arrived.wait()
        self._arrived.clear()
        if not self._buffer and self._tail.error is not None:
            raise self._tail.error
        taken = list(self._buffer)
        self._buffer.clear()
        return taken

    async def _catch_up(self) -> None:
        """Fill the buffer from the tail's window, or from the store when this follower is behind the window;
        join the live hand-out once caught up. A follower that has not followed the hand-out yet reads everything
        before it from the store: a chunk rewritten in place (a retried step's, under the same key) is read as it
        is now, as a reader of its own would, not as the window kept it."""
        tail = self._tail
        start = tail.window_start if self._joined else tail.next_offset
        if self.offset >= start:
            for chunk in tail.window_from(self.offset):
                self._buffer.append(chunk)
                self.offset = (chunk.offset or 0) + 1
            tail.attach(self)
            self._joined = True
            return
        wanted = min(READ_BATCH, start - self.offset)
        entries = await tail.store.read_chunks(tail.run_id, self.offset, wanted)
        for entry in entries:
            self._buffer.append(chunk_from_wire(entry.chunk, entry.offset))
            self.offset = entry.offset + 1

    async def run_closed(self, probe: Callable[[], Awaitable[str | None]]) -> str | None:
        """The run's closing status (``None`` while it runs), asked once for all the tail's followers that ask
        within ``PROBE_SHARED_SECONDS``."""
        return await self._tail.run_closed(probe)

    def close(self) -> None:
        """Leave the tail (the stream stopped reading); the last follower to leave stops it."""
        self._tail.leave(self)


class RunTail:
    """The one task of an event loop that reads a run's new chunks from the store; see the module's docstring."""

    def __init__(self, store: Store, run_id: str, offset: int, on_stop: Callable[[RunTail], None]) -> None:
        self.store = store
        self.run_id = run_id
        self.next_offset = offset
        """The offset of the next chunk the tail will read."""
        self.error: BaseException | None = None
        self._window: deque[tuple[int, str]] = deque(maxlen=TAIL_WINDOW)
        """The latest chunks as (offset, JSON text of the wire form): see the module's docstring."""
        self._live: set[TailFollower] = set()
        self._members = 0
        self._on_stop = on_stop
        self._probe: asyncio.Future[str | None] | None = None
        self._probed_at = 0.0
        self._task = asyncio.get_running_loop().create_task(self._read(), name=f"tempo-agents-tail-{run_id}")

    @property
    def window_start(self) -> int:
        """The lowest offset the window holds (``next_offset`` when it holds nothing)."""
        return self._window[0][0] if self._window else self.next_offset

    def window_from(self, offset: int) -> Iterable[Chunk]:
        """The window's chunks at ``offset`` and after."""
        return [chunk_from_wire(json.loads(text), at) for at, text in self._window if at >= offset]

    async def run_closed(self, probe: Callable[[], Awaitable[str | None]]) -> str | None:
        """See ``TailFollower.run_closed``."""
        now = time.monotonic()
        if self._probe is None or (self._probe.done() and now - self._probed_at > PROBE_SHARED_SECONDS):
            self._probed_at = now
            self._probe = asyncio.ensure_future(probe())
        return await asyncio.shield(self._probe)

    @property
    def members(self) -> int:
        """How many followers have joined and not left."""
        return self._members

    def join(self, offset: int) -> TailFollower:
        """A new follower of this run from ``offset``."""
        self._members += 1
        return TailFollower(self, offset)

    def attach(self, follower: TailFollower) -> None:
        if self.error is not None:
            follower.wake()
        self._live.add(follower)

    def hands_to(self, follower: TailFollower) -> bool:
        """Whether ``follower`` follows the live hand-out (is handed each new chunk)."""
        return follower in self._live

    def detach(self, follower: TailFollower) -> None:
        self._live.discard(follower)

    def leave(self, follower: TailFollower) -> None:
        self._live.discard(follower)
        self._members -= 1
        if self._members <= 0:
            self._task.cancel()
            self._on_stop(self)

    async def _read(self) -> None:
        try:
            waited = False
            while True:
                try:
                    entries = await self.store.read_chunks(self.run_id, self.next_offset, READ_BATCH)
                    if entries:
                        self._hand_out(entries)
                        if len(entries) == READ_BATCH:
                            continue
                    elif waited:
                        self._tick()
                    await self.store.wait_for_chunks(self.run_id, self.next_offset, timeout=IDLE_TICK_SECONDS)
                    waited = True
                except StoreUnavailableError:  # the store waited for its database already; try again shortly
                    self._tick()
                    await asyncio.sleep(OUTAGE_PAUSE_SECONDS)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # every follower raises it once it has taken what came before
            self.error = error
            self._on_stop(self)  # a follower that comes later starts a new tail
            self._tick()

    def _tick(self) -> None:
        """Wake the live followers with nothing new: the store had nothing for them (the idle tick of ``take``), or
        the tail failed (each then raises ``error``)."""
        for follower in list(self._live):
            follower.wake()

    def _hand_out(self, entries: Sequence[JournalEntry]) -> None:
        chunks = [chunk_from_wire(entry.chunk, entry.offset) for entry in entries]
        self._window.extend((entry.offset, _compact(entry.chunk)) for entry in entries)
        self.next_offset = entries[-1].offset + 1
        for follower in list(self._live):
            follower.receive(chunks)


_tails: WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[int, str], RunTail]] = WeakKeyDictionary()


def follow_run(store: Store, run_id: str, offset: int) -> TailFollower:
    """A follower of ``run_id`` from ``offset``, on the running event loop's tail of that run (started if none)."""
    loop = asyncio.get_running_loop()
    tails = _tails.setdefault(loop, {})
    key = (id(store), run_id)
    tail = tails.get(key)
    if tail is None:

        def stop(stopped: RunTail) -> None:
            if tails.get(key) is stopped:
                del tails[key]

        tail = RunTail(store, run_id, offset, stop)
        tails[key] = tail
    return tail.join(offset)


def followers_of(store: Store, run_id: str) -> int:
    """How many streams on the running event loop follow ``run_id`` in ``store`` (0 when no tail reads it)."""
    tail = _tails.get(asyncio.get_running_loop(), {}).get((id(store), run_id))
    return 0 if tail is None else tail.members
