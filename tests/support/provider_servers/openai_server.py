"""A scriptable OpenAI-compatible HTTP server on 127.0.0.1, for adapter tests, end-to-end tests and benchmarks.

It speaks HTTP/1.1 over a real socket and streams Chat Completions the way OpenAI does: a chunked
``text/event-stream`` body of ``data: {chat.completion.chunk}\\n\\n`` events ending in ``data: [DONE]\\n\\n``.
Every request is recorded (method, path, headers, JSON body) so tests can assert what the client sent::

    async with OpenAIServer() as server:
        server.script(text_stream("Hello there", delay=0.01), error_reply(429, "slow down", retry_after=7))
        model = openai_compatible("gpt-test", base_url=server.base_url, api_key_env=None)
        ...
        assert server.requests[0].json["model"] == "gpt-test"

Replies are used in order, one per request; when the script is empty, :meth:`OpenAIServer.respond_with`'s
handler (if any) makes the reply, else the server answers 400 "no scripted reply left". A streamed
reply is a list of items: chunk dicts (``chunk(...)``; ``id``/``object``/``created``/``model`` are filled
in), raw ``data:`` strings such as :data:`DONE`, error objects (``error_event(...)``), damaged chunks
(:class:`Cut`), and the controls :class:`Sleep`, :class:`Stall` and :class:`Drop`.

``OpenAIServer(dialect="llama.cpp")`` checks the request as llama.cpp's server does before replying: an
assistant message whose ``content`` is ``null`` or missing gets llama.cpp's HTTP 500 (which quotes the
whole conversation back) and does not use up a scripted reply. :func:`tool_calls_stream` can repeat the call
id and name in every argument fragment and copy the first call into a legacy ``function_call`` field, as
some OpenAI-compatible servers do; :func:`function_call_stream` sends only the legacy field.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import json
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from tests.support.provider_servers.transcript_rules import openai_refusal

__all__ = [
    "DONE",
    "LLAMA_CPP_CONTENT_ERROR",
    "Cut",
    "Dialect",
    "Drop",
    "OpenAIServer",
    "Raw",
    "RecordedRequest",
    "Reply",
    "Sleep",
    "Stall",
    "ToolCallSpec",
    "chunk",
    "dropped_after",
    "error_event",
    "error_reply",
    "function_call_stream",
    "json_reply",
    "text_stream",
    "tool_calls_stream",
]

DONE = "[DONE]"


@dataclass(frozen=True)
class Sleep:
    """Pause the stream (ends early if the client hangs up)."""

    seconds: float


@dataclass(frozen=True)
class Stall:
    """Send nothing more until the client hangs up (or ``seconds`` pass), then close without finishing."""

    seconds: float = 30.0


@dataclass(frozen=True)
class Drop:
    """Close the connection mid-body, without the final chunk: a dropped connection (``reset``: send a RST)."""

    reset: bool = False


@dataclass(frozen=True)
class Raw:
    """Bytes written into the body as they are (for malformed or unusual framing)."""

    data: bytes


@dataclass(frozen=True)
class Cut:
    """A chunk (envelope filled in) whose ``data:`` JSON is cut after ``keep`` characters: a damaged event."""

    chunk: Mapping[str, Any]
    keep: int


StreamItem: TypeAlias = Mapping[str, Any] | str | Sleep | Stall | Drop | Raw | Cut
Dialect: TypeAlias = Literal["openai", "llama.cpp"]

LLAMA_CPP_CONTENT_ERROR = (
    "Failed to parse messages: Invalid 'content' type: expected string or array, got null "
    "(ref: https://github.com/ggml-org/llama.cpp/issues/8367); messages = "
)
"""The start of llama.cpp's error for ``"content": null``; the server appends the request's messages."""


@dataclass
class Reply:
    """One scripted HTTP response: an SSE stream when ``events`` is given, else a plain ``body``."""

    status: int = 200
    events: Sequence[StreamItem] | None = None
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds before the status line is sent (time to first byte)."""


@dataclass
class RecordedRequest:
    """A request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    raw_body: bytes
    disconnected: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the client closed the connection before the reply was complete."""
    completed: bool = False
    """True when the whole reply was sent."""

    @property
    def json(self) -> dict[str, Any]:
        """The body parsed as a JSON object (``{}`` when it is not one)."""
        try:
            parsed = json.loads(self.raw_body)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}


