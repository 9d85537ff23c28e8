"""A run's journal writer as a model step drives it, on each store: deltas are written in the background, so a store
slower than the model makes the batches larger, never the model's stream slower, and the journal keeps the order the
chunks were made in; a background write that fails stops the step at its next call."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from tempo_agents.errors import ErasedRunError
from tempo_agents.journal.writer import RunJournal
from tempo_agents.store import ChunkWrite, Store
from tempo_agents.store.base import StartFence


class HeldWrites:
    """Holds each of the store's appends until the test lets it go on, and counts them."""

    def __init__(self, store: Store) -> None:
        self.appends: list[int] = []
        self.gate = asyncio.Event()
        original = store.append_chunks

        async def held(run_id: str, writes: Sequence[ChunkWrite], fence: StartFence | None = None) -> list[int]:
            self.appends.append(len(writes))
            await self.gate.wait()
            return await original(run_id, writes, fence)

        store.append_chunks = held  # type: ignore[method-assign]


async def stream(journal: RunJournal, words: Sequence[str]) -> None:
    """The model's stream, yielding to the event loop after each word as a provider does. A stream that waited for
    a held write would wait for good: given up after 30 s."""
    async with asyncio.timeout(30):
        for word in words:
            await journal.text_delta(0, word)
            await asyncio.sleep(0)


async def texts(store: Store, run_id: str) -> list[str]:
    return [entry.chunk["payload"].get("text", entry.chunk["type"]) for entry in await store.read_chunks(run_id)]


async def test_deltas_do_not_wait_for_a_slow_store_and_go_in_larger_batches(store: Store) -> None:
    held = HeldWrites(store)
    journal = RunJournal(store, "run-slow")
    words = [f"w{i} " for i in range(50)]
    await stream(journal, words)
    # Every word was taken while the store still held the first write: the stream did not wait for it.
    assert held.appends == [1]
    held.gate.set()
    await journal.flush_text()
    assert held.appends == [1, 49]  # the words that streamed meanwhile, in one write
    assert await texts(store, "run-slow") == words


async def test_a_write_after_deltas_waits_for_the_one_under_way_and_lands_after_them(store: Store) -> None:
    held = HeldWrites(store)
    journal = RunJournal(store, "run-order")
    await stream(journal, ["a", "b"])  # the background write of "a" starts, held
    keyed = asyncio.create_task(journal.write([ChunkWrite(journal.chunk("step-finish", {}), "step-finish:0")]))
    await asyncio.sleep(0.05)
    assert not keyed.done()  # waits for "a", held by the store
    held.gate.set()
    await keyed
    assert await texts(store, "run-order") == ["a", "b", "step-finish"]


async def test_a_background_write_that_fails_is_raised_by_the_next_call(store: Store) -> None:
    journal = RunJournal(store, "run-erased")
    await journal.text_delta(0, "kept")
    await journal.flush_text()
    await store.erase(["run-erased"])  # later writes under the run are refused
    await journal.text_delta(0, "refused")  # taken; its background write fails
    with pytest.raises(ErasedRunError):
        await journal.flush_text()
    with pytest.raises(ErasedRunError):  # and stays failed: the step goes no further
        await journal.text_delta(0, "after")
    assert await store.read_chunks("run-erased") == []


async def test_a_pause_after_a_write_under_way_does_not_hold_the_text_back(store: Store) -> None:
    held = HeldWrites(store)
    journal = RunJournal(store, "run-pause")
    await stream(journal, ["first", "second"])  # then the provider pauses: no more deltas, no flush
    await asyncio.sleep(0.05)
    held.gate.set()
    for _ in range(200):  # the write under way ends, and the one it leaves behind follows by itself
        if len(await texts(store, "run-pause")) == 2:
            break
        await asyncio.sleep(0.01)
    assert await texts(store, "run-pause") == ["first", "second"]
