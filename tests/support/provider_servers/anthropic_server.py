"""A scriptable stand-in for the Anthropic Messages API: a real HTTP/1.1 server on 127.0.0.1.

It speaks the streaming wire format the way the API sends it (``event: ...`` / ``data: {...}`` records in a
chunked ``text/event-stream`` body, JSON error bodies with ``request-id`` and ``retry-after`` headers), and
records every request::

    async with AnthropicServer() as server:
        server.script([
            text_response("Hello there", delay=0.01),                      # token by token
            MessageStream().tool_use("get_weather", {"city": "Paris"}).finish("tool_use"),
            error_response(429, "rate_limit_error", "slow down", retry_after=7),
            lambda request: text_response(f"you sent {len(request.json['messages'])} messages"),
        ])
        model = AnthropicModel("claude-test", base_url=server.base_url)
        ...
        server.requests[0].json["system"], server.requests[0].headers["x-api-key"]

Each request takes the next scripted response (a :class:`StreamResponse`, a :class:`JSONResponse`, a
:class:`MessageStream` builder, or a function of the :class:`RecordedRequest` returning one of them);
when the script is used up the server answers with ``default`` if given, else a 400 naming the problem.
Requests to other paths get the API's 404, and with ``api_key=`` set a wrong ``x-api-key`` gets its 401,
neither consuming the script. ``RecordedRequest.disconnected`` is set once the client has closed the
connection that carried the request, so tests can assert that cancelling closes the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import json
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import formatdate
from http import HTTPStatus
from types import TracebackType
from typing import Any, Self, TypeAlias

from tests.support.provider_servers.transcript_rules import anthropic_refusal

__all__ = [
    "AnthropicServer",
    "Drop",
    "JSONResponse",
    "MessageStream",
    "RawBytes",
    "RecordedRequest",
    "Responder",
    "SSEEvent",
    "Stall",
    "StreamResponse",
    "error_response",
    "text_response",
    "tool_use_response",
]

MESSAGES_PATH = "/v1/messages"


@dataclass
class RecordedRequest:
    """One request the server received. Header names are lower-case."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    disconnected: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def json(self) -> Any:
        """The body, parsed."""
        return json.loads(self.body)


# --- responses ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SSEEvent:
    """One server-sent event, written as ``event: <name>\\ndata: <compact json>\\n\\n`` after ``delay`` s."""

    name: str
    data: Mapping[str, Any]
    delay: float = 0.0

    def encode(self) -> bytes:
        return f"event: {self.name}\ndata: {json.dumps(self.data, separators=(',', ':'))}\n\n".encode()


@dataclass(frozen=True)
class Stall:
    """Send nothing for ``seconds`` (the connection stays open)."""

    seconds: float


@dataclass(frozen=True)
class Drop:
    """Close the connection at once, without ending the chunked body (a connection dropped mid-stream)."""


@dataclass(frozen=True)
class RawBytes:
    """Bytes written into the body as they are (to send malformed or oddly framed data)."""

    data: bytes
    delay: float = 0.0


StreamItem: TypeAlias = SSEEvent | Stall | Drop | RawBytes


@dataclass(frozen=True)
class StreamResponse:
    """A ``text/event-stream`` response, sent with chunked transfer encoding.

    ``chunk_size`` splits every write into HTTP chunks of at most that many bytes (sent apart), so
    events arrive cut at arbitrary points.
    """

    items: Sequence[StreamItem]
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    chunk_size: int | None = None


@dataclass(frozen=True)
class JSONResponse:
    """A JSON response (the API's error responses)."""

    status: int
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)


Response: TypeAlias = "StreamResponse | JSONResponse | MessageStream"
Responder: TypeAlias = (
    "StreamResponse | JSONResponse | MessageStream | Callable[[RecordedRequest], Response | Awaitable[Response]]"
)