Handler: TypeAlias = Callable[[RecordedRequest], "Reply | Awaitable[Reply]"]


# -- builders -------------------------------------------------------------------------------------


def chunk(
    delta: Mapping[str, Any] | None = None,
    *,
    finish_reason: str | None = None,
    usage: tuple[int, int] | None = None,
    choices: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """A ``chat.completion.chunk`` body (envelope fields are filled in when sent).

    ``usage=(prompt, completion)`` with no delta gives the final usage chunk (``choices: []``).
    """
    body: dict[str, Any] = {}
    if choices is not None:
        body["choices"] = list(choices)
    elif delta is None and finish_reason is None and usage is not None:
        body["choices"] = []
    else:
        body["choices"] = [{"index": 0, "delta": dict(delta or {}), "logprobs": None, "finish_reason": finish_reason}]
    if usage is not None:
        prompt, completion = usage
        body["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        }
    return body


_TOKEN = re.compile(r"\S+\s*|\s+")


def _tail(finish_reason: str, usage: tuple[int, int] | None) -> list[StreamItem]:
    items: list[StreamItem] = [chunk({}, finish_reason=finish_reason)]
    if usage is not None:
        items.append(chunk(usage=usage))
    items.append(DONE)
    return items


def _paced(pieces: Sequence[Mapping[str, Any]], delay: float) -> list[StreamItem]:
    items: list[StreamItem] = []
    for piece in pieces:
        if delay:
            items.append(Sleep(delay))
        items.append(chunk(piece))
    return items


def text_stream(
    text: str | Sequence[str],
    *,
    delay: float = 0.0,
    first_delay: float = 0.0,
    usage: tuple[int, int] | None = (12, 7),
    finish_reason: str = "stop",
    annotations: Sequence[Mapping[str, Any]] = (),
) -> Reply:
    """A streamed text answer, token by token (a string is split into words), ``delay`` s before each token.

    ``first_delay`` is sent before the status line. ``annotations`` (e.g. ``url_citation``) ride on the
    last content chunk, as search models send them.
    """
    tokens = _TOKEN.findall(text) if isinstance(text, str) else list(text)
    pieces: list[dict[str, Any]] = [{"content": token} for token in tokens]
    if annotations:
        pieces.append({"annotations": [dict(a) for a in annotations]})
    items: list[StreamItem] = [chunk({"role": "assistant", "content": "", "refusal": None})]
    items += _paced(pieces, delay)
    items += _tail(finish_reason, usage)
    return Reply(events=items, delay=first_delay)


@dataclass(frozen=True)
class ToolCallSpec:
    """A tool call to stream: ``arguments`` is JSON text (may be invalid on purpose) or a dict."""

    name: str
    arguments: str | Mapping[str, Any] = "{}"
    id: str | None = None


def tool_calls_stream(
    calls: Sequence[ToolCallSpec],
    *,
    text: str = "",
    fragment_size: int = 4,
    interleave: bool = True,
    include_ids: bool = True,
    repeat_header: bool = False,
    legacy_function_call: bool = False,
    delay: float = 0.0,
    usage: tuple[int, int] | None = (30, 18),
    finish_reason: str = "tool_calls",
) -> Reply:
    """Text (optional) then tool calls whose arguments arrive in ``fragment_size``-character pieces.

    ``interleave=True`` alternates the calls' fragments by ``index`` (round robin); ``False`` sends one call
    after the other, as OpenAI does. ``include_ids=False`` omits the call ids, as some local servers do.
    ``repeat_header=True`` repeats the id, type and name in every argument fragment, and
    ``legacy_function_call=True`` copies the first call's fragments into a ``function_call`` field beside
    ``tool_calls``: two habits of OpenAI-compatible servers that must not split or double a call.
    """
    fragments: list[list[str]] = []
    for spec in calls:
        args = spec.arguments if isinstance(spec.arguments, str) else json.dumps(spec.arguments)
        fragments.append([args[i : i + fragment_size] for i in range(0, len(args), fragment_size)])

    def fragment(index: int, arguments: str, *, opening: bool) -> dict[str, Any]:
        spec = calls[index]
        call: dict[str, Any] = {"index": index}
        if opening or repeat_header:
            if include_ids:
                call["id"] = spec.id or f"call_{index}_{spec.name}"
            call["type"] = "function"
            call["function"] = {"name": spec.name, "arguments": arguments}
        else:
            call["function"] = {"arguments": arguments}
        delta: dict[str, Any] = {"tool_calls": [call]}
        if legacy_function_call and index == 0:
            delta["function_call"] = {"name": spec.name, "arguments": arguments}
        return delta

    pieces: list[dict[str, Any]] = [{"content": token} for token in _TOKEN.findall(text)]
    if interleave:
        rounds = max((len(f) for f in fragments), default=0)
        for round_number in range(max(rounds, 1)):
            for index in range(len(calls)):
                if round_number == 0:
                    pieces.append(fragment(index, "", opening=True))
                if round_number < len(fragments[index]):
                    pieces.append(fragment(index, fragments[index][round_number], opening=False))
    else:
        for index in range(len(calls)):
            pieces.append(fragment(index, "", opening=True))
            pieces.extend(fragment(index, f, opening=False) for f in fragments[index])
    items: list[StreamItem] = [chunk({"role": "assistant", "content": None})]
    items += _paced(pieces, delay)
    items += _tail(finish_reason, usage)
    return Reply(events=items)


def function_call_stream(
    name: str, arguments: str | Mapping[str, Any], *, fragment_size: int = 4, finish_reason: str = "function_call"
) -> Reply:
    """One call sent only in the legacy ``function_call`` field (no ``tool_calls``), as older servers do."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    pieces = [{"function_call": {"name": name, "arguments": ""}}]
    steps = range(0, len(args), fragment_size)
    pieces += [{"function_call": {"arguments": args[i : i + fragment_size]}} for i in steps]
    items: list[StreamItem] = [chunk({"role": "assistant", "content": None})]
    items += _paced(pieces, 0.0)
    items += _tail(finish_reason, None)
    return Reply(events=items)


def dropped_after(reply: Reply, items: int, *, reset: bool = False) -> Reply:
    """``reply`` with the connection dropped after its first ``items`` stream items (e.g. mid tool-call arguments)."""
    if reply.events is None:
        raise ValueError("dropped_after needs a streamed reply")
    return Reply(status=reply.status, events=[*reply.events[:items], Drop(reset=reset)], headers=reply.headers)


def error_event(message: str, *, type: str = "server_error", code: str | int | None = None) -> dict[str, Any]:
    """An ``error`` object sent as a ``data:`` event mid-stream."""
    return {"error": {"message": message, "type": type, "param": None, "code": code}}


def error_reply(
    status: int,
    message: str,
    *,
    type: str | None = None,
    code: str | None = None,
    retry_after: float | None = None,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """An HTTP error with OpenAI's JSON error body (and ``retry-after`` when given)."""
    default_types = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error"}
    all_headers = dict(headers or {})
    if retry_after is not None:
        all_headers["retry-after"] = f"{retry_after:g}"
    error_type = type or default_types.get(status, "requests" if status == 429 else "server_error")
    body = {"error": {"message": message, "type": error_type, "param": None, "code": code}}
    return Reply(status=status, body=body, headers=all_headers)


def json_reply(body: Any, *, status: int = 200) -> Reply:
    """A plain JSON response (e.g. a non-streamed ``chat.completion``)."""
    return Reply(status=status, body=body)


# -- the server -----------------------------------------------------------------------------------

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


class _Connection:
    """Reads a client socket in the background, so the server notices a hang-up while it streams."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self._buffer = bytearray()
        self._more = asyncio.Event()
        self.eof = asyncio.Event()
        self._task = asyncio.create_task(self._pump())

    async def _pump(self) -> None:
        try:
            while data := await self._reader.read(65536):
                self._buffer += data
                self._more.set()
        except (ConnectionError, OSError):
            pass
        finally:
            self.eof.set()
            self._more.set()

    async def _wait(self) -> bool:
        if self.eof.is_set():
            return False
        self._more.clear()
        await self._more.wait()
        return True

    async def read_until(self, separator: bytes) -> bytes | None:
        while (end := self._buffer.find(separator)) < 0:
            if not await self._wait():
                return None
        end += len(separator)
        data = bytes(self._buffer[:end])
        del self._buffer[:end]
        return data

    async def read_exactly(self, size: int) -> bytes | None:
        while len(self._buffer) < size:
            if not await self._wait():
                return None
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    async def hangs_up_within(self, seconds: float) -> bool:
        """Wait up to ``seconds``; True as soon as the client closes its side."""
        try:
            await asyncio.wait_for(self.eof.wait(), seconds)
        except TimeoutError:
            return False
        return True

    def stop(self) -> None:
        """Stop reading; waiters see end of file."""
        self._task.cancel()
        self.eof.set()
        self._more.set()


class OpenAIServer:
    """A real HTTP server speaking OpenAI's streaming Chat Completions, scripted reply by reply."""

    def __init__(
        self, *, host: str = "127.0.0.1", port: int = 0, default_model: str = "gpt-test", dialect: Dialect = "openai"
    ) -> None:
        self._host = host
        self._dialect = dialect
        self.rejected: list[RecordedRequest] = []
        """Requests the dialect's checks refused (they used up no scripted reply)."""
        self._port = port
        self._default_model = default_model
        self._server: asyncio.Server | None = None
        self._queue: list[Reply] = []
        self._handler: Handler | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._connections: set[_Connection] = set()
        self._ids = itertools.count(1)
        self.requests: list[RecordedRequest] = []
        self.connections_opened = 0

    async def __aenter__(self) -> OpenAIServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self._host, self._port)
        self._port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        # Wake every connection handler (they see a hang-up) rather than cancelling them: asyncio's
        # stream-server callback of Python 3.11 logs an error for a cancelled handler task.
        for connection in list(self._connections):
            connection.stop()
        for writer in list(self._writers):
            writer.close()
        if self._tasks:
            _, stuck = await asyncio.wait(list(self._tasks), timeout=5)
            for task in stuck:
                task.cancel()
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        """The API root to give a client: ``http://127.0.0.1:<port>/v1``."""
        return f"http://{self._host}:{self._port}/v1"

    def script(self, *replies: Reply | str) -> None:
        """Queue replies, used in order (a string is shorthand for ``text_stream(string)``)."""
        self._queue.extend(text_stream(reply) if isinstance(reply, str) else reply for reply in replies)

    def respond_with(self, handler: Handler | None) -> None:
        """Make replies with ``handler(request)`` (sync or async) once the script is used up."""
        self._handler = handler

    @property
    def pending(self) -> int:
        """Scripted replies not used yet."""
        return len(self._queue)

    async def _reply_for(self, request: RecordedRequest) -> Reply:
        refusal = self._dialect_refusal(request) or self._transcript_refusal(request)
        if refusal is not None:
            self.rejected.append(request)
            return refusal
        if self._queue:
            return self._queue.pop(0)
        if self._handler is not None:
            made = self._handler(request)
            return await made if inspect.isawaitable(made) else made
        return error_reply(400, f"OpenAIServer: no scripted reply left for request #{len(self.requests)}")

    def _transcript_refusal(self, request: RecordedRequest) -> Reply | None:
        """OpenAI's 400 for a tool call without its result, a result without its call, two results for one call."""
        if request.method != "POST" or not isinstance(request.json, dict):
            return None
        why = openai_refusal(request.json.get("messages"))
        return None if why is None else error_reply(400, why)

    def _dialect_refusal(self, request: RecordedRequest) -> Reply | None:
        """llama.cpp's answer to a message without string (or array) content: HTTP 500 quoting the messages."""
        if self._dialect != "llama.cpp":
            return None
        messages = request.json.get("messages")
        if not isinstance(messages, list):
            return None
        if all(isinstance(m, dict) and isinstance(m.get("content"), (str, list)) for m in messages):
            return None
        message = LLAMA_CPP_CONTENT_ERROR + json.dumps(messages, indent=2)
        return Reply(status=500, body={"error": {"code": 500, "message": message, "type": "server_error"}})

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        self._writers.add(writer)
        self.connections_opened += 1
        connection = _Connection(reader)
        self._connections.add(connection)
        try:
            while True:
                request = await self._read_request(connection)
                if request is None:
                    return
                self.requests.append(request)
                reply = await self._reply_for(request)
                keep_alive = await self._send(reply, request, connection, writer)
                if not keep_alive or request.headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, OSError):
            pass
        finally:
            connection.stop()
            self._connections.discard(connection)
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            if task is not None:
                self._tasks.discard(task)

    async def _read_request(self, connection: _Connection) -> RecordedRequest | None:
        head = await connection.read_until(b"\r\n\r\n")
        if head is None:
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = bytearray()
            while True:
                size_line = await connection.read_until(b"\r\n")
                if size_line is None:
                    return None
                size = int(size_line.split(b";")[0], 16)
                data = await connection.read_exactly(size + 2)
                if data is None:
                    return None
                if size == 0:
                    break
                body += data[:-2]
            raw = bytes(body)
        else:
            raw = await connection.read_exactly(int(headers.get("content-length", "0"))) or b""
        return RecordedRequest(method=method, path=path, headers=headers, raw_body=raw)

    async def _send(
        self, reply: Reply, request: RecordedRequest, connection: _Connection, writer: asyncio.StreamWriter
    ) -> bool:
        """Write one reply; False when the connection must close (hang-up, drop, stall)."""
        if reply.delay and await connection.hangs_up_within(reply.delay):
            request.disconnected.set()
            return False
        # Servers send no reason phrase for codes they do not know (and HTTP/2 never does).
        status_line = f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, '')}\r\n"
        headers = {"date": time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())}
        headers["x-request-id"] = f"req_{len(self.requests)}"
        if reply.events is None:
            body = reply.body
            data = body if isinstance(body, bytes) else (body if isinstance(body, str) else json.dumps(body)).encode()
            headers["content-type"] = "application/json"
            headers["content-length"] = str(len(data))
            headers.update({k.lower(): v for k, v in reply.headers.items()})
            writer.write(_head(status_line, headers) + data)
            await writer.drain()
            request.completed = True
            return True

        headers["content-type"] = "text/event-stream; charset=utf-8"
        headers["transfer-encoding"] = "chunked"
        headers["cache-control"] = "no-cache"
        headers["connection"] = "keep-alive"
        headers.update({k.lower(): v for k, v in reply.headers.items()})
        writer.write(_head(status_line, headers))
        await writer.drain()
        envelope = self._envelope(request)
        stream_options = request.json.get("stream_options")
        include_usage = isinstance(stream_options, dict) and bool(stream_options.get("include_usage"))
        for item in reply.events:
            if connection.eof.is_set():
                request.disconnected.set()
                return False
            if isinstance(item, Sleep):
                if await connection.hangs_up_within(item.seconds):
                    request.disconnected.set()
                    return False
                continue
            if isinstance(item, Stall):
                if await connection.hangs_up_within(item.seconds):
                    request.disconnected.set()
                return False
            if isinstance(item, Drop):
                if item.reset:
                    writer.transport.abort()
                return False  # the caller closes the socket without the terminating chunk
            payload = _event_bytes(item, envelope, include_usage)
            try:
                writer.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
                await writer.drain()
            except (ConnectionError, OSError):
                request.disconnected.set()
                return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        request.completed = True
        return True

    def _envelope(self, request: RecordedRequest) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": request.json.get("model") or self._default_model,
            "service_tier": "default",
            "system_fingerprint": "fp_tempo",
        }


def _event_bytes(item: Mapping[str, Any] | str | Raw | Cut, envelope: Mapping[str, Any], include_usage: bool) -> bytes:
    """What the stream sends for one item: raw bytes as given, a chunk cut short, an event's data as given, or a chunk
    (in the completion's envelope when it has choices)."""
    if isinstance(item, Raw):
        return item.data
    if isinstance(item, Cut):
        whole = json.dumps({**envelope, **item.chunk}, separators=(",", ":"))
        return f"data: {whole[: item.keep]}\n\n".encode()
    if isinstance(item, str):
        return f"data: {item}\n\n".encode()
    event = {**envelope, **item} if "choices" in item else dict(item)
    if "choices" in item and include_usage and "usage" not in item:
        event["usage"] = None  # OpenAI sends "usage": null on every chunk but the last
    return f"data: {json.dumps(event, separators=(',', ':'))}\n\n".encode()


def _head(status_line: str, headers: Mapping[str, str]) -> bytes:
    return (status_line + "".join(f"{name}: {value}\r\n" for name, value in headers.items()) + "\r\n").encode()
