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
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.responses import StreamingResponse

from tempo_agents.journal.chunks import Chunk
from tempo_agents.streams import AgentStream

__all__ = [
    "DONE",
    "HEARTBEAT_SECONDS",
    "SSE_HEADERS",
    "SSE_RESPONSES",
    "EventStream",
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


async def _events(
    stream: AgentStream,
    to_wire: Callable[[Chunk], dict[str, Any]],
    with_ids: bool,
    heartbeat: float,
    skip: frozenset[str],
) -> AsyncIterator[bytes]:
    """The stream's chunks as SSE blocks, with heartbeats while idle, then ``[DONE]``.

    A reader task moves chunks into a queue so that waiting for the next one can time out (for a
    heartbeat) without cancelling the journal reader. When the client goes away this generator is
    closed: the reader stops, the run goes on.
    """
    queue: asyncio.Queue[Chunk | None] = asyncio.Queue()

    async def pump() -> None:
        try:
            async for chunk in stream.full_stream:
                await queue.put(chunk)
        finally:
            await queue.put(None)

    task = asyncio.get_running_loop().create_task(pump())
    try:
        ended = False
        while not ended:
            try:
                chunk = await asyncio.wait_for(queue.get(), heartbeat)
            except TimeoutError:
                yield _PING
                continue
            blocks: list[bytes] = []
            while True:  # chunks journaled together (an activity's writes) leave in one write
                if chunk is None:
                    ended = True
                    break
                if chunk.type not in skip:
                    blocks.append(encode_event(to_wire(chunk), chunk.offset if with_ids else None))
                try:
                    chunk = queue.get_nowait()
                except asyncio.QueueEmpty:
                    break
            if blocks:
                yield b"".join(blocks)
        if task.done() and not task.cancelled() and task.exception() is not None:
            error = task.exception()
            yield encode_event(
                {"type": "error", "runId": stream.run_id, "from": "AGENT", "payload": {"error": str(error)}}
            )
        yield DONE
    finally:
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
