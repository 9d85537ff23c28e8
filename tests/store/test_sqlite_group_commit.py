"""The SQLite store's group commit: journal writes and audit appends queued while the writer thread is busy share one
transaction, and each still succeeds or fails on its own; the audit chain holds them in the order they joined. The
tests hold the writer thread with a job of their own, queue writes behind it (every one queued before any runs), then
let it go."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tempo_agents.audit import DONE, AuditEntry, read_chain, verify_chain
from tempo_agents.errors import ErasedRunError
from tempo_agents.store import ChunkWrite, SQLiteStore
from tempo_agents.store.base import SavedOutcome, TranscriptEntry

LONG = 30.0


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    store = SQLiteStore(tmp_path / "groups.db")
    await store._db.ready()  # the file and its tables, before a test holds the writer
    yield store
    await store.close()


@asynccontextmanager
async def writer_held(store: SQLiteStore) -> AsyncIterator[None]:
    """The writer thread busy with a job of the test's until the block ends: writes queued meanwhile wait."""
    started, release = threading.Event(), threading.Event()

    def hold(db: sqlite3.Connection) -> None:
        started.set()
        release.wait(LONG)

    held = asyncio.ensure_future(store._db.run(hold))
    await asyncio.to_thread(started.wait, LONG)
    try:
        yield
    finally:
        release.set()
        await held


def queued(*writes: Awaitable[Any]) -> list[asyncio.Task[Any]]:
    return [asyncio.ensure_future(write) for write in writes]


async def all_queued() -> None:
    """Let every task started so far reach its wait for the writer (a write queues without awaiting anything)."""
    for _ in range(3):
        await asyncio.sleep(0)


def delta(n: int) -> ChunkWrite:
    return ChunkWrite({"type": "text-delta", "payload": {"text": f"word{n} "}})


async def texts(store: SQLiteStore, run_id: str) -> list[tuple[int, str]]:
    return [(entry.offset, entry.chunk["payload"]["text"]) for entry in await store.read_chunks(run_id)]


async def test_writes_of_many_runs_queued_together_each_land_with_their_offsets(store: SQLiteStore) -> None:
    async with writer_held(store):
        tasks = queued(*(store.append_chunks(f"run-{n}", [delta(n), delta(n + 1)]) for n in range(50)))
        await all_queued()
        assert not any(task.done() for task in tasks)
    assert await asyncio.gather(*tasks) == [[0, 1]] * 50
    for n in range(50):
        assert await texts(store, f"run-{n}") == [(0, f"word{n} "), (1, f"word{n + 1} ")]


async def test_a_write_that_fails_in_a_group_is_rolled_back_alone(store: SQLiteStore) -> None:
    await store.append_chunks("erased", [delta(0)])
    await store.erase(["erased"])
    entry = TranscriptEntry(step=0, part="answer", position=0, message={"role": "assistant", "content": "hi"})
    unwritable = ChunkWrite({"type": "text-delta", "payload": {"text": object()}})  # fails after its other writes
    async with writer_held(store):
        before, broken, refused, after = queued(
            store.append_chunks("before", [delta(1)]),
            store.record("broken", [entry], [delta(2), unwritable], SavedOutcome("step-0", {"done": True})),
            store.append_chunks("erased", [delta(3)]),
            store.append_chunks("after", [delta(4)]),
        )
        await all_queued()
    assert await before == [0]
    with pytest.raises(TypeError):
        await broken
    with pytest.raises(ErasedRunError):
        await refused
    assert await after == [0]
    assert await texts(store, "before") == [(0, "word1 ")]
    assert await texts(store, "after") == [(0, "word4 ")]
    # the failed write's transcript, outcome and first chunk went back with it
    assert await store.read_chunks("broken") == []
    assert await store.saved_outcome("broken", "step-0") is None
    assert (await store.transcript_changes("broken", 0))[0] == []
    assert await store.read_chunks("erased") == []


async def test_a_group_that_cannot_commit_fails_every_write_and_writes_none(store: SQLiteStore, tmp_path: Path) -> None:
    await store._db.run(lambda db: db.execute("PRAGMA busy_timeout = 100"))
    other = sqlite3.connect(tmp_path / "groups.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process's writer holds the file's write lock
    try:
        results = await asyncio.gather(
            *(store.append_chunks(f"run-{n}", [delta(n)]) for n in range(10)), return_exceptions=True
        )
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert all(isinstance(result, sqlite3.OperationalError) for result in results), results
    assert "locked" in str(results[0])
    assert await store.append_chunks("run-0", [delta(7)]) == [0]  # the next group commits, and none before it did
    assert await texts(store, "run-0") == [(0, "word7 ")]
    for n in range(1, 10):
        assert await store.read_chunks(f"run-{n}") == []


async def test_a_write_cancelled_before_its_group_runs_is_not_written(store: SQLiteStore) -> None:
    async with writer_held(store):
        cancelled, kept = queued(store.append_chunks("cancelled", [delta(0)]), store.append_chunks("kept", [delta(1)]))
        await all_queued()
        cancelled.cancel()
        await all_queued()
    assert await kept == [0]
    assert cancelled.cancelled()
    assert await store.read_chunks("cancelled") == []


async def test_writes_of_one_run_queued_together_keep_the_order_they_were_queued_in(store: SQLiteStore) -> None:
    async with writer_held(store):
        tasks = queued(*(store.append_chunks("run", [delta(n)]) for n in range(20)))
        await all_queued()
    assert await asyncio.gather(*tasks) == [[n] for n in range(20)]
    assert await texts(store, "run") == [(n, f"word{n} ") for n in range(20)]


async def test_audit_entries_queued_together_chain_in_the_order_they_joined_and_a_failed_writes_go_back(
    store: SQLiteStore,
) -> None:
    def entry(target: str) -> AuditEntry:
        return AuditEntry(action="cancel", target=target, outcome=DONE, principal="alice")

    unwritable = ChunkWrite({"type": "text-delta", "payload": {"text": object()}})
    async with writer_held(store):
        tasks = queued(
            store.append_audit([entry("r1")]),
            store.record("r2", [], [delta(0)], audit=[entry("r2")]),
            store.record("broken", [], [unwritable], audit=[entry("broken")]),
            store.append_audit([entry("r3"), entry("r4")]),
        )
        await all_queued()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert isinstance(results[2], TypeError)
    chain = [record async for record in read_chain(store.audit_chain)]
    assert [(record.seq, record.entry.target) for record in chain] == [(1, "r1"), (2, "r2"), (3, "r3"), (4, "r4")]
    walk = await verify_chain(read_chain(store.audit_chain))
    assert walk.records == 4 and walk.broken is None
