"""One tail per run per process: however many streams follow a run in a process, its store is read once per chunk.

The store is real (SQLite, or PostgreSQL in the suite's PostgreSQL pass); its reads are counted by wrapping the two
methods a reader calls. Chunks are appended one at a time, the next only once every stream holds the last, so the
number of reads depends on the chunks and not on how the machine schedules the readers.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Sequence
from typing import Any

import pytest

import tempo_agents.streams.run_tail as run_tail_module
import tempo_agents.streams.stream as stream_module
from tempo_agents.journal.chunks import Chunk
from tempo_agents.store import ChunkWrite, JournalEntry, Store
from tempo_agents.streams import AgentStream

CHUNKS = 40
LONG = 60.0


class StoreReads:
    """Counts a real store's journal reads and waits (each is one query or more)."""

    def __init__(self, store: Store) -> None:
        self.count = 0
        read_chunks, wait_for_chunks = store.read_chunks, store.wait_for_chunks

        async def counted_read(run_id: str, offset: int = 0, limit: int = 1000) -> list[JournalEntry]:
            self.count += 1
            return await read_chunks(run_id, offset, limit)

        async def counted_wait(run_id: str, offset: int, timeout: float) -> None:
            self.count += 1
            await wait_for_chunks(run_id, offset, timeout)

        store.read_chunks = counted_read  # type: ignore[method-assign]
        store.wait_for_chunks = counted_wait  # type: ignore[method-assign]


def delta(run_id: str, n: int) -> ChunkWrite:
    return ChunkWrite({"type": "text-delta", "runId": run_id, "from": "AGENT", "payload": {"id": "t", "text": f"{n} "}})


def finish(run_id: str) -> ChunkWrite:
    payload = {"stepResult": {"reason": "stop"}, "output": {}}
    return ChunkWrite({"type": "finish", "runId": run_id, "from": "AGENT", "payload": payload})


async def follow(store: Store, run_id: str, readers: int) -> tuple[int, list[list[Chunk]]]:
    """``readers`` streams on one run while it is written chunk by chunk; the store's reads, and what each saw."""
    seen: list[list[Chunk]] = [[] for _ in range(readers)]
    streams = [AgentStream(store, run_id) for _ in range(readers)]

    async def read(stream: AgentStream, into: list[Chunk]) -> None:
        async for chunk in stream.full_stream:
            into.append(chunk)

    tasks = [asyncio.create_task(read(stream, into)) for stream, into in zip(streams, seen, strict=True)]
    reads = StoreReads(store)
    for n in range(CHUNKS):
        await store.append_chunks(run_id, [delta(run_id, n)])
        async with asyncio.timeout(LONG):
            while any(len(into) <= n for into in seen):
                await asyncio.sleep(0.005)
    await store.append_chunks(run_id, [finish(run_id)])
    await asyncio.wait_for(asyncio.gather(*tasks), LONG)
    return reads.count, seen


async def test_a_process_reads_a_run_once_however_many_streams_follow_it(store: Store) -> None:
    alone, [seen_alone] = await follow(store, "alone", 1)
    crowded, seen_crowded = await follow(store, "crowded", 50)

    expected = [f"{n} " for n in range(CHUNKS)]
    for seen in [seen_alone, *seen_crowded]:
        texts: list[Any] = [chunk.payload.text for chunk in seen[:-1]]  # type: ignore[union-attr]
        assert texts == expected and seen[-1].type == "finish"
        assert [chunk.offset for chunk in seen] == list(range(CHUNKS + 1))
    assert alone >= CHUNKS  # the single reader read every chunk from the store
    assert crowded <= alone + 4, f"50 streams read the store {crowded} times, one stream {alone} times"


async def test_streams_of_a_run_that_closed_without_finishing_ask_whether_it_closed_once(store: Store) -> None:
    await store.append_chunks("closed", [delta("closed", 0)])
    probes = 0

    async def probe() -> str | None:
        nonlocal probes
        probes += 1
        return "TERMINATED"

    streams = [AgentStream(store, "closed", probe=probe) for _ in range(20)]
    results = await asyncio.wait_for(asyncio.gather(*(stream.result() for stream in streams)), LONG)
    for result in results:  # each stream ends on the probe's answer, as a stream alone does
        assert result.text == "0 " and result.error == "run ended (TERMINATED) without a finish chunk"
    assert probes <= 2, f"20 streams of one run asked {probes} times whether it closed"


