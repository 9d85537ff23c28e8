"""Server-sent events as the official client parses them.

Each event is one block ``data: <single-line JSON>`` followed by exactly ``\\n\\n`` (a client that splits
on LF LF sees nothing at all when blocks end with CR LF CR LF), and the stream ends with
``data: [DONE]``. Reference routes send nothing but ``data:`` lines; the run-stream route puts an
``id: <offset>`` line in front so that browsers and other SSE clients can reconnect with
``Last-Event-ID``. Idle streams get ``: ping`` comments, which every parser ignores.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.responses import StreamingResponse

from tempo_agents.journal.chunks import Chunk
from tempo_agents.streams import AgentStream

__all__ = [
    "BACKLOG_BYTES",
    "DONE",
    "HEARTBEAT_SECONDS",
    "SSE_HEADERS",
    "SSE_RESPONSES",
    "STALL_SECONDS",
    "EncodedChunks",
    "EventStream",
    "cut_off_event",
    "encode_event",
    "stream_response",
]

SSE_HEADERS = {"cache-control": "no-cache", "connection": "keep-alive", "x-accel-buffering": "no"}
HEARTBEAT_SECONDS = 15.0
DONE = b"data: [DONE]\n\n"
_PING = b": ping\n\n"


class EventStream(StreamingResponse):
    """An SSE response (``text/event-stream``); as ``response_class=`` it tells the OpenAPI document so."""

    media_type = "text/event-stream"


SSE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Server-sent events: each `data` is one chunk as JSON, the last is `[DONE]`",
        "content": {
            "text/event-stream": {
                "schema": {  # before OpenAPI 3.2, the schema of an event stream describes each event
                    "type": "object",
                    "properties": {
                        "data": {"type": "string", "description": "a chunk as one line of JSON, or [DONE]"},
                        "id": {"type": "string", "description": "the chunk's journal offset (run streams only)"},
                        "event": {"type": "string"},
                    },
                    "required": ["data"],
                }
            }
        },
    }
}
"""The OpenAPI form of an SSE route's answer."""


def encode_event(data: dict[str, Any], event_id: int | None = None) -> bytes:
    """One SSE block: an optional ``id:`` line, one ``data:`` line of compact JSON, then LF LF."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}data: {text}\n\n".encode()


BACKLOG_BYTES = 1 << 20
"""How many encoded bytes a stream holds for a client that reads more slowly than its run writes (and one chunk
more); when the client leaves that much untaken for ``STALL_SECONDS`` the stream is cut off (``cut_off_event``), so
a stalled client holds no more than this."""
STALL_SECONDS = 10.0


def cut_off_event(run_id: str, offset: int | None) -> bytes:
    """The last event of a stream cut off for a slow client: an ``error`` chunk saying where to go on from."""
    where = f"GET /api/runs/{run_id}/stream?offset={offset}" if offset is not None else "the run's stream"
    error = (
        f"stream cut off: the client fell more than {BACKLOG_BYTES} bytes behind the run for {STALL_SECONDS:g} s; "
        f"the run goes on, and {where} reads on from the first chunk this stream did not send"
    )
    return _error_event(run_id, error)


def _error_event(run_id: str, error: str) -> bytes:
    """An ``error`` chunk of the run's, as the last event of a stream that did not end with its run."""
    return encode_event({"type": "error", "runId": run_id, "from": "AGENT", "payload": {"error": error}})


