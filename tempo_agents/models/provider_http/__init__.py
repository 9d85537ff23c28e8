"""The HTTP layer the provider adapters share: one event-stream decoder, one ``Retry-After`` reading, one
connection pool policy.

- :class:`SSEDecoder` (``sse.py``) turns the lines of a ``text/event-stream`` body into ``(event, data)``
  records.
- :func:`retry_after_seconds` (``retry_after.py``) reads how long a provider asks the client to wait.
- :func:`pooled_client` (``clients.py``) is the ``httpx.AsyncClient`` of the running event loop, shared by
  every model that was not given a client of its own.
"""

from tempo_agents.models.provider_http.clients import USER_AGENT, pooled_client
from tempo_agents.models.provider_http.retry_after import parse_retry_after, retry_after_seconds
from tempo_agents.models.provider_http.sse import SSEDecoder, SSEEvent

__all__ = [
    "USER_AGENT",
    "SSEDecoder",
    "SSEEvent",
    "parse_retry_after",
    "pooled_client",
    "retry_after_seconds",
]
