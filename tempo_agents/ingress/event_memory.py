"""Where an event's run lands (its memory thread and resource), bound to what the delivery's credential covers.

A Standard Webhooks signature covers the ``webhook-id``, the timestamp and the body, never the URL. So the thread and
resource of an event's run come from the signed body (the agent route: the payload's ``memory`` object,
``{"thread": ..., "resource": ...}``, as in a stream's body) or from the source's configuration (a configured
source: fixed values, or fields of the payload). A URL's ``?thread=&resource=`` may repeat them, and a delivery whose
URL names others is refused: whoever holds a captured delivery cannot move its run to another thread or resource,
and one ``webhook-id`` is one run wherever it is sent (the same signed body always names the same thread, whose
workflow keeps each run id once).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tempo_agents.ingress.webhooks import WebhookRefusedError

__all__ = ["EventMemory", "bind_event_memory", "field_name", "payload_field", "signed_memory"]

MEMORY_FIELD = "memory"
"""The payload's field that names the thread and resource of a delivery to ``POST /api/agents/{id}/events``."""


@dataclass(frozen=True)
class EventMemory:
    """The memory thread and resource of an event's run."""

    thread: str
    resource: str

    def option(self) -> dict[str, str]:
        """As the ``memory`` run option."""
        return {"thread": self.thread, "resource": self.resource}


def payload_field(payload: Any, path: str) -> Any:
    """The value at the dotted ``path`` of ``payload`` (``None`` when a part is missing)."""
    value = payload
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _name(value: Any) -> str | None:
    """A thread or resource name from a payload's value: a non-empty text, or a whole number as text."""
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        return None
    return str(value)


def signed_memory(payload: Any) -> EventMemory | None:
    """The thread and resource the signed payload names in its ``memory`` object (``None``: it names none)."""
    memory = payload.get(MEMORY_FIELD) if isinstance(payload, dict) else None
    if memory is None:
        return None
    thread = _name(memory.get("thread")) if isinstance(memory, dict) else None
    resource = _name(memory.get("resource")) if isinstance(memory, dict) else None
    if thread is None or resource is None:
        raise WebhookRefusedError(
            400, 'the delivery\'s "memory" must name both a thread and a resource: {"thread": ..., "resource": ...}'
        )
    return EventMemory(thread=thread, resource=resource)


def field_name(payload: Any, path: str, what: str) -> str:
    """The thread or resource (``what``) a source reads from the payload's field ``path``; a 400 when it is not
    there."""
    name = _name(payload_field(payload, path))
    if name is None:
        raise WebhookRefusedError(400, f'the delivery has no {what}: no "{path}" field (text or whole number)')
    return name


def bind_event_memory(bound: EventMemory | None, requested: Mapping[str, Any] | None, where: str) -> EventMemory | None:
    """The memory of the event's run: ``bound`` (from what the credential covers: ``where`` says what that is).
    ``requested`` (the URL's ``?thread=&resource=``, or a caller's ``memory`` option) may only repeat it: naming
    another thread or resource, or one the delivery does not bind, is a 400 and starts nothing."""
    if requested is None:
        return bound
    thread, resource = requested.get("thread"), requested.get("resource")
    if bound is None:
        raise WebhookRefusedError(
            400,
            f"the delivery names no thread ({where}): a thread and resource given outside it are not covered by its "
            "signature and are refused",
        )
    if (thread, resource) != (bound.thread, bound.resource):
        raise WebhookRefusedError(
            400,
            f'the delivery is bound to thread "{bound.thread}" of resource "{bound.resource}" ({where}); it cannot be '
            f'sent to thread "{thread}" of resource "{resource}"',
        )
    return bound
