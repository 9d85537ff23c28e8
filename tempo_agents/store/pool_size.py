"""How many connections a PostgreSQL store's pool holds, and how long an operation waits for one.

Read from the store URL's own query parameters (``pool_size``, ``pool_timeout``: never passed to libpq), then
``$TEMPO_AGENTS_STORE_POOL_SIZE`` (which the CLI's ``--store-pool-size`` sets), then the defaults. A module of its
own, without psycopg, so the CLI can name the variable without the ``postgresql`` extra.
"""

from __future__ import annotations

import os
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from tempo_agents.errors import ConfigurationError

__all__ = [
    "DEFAULT_POOL_SIZE",
    "DEFAULT_POOL_TIMEOUT",
    "POOL_PARAMETERS",
    "STORE_POOL_SIZE_ENV",
    "pool_size",
    "pool_timeout",
    "split_url",
]

STORE_POOL_SIZE_ENV = "TEMPO_AGENTS_STORE_POOL_SIZE"
"""The environment variable that sizes the pool of a store whose URL does not (``?pool_size=N``)."""
DEFAULT_POOL_SIZE = 10
DEFAULT_POOL_TIMEOUT = 30.0
"""How long an operation waits for a free pooled connection before ``StoreBusyError``."""
POOL_PARAMETERS = ("pool_size", "pool_timeout")
"""Query parameters of a store URL that are ours, not libpq's."""


def split_url(url: str) -> tuple[str, dict[str, str]]:
    """The URL psycopg is given (without our query parameters), and our parameters."""
    parts = urlsplit(url)
    if not parts.query:
        return url, {}
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    ours = {k: v for k, v in pairs if k in POOL_PARAMETERS}
    if not ours:
        return url, {}
    rest = urlencode([(k, v) for k, v in pairs if k not in POOL_PARAMETERS])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, rest, parts.fragment)), ours


def pool_size(from_url: str | None, display_url: str) -> int:
    """The URL's ``pool_size``, else the environment's, else :data:`DEFAULT_POOL_SIZE`."""
    raw, where = (from_url, "pool_size in the store URL") if from_url is not None else (None, "")
    if raw is None and os.environ.get(STORE_POOL_SIZE_ENV):
        raw, where = os.environ[STORE_POOL_SIZE_ENV], STORE_POOL_SIZE_ENV
    if raw is None:
        return DEFAULT_POOL_SIZE
    try:
        size = int(raw)
    except ValueError:
        size = 0
    if size < 1:
        raise ConfigurationError(f"{where} of {display_url} must be a whole number of connections, 1 or more: {raw!r}")
    return size


def pool_timeout(from_url: str | None, display_url: str) -> float:
    """The URL's ``pool_timeout`` in seconds, else :data:`DEFAULT_POOL_TIMEOUT`."""
    if from_url is None:
        return DEFAULT_POOL_TIMEOUT
    try:
        seconds = float(from_url)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise ConfigurationError(
            f"pool_timeout in the store URL {display_url} must be a number of seconds: {from_url!r}"
        )
    return seconds
