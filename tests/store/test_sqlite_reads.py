"""The SQLite store's journal reads: a tail's short read runs on the event loop's own thread, the bulk of a long one
on the reader thread, and a read the event loop's connection cannot make at once is made on the reader thread."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import tempo_agents.streams.run_tail as run_tail_module
from tempo_agents.journal.chunks import Chunk
from tempo_agents.store import ChunkWrite, SQLiteStore
from tempo_agents.store.sqlite.journal_reads import READ_HERE_ROWS
from tempo_agents.streams import AgentStream

LONG = 30.0


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    store = SQLiteStore(tmp_path / "reads.db")
    yield store
    await store.close()


async def append(store: SQLiteStore, run_id: str, count: int) -> None:
    await store.append_chunks(run_id, [ChunkWrite({"type": "text-delta", "payload": {"n": n}}) for n in range(count)])


def open_files(path: Path) -> list[str]:
    """This process's open descriptors of the database file, its WAL and its shared memory."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(path)):
            found.append(target)
    return found


async def test_a_read_longer_than_one_read_here_returns_every_chunk_once_in_order(store: SQLiteStore) -> None:
    await append(store, "long", 3 * READ_HERE_ROWS + 5)
    await append(store, "other", 10)

    whole = await store.read_chunks("long", 0, 1000)
    assert [e.offset for e in whole] == list(range(3 * READ_HERE_ROWS + 5))
    assert [e.chunk["payload"]["n"] for e in whole] == list(range(3 * READ_HERE_ROWS + 5))

    middle = await store.read_chunks("long", 7, READ_HERE_ROWS + 3)
    assert [e.offset for e in middle] == list(range(7, 7 + READ_HERE_ROWS + 3))
    exactly = await store.read_chunks("long", 1, READ_HERE_ROWS)
    assert [e.offset for e in exactly] == list(range(1, 1 + READ_HERE_ROWS))
    assert await store.read_chunks("long", 3 * READ_HERE_ROWS + 5) == []
    assert [e.offset for e in await store.read_chunks("other", 8, 1000)] == [8, 9]


async def test_a_read_the_event_loops_connection_cannot_make_is_made_on_the_reader_thread(
    store: SQLiteStore,
) -> None:
    await append(store, "r", 3)
    await store.read_chunks("r")  # the event loop's thread has its connection now
    here = store._db.read_here(lambda db: db)
    # SQLite aborts the next statement on this connection, as it does a read it cannot make at once (busy): the
    # store must read on its reader thread instead of failing the tail.
    aborted: list[int] = []

    def abort() -> int:
        aborted.append(1)
        return 1

    here.set_progress_handler(abort, 1)
    try:
        entries = await store.read_chunks("r")
    finally:
        here.set_progress_handler(None, 1)
    assert aborted, "the read did not run on the event loop's connection first"
    assert [e.chunk["payload"]["n"] for e in entries] == [0, 1, 2]
    assert [e.offset for e in await store.read_chunks("r", 1)] == [1, 2]  # and on it again, once it can


async def test_closing_the_store_closes_the_connections_every_thread_read_on(tmp_path: Path) -> None:
    path = tmp_path / "closed.db"
    store = SQLiteStore(path)
    await append(store, "r", 2)

    def read_on_another_loop() -> int:
        return len(asyncio.run(store.read_chunks("r")))

    assert len(await store.read_chunks("r")) == 2
    one_thread = len(open_files(path))
    assert await asyncio.to_thread(read_on_another_loop) == 2
    assert len(open_files(path)) > one_thread, "the second thread read on a connection of its own"

    await store.close()
    assert open_files(path) == []


async def test_closing_the_store_ends_the_streams_that_follow_its_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tail's read runs on the event loop without a thread switch, and a closed store's wait returns at once: the
    tail must end with an error instead of reading again and again while ``close`` waits for its threads."""
    monkeypatch.setattr(run_tail_module, "IDLE_TICK_SECONDS", 0.0)  # the tail reads and waits without pause
    store = SQLiteStore(tmp_path / "closing.db")
    delta = {"type": "text-delta", "runId": "r", "from": "AGENT", "payload": {"id": "t", "text": "hello"}}
    await store.append_chunks("r", [ChunkWrite(delta)])
    stream = AgentStream(store, "r")
    seen: list[Chunk] = []

    async def read() -> None:
        async for chunk in stream.full_stream:
            seen.append(chunk)

    reader = asyncio.create_task(read())
    async with asyncio.timeout(LONG):
        while not seen:
            await asyncio.sleep(0.01)
    await asyncio.wait_for(store.close(), LONG)
    with pytest.raises(RuntimeError, match="the store is closed"):
        await asyncio.wait_for(reader, LONG)
    assert [chunk.offset for chunk in seen] == [0]