class EncodedChunks:
    """The SSE blocks of the chunks sent last, by chunk object: the streams of one run get the very same chunk
    objects from the run's tail, so each chunk is encoded once however many streams send it."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._blocks: OrderedDict[tuple[int, Callable[[Chunk], dict[str, Any]], bool], tuple[Chunk, bytes]] = (
            OrderedDict()
        )

    def block(self, chunk: Chunk, to_wire: Callable[[Chunk], dict[str, Any]], with_id: bool) -> bytes:
        key = (id(chunk), to_wire, with_id)
        kept = self._blocks.get(key)
        if kept is not None:
            return kept[1]
        block = encode_event(to_wire(chunk), chunk.offset if with_id else None)
        self._blocks[key] = (chunk, block)  # the chunk is held with its block, so its id is not reused meanwhile
        if len(self._blocks) > self._size:
            self._blocks.popitem(last=False)
        return block


_ENCODED = EncodedChunks(8192)


class _Relay:
    """Moves a stream's chunks, encoded, to the response, holding at most ``BACKLOG_BYTES`` for it.

    The pump runs as its own task, so that the response can be sent a heartbeat while the journal reader waits;
    chunks journaled together leave in one write. The heartbeat is one timer a stream, armed again once per
    ``heartbeat`` seconds rather than for every write: a server with a thousand streams hands each chunk out
    without arming and cancelling a thousand timers.
    """

    def __init__(
        self,
        stream: AgentStream,
        to_wire: Callable[[Chunk], dict[str, Any]],
        with_ids: bool,
        skip: frozenset[str],
        heartbeat: float,
    ) -> None:
        self._stream = stream
        self._to_wire = to_wire
        self._with_ids = with_ids
        self._skip = skip
        self._blocks: deque[bytes] = deque()
        self._held = 0
        self._ready = asyncio.Event()
        self._taken = asyncio.Event()
        self._ended = False
        self.ending: bytes | None = None
        """The event sent before ``[DONE]`` when the stream did not end with its run: an error, or the cut-off."""
        self._heartbeat = heartbeat
        self._loop = asyncio.get_running_loop()
        self._sent_at = self._loop.time()
        self._ping_due = False
        self._beat: asyncio.TimerHandle | None = self._loop.call_at(self._sent_at + heartbeat, self._beat_due)

    def _beat_due(self) -> None:
        """The heartbeat timer: a ping is due once nothing was sent for ``heartbeat`` seconds; arm it again."""
        if self._loop.time() >= self._sent_at + self._heartbeat:
            self._ping_due = True
            self._ready.set()
            self._beat = self._loop.call_at(self._loop.time() + self._heartbeat, self._beat_due)
        else:
            self._beat = self._loop.call_at(self._sent_at + self._heartbeat, self._beat_due)

    def stop_heartbeat(self) -> None:
        if self._beat is not None:
            self._beat.cancel()
            self._beat = None

    async def pump(self) -> None:
        try:
            async with contextlib.aclosing(self._stream.batches()) as batches:
                async for batch in batches:
                    for chunk in batch:
                        if chunk.type in self._skip:
                            continue
                        if self._held >= BACKLOG_BYTES and not await self._taken_in_time():
                            self.ending = cut_off_event(self._stream.run_id, chunk.offset)
                            return  # leaving leaves the run's tail now; the client gets what is held
                        block = _ENCODED.block(chunk, self._to_wire, self._with_ids)
                        self._blocks.append(block)
                        self._held += len(block)
                    self._ready.set()
        except Exception as error:
            self.ending = _error_event(self._stream.run_id, str(error))
        finally:
            self._ended = True
            self._ready.set()

    async def _taken_in_time(self) -> bool:
        """Whether the response takes what is held within ``STALL_SECONDS``."""
        self._ready.set()
        self._taken.clear()
        try:
            await asyncio.wait_for(self._taken.wait(), STALL_SECONDS)
        except TimeoutError:
            return False
        return True

    async def next_blocks(self) -> bytes | None:
        """Every block held, as one write, once there is one; a ping when nothing was sent for ``heartbeat``
        seconds; ``None`` when the pump has ended."""
        while not self._blocks:
            if self._ended:
                return None
            if self._ping_due:
                self._ping_due = False
                self._sent_at = self._loop.time()
                return _PING
            await self._ready.wait()
            self._ready.clear()
        joined = b"".join(self._blocks)
        self._blocks.clear()
        self._held = 0
        self._taken.set()
        self._sent_at = self._loop.time()
        return joined


async def _events(
    stream: AgentStream,
    to_wire: Callable[[Chunk], dict[str, Any]],
    with_ids: bool,
    heartbeat: float,
    skip: frozenset[str],
) -> AsyncIterator[bytes]:
    """The stream's chunks as SSE blocks, with heartbeats while idle, then ``[DONE]``.

    When the client goes away this generator is closed: the reader stops, the run goes on.
    """
    relay = _Relay(stream, to_wire, with_ids, skip, heartbeat)
    task = asyncio.get_running_loop().create_task(relay.pump())
    try:
        while (blocks := await relay.next_blocks()) is not None:
            yield blocks
        if relay.ending is not None:
            yield relay.ending
        yield DONE
    finally:
        relay.stop_heartbeat()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        await stream.aclose()


def stream_response(
    stream: AgentStream,
    to_wire: Callable[[Chunk], dict[str, Any]],
    *,
    with_ids: bool = False,
    heartbeat: float = HEARTBEAT_SECONDS,
    skip: frozenset[str] = frozenset(),
    headers: dict[str, str] | None = None,
) -> StreamingResponse:
    """A 200 ``text/event-stream`` response that sends the stream's chunks as they are journaled
    (except the types in ``skip``), with ``headers`` beside the event stream's own."""
    return EventStream(_events(stream, to_wire, with_ids, heartbeat, skip), headers={**SSE_HEADERS, **(headers or {})})
