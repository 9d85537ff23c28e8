"""Webhook sources: senders configured by name, each with a route of its own (``POST /api/events/{source}``).

A source names the agent its deliveries start runs of, how a delivery is verified, the event template that renders
its payload, and where the sender's id for an event is when it sends no ``webhook-id``. Verification is either the
Standard Webhooks HMAC (``secrets``: a signature, a timestamp within the tolerance) or a shared token in a header
(``tokens``: compared in constant time, for senders that only know how to send a fixed header). The event id
de-duplicates: the run id is ``webhook-<source>-<event id>``, started once (see ``ingress/events.py``).

Secrets never leave this module: they are not in a source's ``repr``, the refusals name the header and never
its value, and the run's input and memo carry only the event id.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tempo_agents.errors import ConfigurationError
from tempo_agents.ingress.event_memory import EventMemory, field_name, payload_field
from tempo_agents.ingress.webhooks import DEFAULT_TOLERANCE, WebhookRefusedError, verify_webhook

__all__ = ["SOURCE_NAME", "WebhookSource", "event_id_of", "verify_source_delivery"]

SOURCE_NAME = re.compile(r"^[A-Za-z0-9._~-]{1,64}$")
"""What a source's name may be (it is a path segment of its route and part of its runs' ids)."""

_SAFE_ID = re.compile(r"^[A-Za-z0-9._:~-]{1,200}$")


@dataclass(frozen=True)
class WebhookSource:
    """A sender of webhooks: its deliveries to ``POST /api/events/{name}`` start runs of ``agent``.

    Exactly one of ``secrets`` (Standard Webhooks secrets, ``whsec_...``; several while the sender rotates) and
    ``tokens`` (shared tokens the sender puts in ``token_header``; with ``authorization``, ``Bearer <token>``
    is accepted too). ``template`` names an event template of the App (by default the one named like the
    agent, else the payload's JSON text). ``event_id_field`` is the dotted path of the JSON field that carries
    the sender's id for the event (``"delivery.id"``), read when the delivery has no ``webhook-id`` header.

    Where the runs land (their memory thread and resource) is the source's to say, never the URL's: ``thread`` and
    ``resource`` fixed, or ``thread_field`` and ``resource_field``, dotted paths of payload fields (each pair: one
    or the other; a thread needs a resource). A source that names neither starts threadless runs.
    """

    name: str
    agent: str
    secrets: Sequence[str] = field(default=(), repr=False)
    tokens: Sequence[str] = field(default=(), repr=False)
    token_header: str = "authorization"
    template: str | None = None
    event_id_field: str | None = None
    tolerance: timedelta = DEFAULT_TOLERANCE
    thread: str | None = None
    thread_field: str | None = None
    resource: str | None = None
    resource_field: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "secrets", _texts(self.secrets))
        object.__setattr__(self, "tokens", _texts(self.tokens))
        object.__setattr__(self, "token_header", self.token_header.lower())
        if not SOURCE_NAME.match(self.name):
            raise ConfigurationError(f'webhook source name "{self.name}" must be 1 to 64 letters, digits or . _ ~ -')
        if bool(self.secrets) == bool(self.tokens):
            raise ConfigurationError(
                f'webhook source "{self.name}" needs exactly one of secrets (Standard Webhooks) or tokens (a header)'
            )
        if any(not value for value in (*self.secrets, *self.tokens)):
            raise ConfigurationError(f'webhook source "{self.name}" has an empty secret or token')
        for fixed, from_field, what in (
            (self.thread, self.thread_field, "thread"),
            (self.resource, self.resource_field, "resource"),
        ):
            if fixed is not None and from_field is not None:
                raise ConfigurationError(f'webhook source "{self.name}" takes {what} or {what}_field, not both')
            if fixed == "" or from_field == "":
                raise ConfigurationError(f'webhook source "{self.name}" has an empty {what}')
        names_thread = self.thread is not None or self.thread_field is not None
        names_resource = self.resource is not None or self.resource_field is not None
        if names_thread != names_resource:
            raise ConfigurationError(
                f'webhook source "{self.name}": a thread and a resource go together (thread or thread_field with '
                "resource or resource_field)"
            )

    def memory_of(self, payload: Any) -> EventMemory | None:
        """The thread and resource of the run a delivery with ``payload`` starts (``None``: a threadless run)."""
        if self.thread is None and self.thread_field is None:
            return None
        thread = self.thread if self.thread_field is None else field_name(payload, self.thread_field, "thread")
        resource = (
            self.resource if self.resource_field is None else field_name(payload, self.resource_field, "resource")
        )
        assert thread is not None and resource is not None, "checked when the source was made"
        return EventMemory(thread=thread, resource=resource)

    @property
    def verification(self) -> str:
        """``standard-webhooks`` or ``token``: how its deliveries are verified (shown, never the secrets)."""
        return "standard-webhooks" if self.secrets else "token"


def _texts(value: str | Sequence[str]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


def _token_matches(offered: str, tokens: Sequence[str]) -> bool:
    """Whether ``offered`` is one of ``tokens``, in time that depends on neither (both hashed to one length first,
    and every token compared)."""
    digest = hashlib.sha256(offered.encode()).digest()
    matched = False
    for token in tokens:
        matched |= hmac.compare_digest(digest, hashlib.sha256(token.encode()).digest())
    return matched


def verify_source_delivery(source: WebhookSource, headers: Mapping[str, str], body: bytes, *, now: datetime) -> None:
    """Check a delivery's credential; raises :class:`WebhookRefusedError` (401 for a missing or wrong token or
    signature, 400 for malformed or too old/new Standard Webhooks headers). ``headers`` by lower-case name."""
    if source.secrets:
        verify_webhook(list(source.secrets), headers, body, now=now, tolerance=source.tolerance)
        return
    offered = headers.get(source.token_header)
    if offered and source.token_header == "authorization" and offered[:7].lower() == "bearer ":
        offered = offered[7:].strip()
    if not offered:
        raise WebhookRefusedError(401, f"missing {source.token_header} header: the delivery is refused")
    if not _token_matches(offered, source.tokens):
        raise WebhookRefusedError(401, f"the {source.token_header} header does not match: the delivery is refused")


def event_id_of(source: WebhookSource, headers: Mapping[str, str], payload: Any) -> str:
    """The sender's id for the event: ``webhook-id``, else the payload's ``event_id_field``. An id that is not
    1 to 200 letters, digits or ``. _ : ~ -`` is replaced by its SHA-256 (so any id de-duplicates)."""
    event_id: Any = headers.get("webhook-id")
    if not event_id and source.event_id_field is not None:
        event_id = payload_field(payload, source.event_id_field)
    if isinstance(event_id, bool) or not isinstance(event_id, str | int) or event_id == "":
        where = f'nor a "{source.event_id_field}" field' if source.event_id_field else "and the source names no field"
        raise WebhookRefusedError(400, f"the delivery has no event id: no webhook-id header {where}")
    text = str(event_id)
    return text if _SAFE_ID.match(text) else "sha256-" + hashlib.sha256(text.encode()).hexdigest()
