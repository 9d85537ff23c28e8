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
import functools
import json
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Sequence
from typing import Any

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from tempo_agents.journal.chunks import Chunk
from tempo_agents.server.transport_send import transport_send
from tempo_agents.streams import READ_BATCH, AgentStream

__all__ = [
    "BACKLOG_BYTES",
    "DONE",
    "HEARTBEAT_SECONDS",
    "SINK_WRITE_BYTES",
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
SINK_WRITE_BYTES = 1 << 16
"""How many bytes of chunks a stream's sink joins into one write, at most (and one chunk more; the transport asks
its writers to wait at this much unsent): the chunks after them wait for the pump, which holds them within
``BACKLOG_BYTES``."""


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


_ENCODED = EncodedChunks(READ_BATCH)
"""The streams of a run encode its chunks in the hand-out that brought them (a stream whose client is slow encodes
them later, or again), so the cache holds one read of the store and no more: each entry keeps its chunk alive, some
six objects the garbage collector walks in every full collection, with the event loop stopped."""


class _Relay:
    """Moves a stream's chunks, encoded, to the response, holding at most ``BACKLOG_BYTES`` for it.

    While the client keeps up, the chunks are written from the run's tail as they are handed over (``sink``), those
    of one read of the store in one write: the response's ``send`` is run there and then, and only when it has to
    wait for the client (its transport is full) does it go on in a task of its own, with every later chunk left to
    the pump. The pump, the stream's own task, takes what the sink leaves: the chunks before the stream went live, the
    one that ends it, and everything while a write waits; chunks journaled together leave in one write. The
    response's task writes what the pump holds and sends a heartbeat while nothing else is sent. The heartbeat is one
    timer a stream, armed again once per ``heartbeat`` seconds rather than for every write: a server with a thousand
    streams hands each chunk out without arming and cancelling a thousand timers, and without waking a thousand tasks.
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
        self.send: Send | None = None
        """The response's ``send``, once its head is sent: until then every chunk goes through the pump."""
        self._idle = False
        """Whether the response's task waits for blocks (it is not writing, and holds none)."""
        self._writing: asyncio.Future[None] | None = None
        """A write the sink began that waits for the client."""
        self._heartbeat = heartbeat
        self._loop = asyncio.get_running_loop()
        self._sent_at = self._loop.time()
        self._ping_due = False
        self._beat: asyncio.TimerHandle | None = None

    def start_heartbeat(self) -> None:
        """Arm the heartbeat, once the response begins (a response never sent leaves no timer behind)."""
        self._sent_at = self._loop.time()
        self._beat = self._loop.call_at(self._sent_at + self._heartbeat, self._beat_due)

    def _beat_due(self) -> None:
        """The heartbeat timer: a ping is due once nothing was sent for ``heartbeat`` seconds; arm it again."""
        if self._loop.time() >= self._sent_at + self._heartbeat:
            self._ping_due = True
            self._ready.set()
            self._beat = self._loop.call_at(self._loop.time() + self._heartbeat, self._beat_due)
        else:
            self._beat = self._loop.call_at(self._sent_at + self._heartbeat, self._beat_due)

    def stop(self) -> None:
        """The response is over: no more heartbeats, and a write still waiting for the client is dropped."""
        self.send = None
        if self._beat is not None:
            self._beat.cancel()
            self._beat = None
        writing, self._writing = self._writing, None
        if writing is not None and not writing.done():
            writing.cancel()
        elif writing is not None and not writing.cancelled():
            writing.exception()  # the client went away after a write failed: nothing is left to raise it to

    def sink(self, chunks: Sequence[Chunk]) -> int:
        """The stream's ``TailFollower.sink``: write the chunks now, in one write on the tail's task, when nothing is
        ahead of them (nothing held, no write waiting, the response's task idle); takes them up to the first that
        ends the stream, or that cannot be encoded (the pump meets it and ends the stream with the failure, not the
        run's tail), and no more than ``SINK_WRITE_BYTES`` of them; returns how many it took."""
        writing = self._writing
        if not self._idle or self._blocks or self.send is None or (writing is not None and not writing.done()):
            return 0
        blocks: list[bytes] = []
        size = taken = 0
        for chunk in chunks:
            if size >= SINK_WRITE_BYTES or self._stream.ends_with(chunk):
                break
            if chunk.type not in self._skip:
                try:
                    block = _ENCODED.block(chunk, self._to_wire, self._with_ids)
                except Exception:
                    break
                blocks.append(block)
                size += len(block)
            taken += 1
        if not blocks:
            return taken
        body = blocks[0] if len(blocks) == 1 else b"".join(blocks)
        self._sent_at = self._loop.time()
        try:
            self._writing = _run_until_it_waits(
                self.send({"type": "http.response.body", "body": body, "more_body": True})
            )
        except Exception as error:  # the response's task raises it; the pump's chunks stop there
            failed: asyncio.Future[None] = self._loop.create_future()
            failed.set_exception(error)
            self._writing = failed
            self._ready.set()
        return taken

    async def close_stream(self) -> None:
        """Stop reading the run (the response is over; the run goes on)."""
        await self._stream.aclose()

    async def _written(self) -> None:
        """Wait for the sink's write that waits for the client (its error is the response's)."""
        writing, self._writing = self._writing, None
        if writing is not None:
            await writing

    async def pump(self) -> None:
        try:
            async with contextlib.aclosing(self._stream.batches(self.sink)) as batches:
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
        """Every block held, as one write, once there is one, after the sink's write still waiting for the client;
        a ping when nothing was sent for ``heartbeat`` seconds; ``None`` when the pump has ended."""
        while not self._blocks:
            if self._writing is not None and self._writing.done():
                await self._written()  # raises what the write raised
            if self._ended:
                await self._written()
                return None
            if self._ping_due:
                self._ping_due = False
                if self._loop.time() >= self._sent_at + self._heartbeat:  # the sink sent nothing meanwhile
                    await self._written()
                    self._sent_at = self._loop.time()
                    return _PING
            self._idle = True
            try:
                await self._ready.wait()
            finally:
                self._idle = False
            self._ready.clear()
        await self._written()
        joined = b"".join(self._blocks)
        self._blocks.clear()
        self._held = 0
        self._taken.set()
        self._sent_at = self._loop.time()
        return joined


def _run_until_it_waits(awaitable: Awaitable[None]) -> asyncio.Task[None] | None:
    """Run ``awaitable`` on the caller's task until it first waits: ``None`` when it finished without waiting (a write
    the transport took at once), else a task that goes on with it. Raises what it raised before waiting."""
    steps = awaitable.__await__()
    try:
        waited_on = steps.send(None)
    except StopIteration:
        return None
    return asyncio.get_running_loop().create_task(_finish(_Resumed(steps, waited_on)))


async def _finish(resumed: _Resumed) -> None:
    await resumed


class _Resumed:
    """The steps of an awaitable begun by hand, now waiting on ``waited_on``: awaitable by a task that goes on with
    them (what a task does with a coroutine, from its second step)."""

    def __init__(self, steps: Generator[Any, Any, None], waited_on: Any) -> None:
        self._steps = steps
        self._waited_on = waited_on

    def __await__(self) -> Generator[Any, Any, None]:
        waited_on = self._waited_on
        while True:
            try:
                answer = yield waited_on
            except BaseException as thrown:  # a cancellation of the task goes on into the awaitable
                step = functools.partial(self._steps.throw, thrown)
            else:
                step = functools.partial(self._steps.send, answer)
            try:
                waited_on = step()
            except StopIteration:
                return


class _RelayedEvents(EventStream):
    """The SSE response of a relayed stream: hands a ``send`` to the relay once the head is on its way, the one the
    request came into the API app with when there is one (``transport_send.py``: the body skips the layers' wrappers,
    which only look at the head)."""

    def __init__(self, relay: _Relay, content: AsyncIterator[bytes], headers: dict[str, str]) -> None:
        super().__init__(content, headers=headers)
        self._relay = relay
        self._transport_send: Send | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self._transport_send = transport_send(scope)
        await super().__call__(scope, receive, send)

    async def stream_response(self, send: Send) -> None:
        self._relay.send = self._transport_send or send
        await super().stream_response(send)


async def _events(relay: _Relay) -> AsyncIterator[bytes]:
    """The stream's chunks as SSE blocks, with heartbeats while idle, then ``[DONE]``.

    When the client goes away this generator is closed: the reader stops, the run goes on.
    """
    relay.start_heartbeat()
    task = asyncio.get_running_loop().create_task(relay.pump())
    try:
        while (blocks := await relay.next_blocks()) is not None:
            yield blocks
        if relay.ending is not None:
            yield relay.ending
        yield DONE
    finally:
        relay.stop()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        await relay.close_stream()


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
    relay = _Relay(stream, to_wire, with_ids, skip, heartbeat)
    return _RelayedEvents(relay, _events(relay), {**SSE_HEADERS, **(headers or {})})
