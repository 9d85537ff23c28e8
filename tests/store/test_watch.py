"""The SQLite store's watcher: readers are woken for chunks another process appends, and only those readers.

Each test appends from a real second process (``python -c``) to a real SQLite file. Nothing here asserts a
tight timing (bench/stream_latency.py measures the lag): waits use long timeouts, so a wait that returns early
was woken, and one still pending after many of the watcher's ticks was not.
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace

import pytest

import tempo_agents.store.sqlite.watcher as watcher_module
from tempo_agents.store import ChunkWrite, JournalEntry, SQLiteStore

LONG = 30.0
"""A wait's timeout: far beyond any wake-up, so a wait that returns before it was woken."""

_WRITER = textwrap.dedent(
    """
    import asyncio, sys, time
    from tempo_agents.store import SQLiteStore, ChunkWrite

    async def main():
        store = SQLiteStore(sys.argv[1])
        loop = asyncio.get_running_loop()
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            run_id, count, gap = line.split()
            for n in range(int(count)):
                await store.append_chunks(run_id, [ChunkWrite({"type": "text-delta", "payload": {"n": n}})])
                await asyncio.sleep(float(gap))
            print("appended", time.clock_gettime(time.CLOCK_MONOTONIC), flush=True)
        await store.close()

    asyncio.run(main())
    """
)


class Writer:
    """Another process appending to the store when told to."""

    def __init__(self, path: Path) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    async def append(self, run_id: str, count: int = 1, gap: float = 0.0) -> float:
        """Append ``count`` chunks ``gap`` seconds apart; returns when the last one was committed (monotonic)."""
        return await asyncio.wait_for(asyncio.to_thread(self.append_now, run_id, count, gap), LONG)

    def append_now(self, run_id: str, count: int = 1, gap: float = 0.0) -> float:
        """:meth:`append`, blocking the calling thread."""
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(f"{run_id} {count} {gap}\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        assert line.startswith("appended "), line
        return float(line.split()[1])

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        assert self._process.wait(LONG) == 0


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    store = SQLiteStore(tmp_path / "shared.db")
    await store.read_chunks("r")  # creates the file and its schema before the writer opens it
    yield store
    await store.close()


class CountingStore(SQLiteStore):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.reads: dict[str, int] = {}

    async def read_chunks(self, run_id: str, offset: int = 0, limit: int = 1000) -> list[JournalEntry]:
        self.reads[run_id] = self.reads.get(run_id, 0) + 1
        return await super().read_chunks(run_id, offset, limit)


def watchers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "tempo-agents-sqlite-watch" and t.is_alive()]


async def test_a_chunk_from_another_process_wakes_its_waiters_only(store: SQLiteStore) -> None:
    writer = Writer(store.path)
    try:
        await writer.append("warm-up")  # the writer process has started and opened the file
        woken_at: list[float] = []

        async def wait(run_id: str, offset: int) -> None:
            await store.wait_for_chunks(run_id, offset, timeout=LONG)
            woken_at.append(time.clock_gettime(time.CLOCK_MONOTONIC))

        first = asyncio.create_task(wait("r", 0))
        later_offset = asyncio.create_task(wait("r", 1))
        other_run = asyncio.create_task(wait("other", 0))
        await asyncio.sleep(0.1)  # all three wait, and the watcher has checked them (nothing there)
        assert not (first.done() or later_offset.done() or other_run.done())

        committed = await writer.append("r")
        await asyncio.wait_for(first, LONG)
        assert woken_at[0] - committed < 5.0  # woken by the watcher, not by its 30 s timeout
        assert [e.chunk["payload"] for e in await store.read_chunks("r")] == [{"n": 0}]

        await asyncio.sleep(0.2)  # dozens of the watcher's ticks
        assert not later_offset.done(), "woken though no chunk at offset 1 exists"
        assert not other_run.done(), "woken by a chunk of another run"

        await writer.append("r")
        await asyncio.wait_for(later_offset, LONG)
        assert not other_run.done()
        other_run.cancel()
    finally:
        writer.close()


async def test_tails_of_idle_runs_do_not_re_read_while_another_run_streams(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "shared.db")
    await store.read_chunks("setup")
    writer = Writer(store.path)
    try:
        seen: dict[str, int] = {}

        async def tail(run_id: str) -> None:
            offset = 0
            while True:
                entries = await store.read_chunks(run_id, offset)
                offset += len(entries)
                seen[run_id] = offset
                if not entries:
                    await store.wait_for_chunks(run_id, offset, timeout=LONG)

        tails = [asyncio.create_task(tail(run_id)) for run_id in ("busy", "idle-1", "idle-2")]
        await asyncio.sleep(0.1)
        await writer.append("busy", count=20, gap=0.01)
        deadline = time.monotonic() + LONG
        while seen.get("busy", 0) < 20 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert seen["busy"] == 20
        assert store.reads["busy"] >= 2  # woken at least once by the other process's appends
        assert (store.reads["idle-1"], store.reads["idle-2"]) == (1, 1), "idle tails were woken"
        for task in tails:
            task.cancel()
        await asyncio.gather(*tails, return_exceptions=True)
    finally:
        writer.close()
        await store.close()


