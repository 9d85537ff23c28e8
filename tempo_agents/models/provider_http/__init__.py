"""The HTTP layer the provider adapters share: one event-stream decoder, one ``Retry-After`` reading, one
connection pool policy, one rule for which failures are worth another attempt.

- :class:`SSEDecoder` (``sse.py``) turns the lines of a ``text/event-stream`` body into ``(event, data)``
  records.
- :func:`retry_after_seconds` (``retry_after.py``) reads how long a provider asks the client to wait.
- :func:`pooled_client` (``clients.py``) is the ``httpx.AsyncClient`` of the running event loop, shared by
  every model that was not given a client of its own.
- :func:`retryable_status` and :class:`TransportFailure` (``failure_classes.py``) say whether a failed call may
  succeed later: an HTTP status (with the provider's own word about it, where it has one), a failed connection
  or body.
"""

from tempo_agents.models.provider_http.clients import USER_AGENT, pooled_client
from tempo_agents.models.provider_http.failure_classes import (
    TRANSIENT_STATUSES,
    TransportFailure,
    is_transient_status,
    retryable_status,
)
from tempo_agents.models.provider_http.retry_after import parse_retry_after, retry_after_seconds
from tempo_agents.models.provider_http.sse import SSEDecoder, SSEEvent

__all__ = [
    "TRANSIENT_STATUSES",
    "USER_AGENT",
    "SSEDecoder",
    "SSEEvent",
    "TransportFailure",
    "is_transient_status",
    "parse_retry_after",
    "pooled_client",
    "retry_after_seconds",
    "retryable_status",
]
