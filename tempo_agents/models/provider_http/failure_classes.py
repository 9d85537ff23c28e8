"""Whether another attempt can help after a provider call failed: one rule for both adapters.

Each adapter says in its own words what went wrong (its messages name its own settings); whether a later attempt
may succeed is decided here, so a failure is retried, or not, whatever the provider.

- **An HTTP status** (an answer, or the status an error event mid-stream stands for): 408, 409, 429 and every 5xx
  are transient, any other status is not. A provider's own word about one response wins, where a provider has one
  (:func:`retryable_status`'s ``provider_verdict``): Anthropic's ``x-should-retry`` header; OpenAI's
  ``insufficient_quota``, a 429 that waiting does not cure.
- **A transport failure** (:class:`TransportFailure`): a timeout, a connection refused or dropped, a proxy that
  failed (it refused or could not open the tunnel), a body that could not be decoded are transient; a URL whose
  scheme cannot be called, a request that could not be sent as given (an illegal header), too many redirects and
  any other failure are not.
"""

from __future__ import annotations

from enum import Enum

import httpx

__all__ = ["TRANSIENT_STATUSES", "TransportFailure", "is_transient_status", "retryable_status"]

TRANSIENT_STATUSES = frozenset({408, 409, 429})
"""The statuses below 500 that a later attempt may get past: timed out, conflict, rate limited."""


def is_transient_status(status: int) -> bool:
    """Whether a later attempt may get past HTTP ``status``."""
    return status in TRANSIENT_STATUSES or status >= 500


def retryable_status(status: int, provider_verdict: bool | None = None) -> bool:
    """Whether to try again after HTTP ``status``; ``provider_verdict`` is the provider's own word about this
    response (``None``: it said nothing), which wins over the status."""
    return is_transient_status(status) if provider_verdict is None else provider_verdict


class TransportFailure(Enum):
    """The class of a failed connection or body (an ``httpx.HTTPError`` raised while calling a provider)."""

    CONNECT_TIMEOUT = "connect-timeout"
    READ_TIMEOUT = "read-timeout"
    """No byte for the read timeout: a server slow to answer, or a stream that stalled."""
    TIMEOUT = "timeout"
    """Another timeout: writing the request, waiting for a connection of the pool."""
    PROXY = "proxy"
    """The proxy refused the tunnel or failed to open it."""
    CONNECT = "connect"
    """No connection: refused, unreachable, a name that does not resolve."""
    DROPPED = "dropped"
    """The connection broke while the request or the answer went over it."""
    UNDECODABLE = "undecodable"
    """The body could not be decoded (its content encoding)."""
    UNSUPPORTED_URL = "unsupported-url"
    """A URL whose scheme cannot be called."""
    UNSENDABLE = "unsendable"
    """A request that cannot be sent as given (an illegal header value, for one)."""
    OTHER = "other"
    """Too many redirects, or any failure of no class above."""

    @classmethod
    def of(cls, error: httpx.HTTPError) -> TransportFailure:
        """The class of ``error`` (subclasses before the classes they refine)."""
        return next((failure for kind, failure in _CLASSES if isinstance(error, kind)), cls.OTHER)

    @property
    def retryable(self) -> bool:
        """Whether a later attempt may succeed."""
        return self in _TRANSIENT


_CLASSES: tuple[tuple[type[httpx.HTTPError], TransportFailure], ...] = (
    (httpx.ConnectTimeout, TransportFailure.CONNECT_TIMEOUT),
    (httpx.ReadTimeout, TransportFailure.READ_TIMEOUT),
    (httpx.TimeoutException, TransportFailure.TIMEOUT),
    (httpx.ProxyError, TransportFailure.PROXY),
    (httpx.UnsupportedProtocol, TransportFailure.UNSUPPORTED_URL),
    (httpx.LocalProtocolError, TransportFailure.UNSENDABLE),
    (httpx.ConnectError, TransportFailure.CONNECT),
    (httpx.TransportError, TransportFailure.DROPPED),  # read, write and close errors, a server breaking the protocol
    (httpx.DecodingError, TransportFailure.UNDECODABLE),
)
"""Each class of httpx error, in the order they are tried."""

_TRANSIENT = frozenset(
    {
        TransportFailure.CONNECT_TIMEOUT,
        TransportFailure.READ_TIMEOUT,
        TransportFailure.TIMEOUT,
        TransportFailure.PROXY,
        TransportFailure.CONNECT,
        TransportFailure.DROPPED,
        TransportFailure.UNDECODABLE,
    }
)
