"""How a live SSE stream's chunks reach its client's socket: the chunks one read of the store brings (committed
together, or while the process was behind) leave in one write a stream, never more than ``SINK_WRITE_BYTES`` of
them, whole and in order; a client that reads everything sees the journal as it is."""

from __future__ import annotations

import asyncio

from tempo_agents.server.shapes import chunk_wire
from tempo_agents.server.sse import SINK_WRITE_BYTES, stream_response
from tempo_agents.store import ChunkWrite, Store
from tempo_agents.streams import AgentStream
from tempo_agents.streams.run_tail import followers_of
from tests.streams.test_run_tail import delta, finish
from tests.support.http_api import ServedResponse, sse_events

LONG = 60.0
RUN = "written"


def events_in(body: bytes) -> int:
    """How many chunk events a write holds (each is an ``id:`` line, then a ``data:`` line)."""
    return body.count(b"\ndata: {")


class Served(ServedResponse):
    async def events(self, count: int) -> None:
        """Wait until the client holds ``count`` events."""
        async with asyncio.timeout(LONG):
            while sum(events_in(body) for body in self.bodies) < count:
                await asyncio.sleep(0.005)


async def live(store: Store) -> Served:
    """A run stream whose first chunk has reached its client: from here on it follows the run live."""
    served = Served(stream_response(AgentStream(store, RUN), chunk_wire, with_ids=True))
    async with asyncio.timeout(LONG):
        while followers_of(store, RUN) < 1:
            await asyncio.sleep(0.005)
    await store.append_chunks(RUN, [delta(RUN, 0)])
    await served.events(1)
    await asyncio.sleep(0.05)  # the stream's own task is idle again: the next chunks are written from the tail
    return served


async def test_chunks_committed_together_reach_a_live_client_in_one_write(store: Store) -> None:
    served = await live(store)
    before = len(served.bodies)
    await store.append_chunks(RUN, [delta(RUN, n) for n in range(1, 6)])  # one commit, read at once
    await served.events(6)
    together = served.bodies[before:]
    assert [events_in(body) for body in together] == [5], "one write for the five chunks of one read"

    for n in range(6, 9):  # committed one by one, each waited for: a write each, as it comes
        await store.append_chunks(RUN, [delta(RUN, n)])
        await served.events(n + 1)
    assert [events_in(body) for body in served.bodies[before + 1 :]] == [1, 1, 1]

    await store.append_chunks(RUN, [finish(RUN)])
    await asyncio.wait_for(served.task, LONG)
    journal = [(entry.offset, entry.chunk) for entry in await store.read_chunks(RUN, 0, 100)]
    sent = sse_events(b"".join(served.bodies))
    assert [offset for offset, _ in sent] == [offset for offset, _ in journal] == list(range(10))
    assert [event["type"] for _, event in sent] == ["text-delta"] * 9 + ["finish"]


def big(n: int) -> ChunkWrite:
    return ChunkWrite(
        {"type": "text-delta", "runId": RUN, "from": "AGENT", "payload": {"id": "t", "text": f"{n}" + "x" * 2000}}
    )


async def test_a_read_of_more_than_one_write_holds_leaves_in_writes_of_at_most_that_much(store: Store) -> None:
    served = await live(store)
    before = len(served.bodies)
    await store.append_chunks(RUN, [big(n) for n in range(100)])  # ~200 KB in one commit
    await served.events(101)
    first, *rest = served.bodies[before:]
    one_chunk = 2200  # an event of one of these chunks: 2,000 characters of text, its id and JSON around them
    assert SINK_WRITE_BYTES <= len(first) < SINK_WRITE_BYTES + one_chunk, "the tail's write stops at the bound"
    assert rest, "the chunks past the bound went on through the stream's own task"

    await store.append_chunks(RUN, [finish(RUN)])
    await asyncio.wait_for(served.task, LONG)
    sent = sse_events(b"".join(served.bodies))
    assert [offset for offset, _ in sent] == list(range(102))
    assert [event["payload"]["text"] for _, event in sent[1:101]] == [f"{n}" + "x" * 2000 for n in range(100)]
