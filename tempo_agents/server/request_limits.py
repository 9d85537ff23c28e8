"""What a request body may be, checked at the door before any route reads it.

A body is read at most up to ``max_body_bytes`` (a ``Content-Length`` over it is refused without reading
anything): 413. A JSON body is then decoded once more here and refused with a 400 naming the field when
it nests deeper than ``MAX_JSON_DEPTH`` (Temporal's data converter cannot decode such a payload again, so
the run would fail on its own input) or holds a lone UTF-16 surrogate (``"\\ud800"``: valid JSON, no
valid Unicode, so it cannot be written anywhere). Everything else goes on untouched; the route sees the
same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["MAX_BODY_BYTES", "MAX_JSON_DEPTH", "RequestLimits", "body_problem"]

MAX_BODY_BYTES = 1024 * 1024
"""The default largest request body, 1 MiB: a run's start carries its messages in Temporal's workflow input,
whose blobs Temporal refuses over 2 MB."""
MAX_JSON_DEPTH = 64
"""The deepest nesting of arrays and objects a JSON body may have (the body itself is depth 1)."""

DRAINED_BYTES = 64 * 1024 * 1024
"""How much of a refused body is still read (and dropped) before the answer, so that its sender reads the 413;
past it the answer is sent at once and the connection closed."""

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _lone_surrogate(text: str) -> str | None:
    try:
        text.encode()
    except UnicodeEncodeError as error:
        return f"\\u{ord(text[error.start]):04x}"
    return None


def _shown(key: str) -> str:
    """A key as a field name in an answer: a lone surrogate in it written as its escape."""
    return key.encode("utf-8", "backslashreplace").decode()


def _walk(value: Any) -> Iterator[tuple[Any, list[str], int]]:
    """Every value in a decoded JSON document with its path and depth, without recursion."""
    stack: list[tuple[Any, list[str], int]] = [(value, [], 1)]
    while stack:
        item, path, depth = stack.pop()
        yield item, path, depth
        if isinstance(item, dict):
            for key, child in item.items():
                shown = _shown(key)
                stack.append((child, [*path, shown], depth + 1))
                stack.append((key, [*path, shown], depth))  # checked first: a key names its value's field
        elif isinstance(item, list):
            for index, child in enumerate(item):
                stack.append((child, [*path, str(index)], depth + 1))


def _sound(document: Any, max_depth: int) -> bool:
    """Whether nothing in the document is too deep or holds a lone surrogate (the fast pass: no paths)."""
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            if depth > max_depth:
                return False
            for key, child in item.items():
                if _lone_surrogate(key) is not None:
                    return False
                stack.append((child, depth + 1))
        elif isinstance(item, list):
            if depth > max_depth:
                return False
            stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, str) and _lone_surrogate(item) is not None:
            return False
    return True


def body_problem(document: Any, max_depth: int = MAX_JSON_DEPTH) -> dict[str, str] | None:
    """What makes a decoded JSON body unusable (an ``issues`` entry: field and message), or ``None``."""
    if _sound(document, max_depth):
        return None
    for item, path, depth in _walk(document):
        if isinstance(item, dict | list) and depth > max_depth:
            field = ".".join(path[:3] + (["…"] if len(path) > 3 else [])) or "body"
            return {"field": field, "message": f"nested more than {max_depth} levels deep"}
        if isinstance(item, str):
            surrogate = _lone_surrogate(item)
            if surrogate is not None:
                field = ".".join(path) or "body"
                if len(field) > 200:
                    field = field[:200] + "…"
                return {"field": field, "message": f"a lone surrogate ({surrogate}) is not valid Unicode text"}
    return None


async def _answer(send: Send, status: int, body: dict[str, Any], *, close: bool) -> None:
    encoded = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(encoded)).encode())]
    if close:  # the rest of the body was not read: the connection cannot carry another request
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": encoded})


def _too_large(limit: int) -> dict[str, Any]:
    return {"error": f"Request body too large: at most {limit} bytes are accepted"}


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _json_body(scope: Scope) -> bool:
    """Whether the route will decode the body as JSON (FastAPI does so without a content type, too)."""
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            return b"json" in value.lower()
    return True


class RequestLimits:
    """ASGI middleware: request bodies bounded in size, JSON bodies in depth and to valid Unicode."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int = MAX_BODY_BYTES, max_depth: int = MAX_JSON_DEPTH) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.max_depth = max_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        declared = _declared_length(scope)
        if declared is not None and declared > self.max_body_bytes:
            await self._refuse_too_large(receive, send, 0, drain=declared <= DRAINED_BYTES)
            return
        parts: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            part = message.get("body", b"")
            size += len(part)
            if size > self.max_body_bytes:
                if not message.get("more_body", False):
                    await _answer(send, 413, _too_large(self.max_body_bytes), close=False)
                else:
                    await self._refuse_too_large(receive, send, size)
                return
            parts.append(part)
            if not message.get("more_body", False):
                break
        body = b"".join(parts)
        if body and _json_body(scope):
            problem = self._problem(body)
            if problem is not None:
                await _answer(send, 400, {"error": "Invalid request body", "issues": [problem]}, close=False)
                return
        await self.app(scope, _replay(body, receive), send)

    async def _refuse_too_large(self, receive: Receive, send: Send, received: int, *, drain: bool = True) -> None:
        """413. The rest of the body is read and dropped (never kept) up to ``DRAINED_BYTES``, so that the client,
        still sending, gets the answer: a socket closed with unread data is reset, and the answer with it. Past
        that (or announced past it) the answer goes at once and the connection is closed."""
        finished = False
        while drain and not finished and received <= DRAINED_BYTES:
            message = await receive()
            if message["type"] != "http.request":
                return
            received += len(message.get("body", b""))
            finished = not message.get("more_body", False)
        await _answer(send, 413, _too_large(self.max_body_bytes), close=not finished)

    def _problem(self, body: bytes) -> dict[str, str] | None:
        try:
            document = json.loads(body)
        except RecursionError:
            return {"field": "body", "message": f"nested more than {self.max_depth} levels deep"}
        except ValueError:
            return None  # not JSON: the route says so in its own words
        return body_problem(document, self.max_depth)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body, already read, as the app's first message; then the client's own (a disconnect)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
