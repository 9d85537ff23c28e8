"""The completion: the :class:`AuditTrail` middleware records how each recorded action ended, and the requests refused
before any route ran for want of a valid token (``sign-in``, 401).

It sits outside the token check, so it sees every answer. A changing route refused before its intent was recorded (its
``authorize`` hook said no) is recorded in one record; any other 401 is a refused
``sign-in``. When a
route recorded an intent (:mod:`~tempo_agents.server.audit.intents`), the middleware appends its completion before the
answer's first byte leaves: ``done`` for a 2xx or 3xx answer (an SSE stream's start included), ``refused`` with the
status and the answer's error ``code`` for a 4xx, ``failed`` for a 5xx or an exception. An error answer is held until
its body is read (its ``code`` is in it); it is small. A completion the store cannot take is logged and the answer goes
on: the intent already says the action was tried.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tempo_agents.audit import DONE, FAILED, REFUSED, AuditEntry, Outcome
from tempo_agents.errors import StoreUnavailableError
from tempo_agents.server.audit.actions import Seen, action_of
from tempo_agents.server.audit.door import door_route
from tempo_agents.server.audit.intents import pending_action, requester
from tempo_agents.server.audit.recording import action_tenant, origin

__all__ = ["SIGN_IN", "AuditTrail"]

SIGN_IN = "sign-in"
"""The action of a request refused for want of a valid token (401)."""

_log = logging.getLogger("tempo_agents.server.audit")


def _outcome(status: int) -> Outcome:
    return DONE if status < 400 else REFUSED if status < 500 else FAILED


def _code(body: bytes) -> str | None:
    try:
        found = json.loads(body)
    except ValueError:
        return None
    code = found.get("code") if isinstance(found, dict) else None
    return code if isinstance(code, str) else None


_REFUSED_BEFORE_ROUTING = frozenset({400, 413})
"""The statuses of a request refused at the door (``request_limits.py``), before any route was matched."""


def _endpoint_of(scope: Scope, status: int) -> tuple[Callable[..., Any] | None, Mapping[str, Any]]:
    """The endpoint of the route the request matched and its path parameters; for a request refused before
    routing, those of the changing route it would have reached (:mod:`~tempo_agents.server.audit.door`)."""
    route = scope.get("route")
    if route is not None or status not in _REFUSED_BEFORE_ROUTING:
        return getattr(route, "endpoint", None), scope.get("path_params", {})
    return door_route(scope)


class _Answer:
    """One request's answer as it is sent: completes the action when its status (and, for an error, its body) is
    known."""

    def __init__(self, scope: Scope, send: Send) -> None:
        self.request = Request(scope)
        self._send = send
        self.started = False
        self._held: Message | None = None
        self._body = b""

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
            status = int(message["status"])
            if status < 400:
                await self.complete(status, None)
            else:
                self._held = message
                return
        elif message["type"] == "http.response.body" and self._held is not None:
            self._body += message.get("body", b"")
            if message.get("more_body", False):
                return
            held, self._held = self._held, None
            await self.complete(int(held["status"]), _code(self._body))
            await self._send(held)
            message = {**message, "body": self._body}
        await self._send(message)

    async def complete(self, status: int, code: str | None) -> None:
        pending = pending_action(self.request)
        if pending is not None:
            if not pending.completed:
                pending.completed = True
                await self._append(pending.completion(_outcome(status), status, code))
        elif status == 401:
            await self._append(self._sign_in_refused(code))
        elif (refused := await self._refused_before_intent(status, code)) is not None:
            await self._append(refused)

    async def _refused_before_intent(self, status: int, code: str | None) -> AuditEntry | None:
        """A changing route refused before its intent was recorded (by ``authorize``, e.g. a 403, or before
        routing: a body too large, 413, or nested too deeply, 400): one record, from what the path and the query
        say (the body was not read, or not taken)."""
        if status < 400:
            return None
        endpoint, path_params = _endpoint_of(self.request.scope, status)
        action = action_of(endpoint)
        if action is None:
            return None
        seen = Seen(path_params, {}, self.request.query_params)
        return AuditEntry(
            action=action.name(seen),
            target=action.target(seen),
            outcome=_outcome(status),
            principal=requester(self.request),
            tenant=await action_tenant(self.request, action, seen),
            status=status,
            code=code,
            **origin(self.request),
        )

    def _sign_in_refused(self, code: str | None) -> AuditEntry:
        scope = self.request.scope
        return AuditEntry(
            action=SIGN_IN,
            target=f"{scope.get('method', '')} {scope.get('path', '')}",
            outcome=REFUSED,
            status=401,
            code=code,
            **origin(self.request),
        )

    async def _append(self, entry: AuditEntry) -> None:
        try:
            await self.request.app.state.tempo_app.store.append_audit([entry])
        except StoreUnavailableError as error:
            _log.warning("audit record %s %s not written: %s", entry.action, entry.target, error.message)


class AuditTrail:
    """ASGI middleware: completes every recorded action and records refused sign-ins (module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope.setdefault("state", {})  # one state for every layer, even one that copies the scope
        answer = _Answer(scope, send)
        try:
            await self.app(scope, receive, answer.send)
        except BaseException:
            if not answer.started:
                await answer.complete(500, None)
            raise