def error_response(
    status: int,
    error_type: str,
    message: str,
    *,
    retry_after: float | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """An API error: ``{"type": "error", "error": {"type": ..., "message": ...}}`` (``retry-after`` if given)."""
    extra = dict(headers or {})
    if retry_after is not None:
        extra["retry-after"] = f"{retry_after:g}"
    body = {"type": "error", "error": {"type": error_type, "message": message}}
    return JSONResponse(status, body, extra)


_TOKEN = re.compile(r"\s*\S+|\s+")


def text_response(
    text: str | Sequence[str],
    *,
    delay: float = 0.0,
    input_tokens: int = 12,
    output_tokens: int | None = None,
    stop_reason: str = "end_turn",
    chunk_size: int | None = None,
) -> StreamResponse:
    """A complete text answer sent token by token (a string is cut into words), ``delay`` s apart."""
    stream = MessageStream(input_tokens=input_tokens).text(text, delay=delay)
    return stream.finish(stop_reason, output_tokens=output_tokens).build(chunk_size=chunk_size)


def tool_use_response(
    *calls: tuple[str, Mapping[str, Any] | str],
    text: str | None = None,
    chunks: int = 3,
    input_tokens: int = 12,
) -> StreamResponse:
    """An answer of optional text then ``(name, input)`` tool calls, their input JSON cut into ``chunks`` deltas."""
    stream = MessageStream(input_tokens=input_tokens)
    if text:
        stream.text(text)
    for name, tool_input in calls:
        stream.tool_use(name, tool_input, chunks=chunks)
    return stream.finish("tool_use").build()


class MessageStream:
    """Builds one streamed message as the API sends it: ``message_start``, a ``ping``, content blocks
    (``content_block_start`` / ``_delta`` / ``_stop``), then ``message_delta`` and ``message_stop``.

    Every method returns the builder; :meth:`build` (or handing the builder to ``script``) makes the
    :class:`StreamResponse`. Call :meth:`finish` to end the message properly; without it the body just ends
    after the last item (a stream cut short). ``delay`` is the pause before each delta event.
    """

    _ids = itertools.count(1)

    def __init__(
        self,
        *,
        model: str = "claude-test",
        input_tokens: int = 12,
        cache_creation_input_tokens: int = 0,
        cache_read_input_tokens: int = 0,
        message_id: str | None = None,
        ping: bool = True,
        delay: float = 0.0,
    ) -> None:
        self.delay = delay
        self.items: list[StreamItem] = []
        self._index = 0
        self._deltas = 0
        self._search_requests = 0
        self._last_server_tool_id: str | None = None
        usage = {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": cache_creation_input_tokens,
            "cache_read_input_tokens": cache_read_input_tokens,
            "output_tokens": 1,
        }
        message: dict[str, Any] = {
            "id": message_id or self._new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        }
        self.event("message_start", {"type": "message_start", "message": message}, delay=0.0)
        if ping:
            self.ping()

    @classmethod
    def _new_id(cls, prefix: str) -> str:
        return f"{prefix}_01Test{next(cls._ids):018d}"

    def event(self, name: str, data: Mapping[str, Any], *, delay: float | None = None) -> Self:
        """Any event, as given."""
        self.items.append(SSEEvent(name, data, self.delay if delay is None else delay))
        return self

    def ping(self) -> Self:
        return self.event("ping", {"type": "ping"}, delay=0.0)

    def _start(self, block: Mapping[str, Any]) -> int:
        index = self._index
        self._index += 1
        self.event(
            "content_block_start", {"type": "content_block_start", "index": index, "content_block": block}, delay=0.0
        )
        return index

    def _delta(self, index: int, delta: Mapping[str, Any], delay: float | None) -> None:
        self._deltas += 1
        self.event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}, delay=delay)

    def _stop(self, index: int) -> None:
        self.event("content_block_stop", {"type": "content_block_stop", "index": index}, delay=0.0)

    def text(self, text: str | Sequence[str], *, delay: float | None = None) -> Self:
        """A text block; a string is sent word by word, a sequence one ``text_delta`` per item."""
        tokens = _TOKEN.findall(text) if isinstance(text, str) else list(text)
        index = self._start({"type": "text", "text": ""})
        for token in tokens:
            self._delta(index, {"type": "text_delta", "text": token}, delay)
        self._stop(index)
        return self

    def _input_deltas(
        self, index: int, tool_input: Mapping[str, Any] | str, chunks: int | Sequence[str], delay: float | None
    ) -> None:
        self._delta(index, {"type": "input_json_delta", "partial_json": ""}, delay)
        if isinstance(chunks, int):
            text = tool_input if isinstance(tool_input, str) else json.dumps(tool_input)
            size = max(1, -(-len(text) // max(1, chunks)))
            pieces = [text[i : i + size] for i in range(0, len(text), size)]
        else:
            pieces = list(chunks)
        for piece in pieces:
            self._delta(index, {"type": "input_json_delta", "partial_json": piece}, delay)

    def tool_use(
        self,
        name: str,
        tool_input: Mapping[str, Any] | str = "",
        *,
        id: str | None = None,
        chunks: int | Sequence[str] = 3,
        delay: float | None = None,
    ) -> Self:
        """A ``tool_use`` block; its input (a dict, or raw JSON text) arrives as ``input_json_delta`` fragments:
        ``chunks`` equal pieces, or exactly the given pieces. The first delta is empty, as the API sends it."""
        index = self._start({"type": "tool_use", "id": id or self._new_id("toolu"), "name": name, "input": {}})
        self._input_deltas(index, tool_input, chunks, delay)
        self._stop(index)
        return self

    def server_tool_use(
        self,
        tool_input: Mapping[str, Any] | str,
        *,
        name: str = "web_search",
        id: str | None = None,
        chunks: int | Sequence[str] = 1,
        delay: float | None = None,
    ) -> Self:
        """A ``server_tool_use`` block (the provider runs the tool), e.g. ``{"query": "..."}`` for web search."""
        call_id = id or self._new_id("srvtoolu")
        self._last_server_tool_id = call_id
        if name == "web_search":
            self._search_requests += 1
        index = self._start({"type": "server_tool_use", "id": call_id, "name": name, "input": {}})
        self._input_deltas(index, tool_input, chunks, delay)
        self._stop(index)
        return self

    def web_search_result(
        self, results: Sequence[Mapping[str, Any]] | Mapping[str, Any], *, tool_use_id: str | None = None
    ) -> Self:
        """A ``web_search_tool_result`` block for the last server tool call: a list of ``{"url", "title",
        "page_age"?}`` results (completed with ``type`` and ``encrypted_content``), or an error object such as
        ``{"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}``."""
        content: Any
        if isinstance(results, Mapping):
            content = dict(results)
        else:
            content = [
                {
                    "type": "web_search_result",
                    "title": result.get("title", ""),
                    "url": result["url"],
                    "encrypted_content": result.get("encrypted_content", f"EqgfCioIARgBIiQ{n:04d}test"),
                    "page_age": result.get("page_age"),
                }
                for n, result in enumerate(results)
            ]
        call_id = tool_use_id or self._last_server_tool_id or self._new_id("srvtoolu")
        index = self._start({"type": "web_search_tool_result", "tool_use_id": call_id, "content": content})
        self._stop(index)
        return self

    def error(self, error_type: str = "overloaded_error", message: str = "Overloaded") -> Self:
        """An ``error`` event (the API's mid-stream failure; it ends the stream)."""
        return self.event("error", {"type": "error", "error": {"type": error_type, "message": message}})

    def stall(self, seconds: float) -> Self:
        self.items.append(Stall(seconds))
        return self

    def drop(self) -> Self:
        self.items.append(Drop())
        return self

    def raw(self, data: bytes, *, delay: float = 0.0) -> Self:
        self.items.append(RawBytes(data, delay))
        return self

    def cut(self, position: int, keep: int) -> Self:
        """Damage the event at ``position`` (negative counts from the end): its ``data:`` JSON is cut after
        ``keep`` characters, and the stream goes on after it."""
        event = self.items[position]
        if not isinstance(event, SSEEvent):
            raise ValueError(f"item {position} is not an event: {event!r}")
        data = json.dumps(event.data, separators=(",", ":"))[:keep]
        self.items[position] = RawBytes(f"event: {event.name}\ndata: {data}\n\n".encode(), event.delay)
        return self

    def finish(
        self,
        stop_reason: str | None = "end_turn",
        *,
        output_tokens: int | None = None,
        input_tokens: int | None = None,
        stop_sequence: str | None = None,
    ) -> Self:
        """``message_delta`` (stop reason, cumulative usage) and ``message_stop``. ``output_tokens`` defaults to
        the number of deltas sent; ``input_tokens`` is repeated in the usage only when given."""
        usage: dict[str, Any] = {}
        if input_tokens is not None:
            usage["input_tokens"] = input_tokens
        usage["output_tokens"] = self._deltas if output_tokens is None else output_tokens
        if self._search_requests:
            usage["server_tool_use"] = {"web_search_requests": self._search_requests}
        delta = {"stop_reason": stop_reason, "stop_sequence": stop_sequence}
        self.event("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}, delay=0.0)
        return self.event("message_stop", {"type": "message_stop"}, delay=0.0)

    def build(self, *, chunk_size: int | None = None, headers: Mapping[str, str] | None = None) -> StreamResponse:
        return StreamResponse(list(self.items), headers=dict(headers or {}), chunk_size=chunk_size)


# --- the server --------------------------------------------------------------------------------------------------


class AnthropicServer:
    """The stand-in API on ``127.0.0.1``; use as ``async with AnthropicServer() as server``.

    ``base_url`` is what to give the model (``http://127.0.0.1:<port>``); ``requests`` lists every request
    in arrival order. Connections are kept alive between responses, as the API does.
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        default: Responder | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.api_key = api_key
        self.default = default
        self.requests: list[RecordedRequest] = []
        self._host = host
        self._port = port
        self._script: list[Responder] = []
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._request_ids = itertools.count(1)

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._connection, self._host, self._port)
        self._port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is None:
            return
        self._server.close()
        # Hang up on every connection (a client's pool keeps them open between requests): each handler then
        # sees the end of its stream and returns. Cancelling a handler waiting for a request instead can leave
        # it pending for good on Python 3.11, whose stream server watches its handler tasks.
        for writer in list(self._writers):
            writer.close()
        if self._connections:
            _, stuck = await asyncio.wait(list(self._connections), timeout=5)
            for task in stuck:
                task.cancel()
            await asyncio.gather(*stuck, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self._port}"

    @property
    def pending(self) -> int:
        """Scripted responses not used yet."""
        return len(self._script)

    def script(self, responses: Responder | Iterable[Responder]) -> None:
        """Queue responses (one or several) for the next requests, after those already queued."""
        if isinstance(responses, (StreamResponse, JSONResponse, MessageStream)) or callable(responses):
            self._script.append(responses)
        else:
            self._script.extend(responses)

    async def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Wait until ``count`` requests have arrived."""
        async with asyncio.timeout(timeout):
            while len(self.requests) < count:
                await asyncio.sleep(0.005)
        return self.requests

    # --- per connection ---

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        self._writers.add(writer)
        served: list[RecordedRequest] = []
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                self.requests.append(request)
                served.append(request)
                response = await self._response_for(request)
                if not await self._send(response, reader, writer):
                    break
                if request.headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        except asyncio.CancelledError:
            pass  # only close() cancels a connection; ending quietly keeps asyncio from logging it
        finally:
            writer.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()
            for request in served:
                request.disconnected.set()
            self._connections.discard(task)
            self._writers.discard(writer)

    async def _response_for(self, request: RecordedRequest) -> StreamResponse | JSONResponse:
        if request.method != "POST" or request.path.split("?")[0] != MESSAGES_PATH:
            return error_response(404, "not_found_error", "Not Found")
        if self.api_key is not None:
            sent = request.headers.get("x-api-key")
            if sent != self.api_key:
                message = "invalid x-api-key" if sent else "x-api-key header is required"
                return error_response(401, "authentication_error", message)
        try:
            body = request.json
        except ValueError:
            body = None
        why = anthropic_refusal(body.get("messages")) if isinstance(body, dict) else None
        if why is not None:  # the Messages API's 400 for a tool_use without its result, and the like
            return error_response(400, "invalid_request_error", why)
        responder = self._script.pop(0) if self._script else self.default
        if responder is None:
            return error_response(
                400,
                "invalid_request_error",
                f"AnthropicServer: no scripted response left for request #{len(self.requests)}",
            )
        produced: Any = responder(request) if callable(responder) else responder
        if inspect.isawaitable(produced):
            produced = await produced
        if isinstance(produced, MessageStream):
            return produced.build()
        assert isinstance(produced, (StreamResponse, JSONResponse)), produced
        return produced

    def _head(self, status: int, headers: Mapping[str, str]) -> bytes:
        try:
            reason = HTTPStatus(status).phrase
        except ValueError:
            reason = "Error"  # 529 and other codes outside the standard list
        lines = [f"HTTP/1.1 {status} {reason}", f"date: {formatdate(usegmt=True)}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def _send(
        self, response: StreamResponse | JSONResponse, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Write the response; False when the connection is to be (or was) closed."""
        request_id = f"req_test{next(self._request_ids):016d}"
        if isinstance(response, JSONResponse):
            payload = {**response.body, "request_id": request_id} if isinstance(response.body, dict) else response.body
            body = json.dumps(payload, separators=(",", ":")).encode()
            headers = {
                "content-type": "application/json",
                "content-length": str(len(body)),
                "request-id": request_id,
                "connection": "keep-alive",
                **response.headers,
            }
            writer.write(self._head(response.status, headers) + body)
            await writer.drain()
            return True
        headers = {
            "content-type": "text/event-stream; charset=utf-8",
            "transfer-encoding": "chunked",
            "cache-control": "no-cache",
            "connection": "keep-alive",
            "request-id": request_id,
            **response.headers,
        }
        writer.write(self._head(response.status, headers))
        await writer.drain()
        sending = asyncio.create_task(self._write_body(response, writer))
        client_gone = asyncio.create_task(reader.read(1))
        done, _ = await asyncio.wait([sending, client_gone], return_when=asyncio.FIRST_COMPLETED)
        if sending in done:
            client_gone.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                await client_gone
            return sending.result()
        sending.cancel()  # the client closed the connection (or sent something unexpected) mid-stream
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await sending
        return False

    async def _write_body(self, response: StreamResponse, writer: asyncio.StreamWriter) -> bool:
        for item in response.items:
            if isinstance(item, Stall):
                await asyncio.sleep(item.seconds)
                continue
            if isinstance(item, Drop):
                writer.close()
                return False
            if item.delay:
                await asyncio.sleep(item.delay)
            data = item.encode() if isinstance(item, SSEEvent) else item.data
            size = response.chunk_size or len(data)
            for start in range(0, len(data), max(1, size)):
                piece = data[start : start + size]
                writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                await writer.drain()
                if response.chunk_size:
                    await asyncio.sleep(0)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True


async def _read_request(reader: asyncio.StreamReader) -> RecordedRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, path, _ = request_line.split(" ", 2)
    headers: dict[str, str] = {}
    for line in header_lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        parts: list[bytes] = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            data = await reader.readexactly(size + 2)
            if size == 0:
                break
            parts.append(data[:-2])
        body = b"".join(parts)
    else:
        body = await reader.readexactly(int(headers.get("content-length", "0")))
    return RecordedRequest(method, path, headers, body)