async def test_chunks_a_sink_takes_keep_the_stream_from_asking_whether_its_run_closed(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stream whose chunks its sink takes on the tail's task (an SSE response writing them) sees no batches while
    they flow; it must not take the run for idle and ask Temporal whether it closed, yet end as any stream does when
    the run closes without finishing, with the chunk that ends it (never taken by the sink) as its last batch."""
    monkeypatch.setattr(run_tail_module, "IDLE_TICK_SECONDS", 0.2)
    monkeypatch.setattr(stream_module, "PROBE_AFTER_IDLE_SECONDS", 1.5)
    probes: list[int] = []
    appended = 0

    async def probe() -> str | None:
        probes.append(appended)
        return "TERMINATED" if appended == 7 else None

    sunk: list[int | None] = []

    def sink(chunks: Sequence[Chunk]) -> int:
        sunk.extend(chunk.offset for chunk in chunks)
        return len(chunks)

    stream = AgentStream(store, "sunk", probe=probe)  # the journal is empty: every chunk comes live
    batches: list[list[Chunk]] = []

    async def read() -> None:
        async for batch in stream.batches(sink):
            batches.append(batch)

    reader = asyncio.create_task(read())
    for n in range(7):  # a chunk every 0.4 s: never idle for PROBE_AFTER_IDLE_SECONDS, though ticks come between
        await asyncio.sleep(0.4)
        await store.append_chunks("sunk", [delta("sunk", n)])
        appended += 1
    await asyncio.wait_for(reader, LONG)

    assert sunk == list(range(7))
    assert probes and set(probes) == {7}, f"asked whether the run closed while it streamed (after chunk {probes[0]})"
    [[ending]] = batches
    assert ending.type == "error" and ending.payload.error == "run ended (TERMINATED) without a finish chunk"  # type: ignore[union-attr]


class CatchUpReads:
    """Counts a real store's reads of chunks from an offset below ``before`` (a run's tail reads from the run's end)."""

    def __init__(self, store: Store, before: int) -> None:
        self.count = 0
        read_chunks = store.read_chunks

        async def counted(run_id: str, offset: int = 0, limit: int = 1000) -> list[JournalEntry]:
            self.count += offset < before
            return await read_chunks(run_id, offset, limit)

        store.read_chunks = counted  # type: ignore[method-assign]


async def next_chunks(follower: run_tail_module.TailFollower) -> list[Chunk]:
    """The follower's next chunks (past the idle ticks ``take`` answers with nothing)."""
    while not (chunks := await follower.take()):
        pass
    return chunks


async def append_taken(store: Store, run_id: str, follower: run_tail_module.TailFollower, n: int) -> list[Chunk]:
    """Append chunk ``n`` and wait for ``follower`` (following live) to be handed it."""
    taking = asyncio.create_task(next_chunks(follower))
    await store.append_chunks(run_id, [delta(run_id, n)])
    return await asyncio.wait_for(taking, LONG)


@pytest.mark.parametrize(("window", "store_reads"), [(2048, 0), (3, 1)])
async def test_a_follower_that_fell_behind_catches_up_from_the_window_or_else_the_store(
    store: Store, monkeypatch: pytest.MonkeyPatch, window: int, store_reads: int
) -> None:
    """A follower that stops draining leaves the live hand-out once it holds ``FOLLOWER_BUFFER`` chunks; drained, it
    takes what came meanwhile from the tail's window, and from the store only what the window no longer holds: every
    chunk once, in order, as it was journaled."""
    monkeypatch.setattr(run_tail_module, "FOLLOWER_BUFFER", 4)
    monkeypatch.setattr(run_tail_module, "TAIL_WINDOW", window)
    keeping_up = run_tail_module.follow_run(store, "behind", 0)
    falling_behind = run_tail_module.follow_run(store, "behind", 0)
    joined = asyncio.create_task(next_chunks(falling_behind))
    await asyncio.sleep(0)  # its first step joins the live hand-out (nothing to read before it): it takes chunk 0
    kept = await append_taken(store, "behind", keeping_up, 0)
    taken = await asyncio.wait_for(joined, LONG)
    for n in range(1, 10):  # it takes none of these: from chunk 5 on it no longer follows the hand-out
        kept += await append_taken(store, "behind", keeping_up, n)

    reads = CatchUpReads(store, 10)
    while len(taken) < 10:
        taken += await asyncio.wait_for(next_chunks(falling_behind), LONG)
    keeping_up.close()
    falling_behind.close()

    for chunks in (kept, taken):
        assert [chunk.offset for chunk in chunks] == list(range(10))
        assert [chunk.payload.text for chunk in chunks] == [f"{n} " for n in range(10)]  # type: ignore[union-attr]
    assert reads.count == store_reads


async def test_a_tails_window_keeps_no_objects_the_garbage_collector_walks(store: Store) -> None:
    """A full collection stops the event loop, and every stream with it, for as long as it takes to walk the objects
    the process keeps: the chunks a run's tail keeps for its followers are not among them, however many it has
    handed out. (Parsed, they would be some five objects a chunk, 10,000 here; the store's connections come and go
    with a few hundred, such as the rows of the last read and the weak references of a connection's cursors.)"""
    follower = run_tail_module.follow_run(store, "long", 0)
    taken = 0

    async def stream(batches: range) -> None:  # a hundred chunks an append
        nonlocal taken
        for batch in batches:
            await store.append_chunks("long", [delta("long", n) for n in range(100 * batch, 100 * batch + 100)])
            while taken < 100 * batch + 100:
                chunks = await follower.take()
                assert [chunk.offset for chunk in chunks] == list(range(taken, taken + len(chunks)))
                taken += len(chunks)

    async with asyncio.timeout(LONG):
        await stream(range(1))
        gc.collect()
        before = len(gc.get_objects())
        await stream(range(1, 21))
        gc.collect()
        kept = len(gc.get_objects()) - before
    follower.close()
    assert kept < 1500, f"{kept} more objects for the collector to walk after 2,000 more chunks"