async def test_the_watcher_idles_without_waiters_and_stops_on_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ticks: dict[threading.Thread, int] = {}  # by watcher: another test's store may still be watched in this process

    def sleep(seconds: float) -> None:
        ticks[threading.current_thread()] = ticks.get(threading.current_thread(), 0) + 1
        time.sleep(seconds)

    monkeypatch.setattr(watcher_module, "time", SimpleNamespace(sleep=sleep))
    before = set(watchers())
    store = SQLiteStore(tmp_path / "s.db")
    await store.append_chunks("r", [ChunkWrite({"type": "start"})])
    assert set(watchers()) == before, "a watcher started with nobody waiting"

    await store.wait_for_chunks("r", 1, timeout=0.1)  # nothing comes: returns at its timeout
    started = set(watchers()) - before
    assert len(started) == 1
    [watcher] = started
    await asyncio.sleep(0.05)  # the watcher notices nobody waits any more
    idle_ticks = ticks.get(watcher, 0)
    assert idle_ticks > 0, "the watcher never checked while a reader waited"
    await asyncio.sleep(0.2)
    assert ticks.get(watcher, 0) == idle_ticks, "the watcher kept checking with nobody waiting"

    pending = asyncio.create_task(store.wait_for_chunks("r", 1, timeout=0.5))
    await asyncio.sleep(0.05)
    assert not pending.done()
    await store.close()
    assert not any(t.is_alive() for t in started), "the watcher outlived close()"
    await asyncio.wait_for(pending, LONG)  # a reader still waiting returns at its timeout
    await store.wait_for_chunks("r", 1, timeout=LONG)  # returns at once on a closed store, no new watcher
    assert set(watchers()) == before


async def test_another_processs_chunks_wake_a_reader_while_this_process_appends_too(store: SQLiteStore) -> None:
    """The watcher queries only for other processes' commits: a busy process's own appends (which wake their
    readers themselves) must not hide the other process's. Half the rounds force the closest race: the other
    process commits right after one of this process's commits, before this process has marked it as its own, and
    the watcher does not look at the file in between."""
    writer = Writer(store.path)
    mark_own_commit = store._db.after_write
    assert mark_own_commit is not None
    commit_theirs_first = threading.Event()

    def after_write(db: sqlite3.Connection) -> None:  # on this store's writer thread, after its job committed
        if commit_theirs_first.is_set():
            commit_theirs_first.clear()
            with store._watcher._probe_lock:  # no tick of the watcher comes between
                writer.append_now("theirs")
        mark_own_commit(db)

    store._db.after_write = after_write
    own_appends = 0
    try:
        await writer.append("warm-up")
        seen = 0

        async def tail() -> None:
            nonlocal seen
            while True:
                entries = await store.read_chunks("theirs", seen)
                seen += len(entries)
                if not entries:
                    await store.wait_for_chunks("theirs", seen, timeout=LONG)

        async def append_our_own() -> None:
            nonlocal own_appends
            await store.append_chunks("ours", [ChunkWrite({"type": "text-delta", "payload": {"n": own_appends}})])
            own_appends += 1

        async def append_our_own_throughout() -> None:
            while True:
                await append_our_own()

        tailing = asyncio.create_task(tail())
        for count in range(1, 41):
            if count % 2:  # this process appends throughout, the other process now and then
                appending = asyncio.create_task(append_our_own_throughout())
                await writer.append("theirs")
            else:  # one append of this process, the other process's commit forced right behind it, then none
                appending.cancel()
                await asyncio.gather(appending, return_exceptions=True)
                commit_theirs_first.set()
                await append_our_own()
            deadline = time.monotonic() + LONG / 3  # a missed wake-up waits out the tail's 30 s timeout
            while seen < count and time.monotonic() < deadline:
                await asyncio.sleep(0.001)
            assert seen == count, f"chunk {count} of the other process was not seen ({seen} were)"
        tailing.cancel()
        await asyncio.gather(tailing, return_exceptions=True)
    finally:
        writer.close()
    assert own_appends > 40  # this process appended throughout


async def test_a_reader_that_waits_after_this_process_appended_past_its_read_returns_at_once(
    store: SQLiteStore,
) -> None:
    """A commit of this process between a reader's read and its wait: the wait returns at once (the chunk is
    there), not at the watcher's next check or the wait's timeout."""
    warm = asyncio.create_task(store.wait_for_chunks("other", 0, timeout=LONG))
    await asyncio.sleep(0.05)  # the watcher runs and has checked the file
    for n in range(20):
        assert await store.read_chunks("r", n) == []
        await store.append_chunks("r", [ChunkWrite({"type": "text-delta", "payload": {"n": n}})])
        await asyncio.wait_for(store.wait_for_chunks("r", n, timeout=LONG), LONG / 3)
    assert [e.chunk["payload"]["n"] for e in await store.read_chunks("r")] == list(range(20))
    warm.cancel()
