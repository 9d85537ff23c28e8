"""The connection pool policy of the provider adapters: one ``httpx.AsyncClient`` per event loop.

A model given a client of its own uses it (and never closes it); every other model of the process shares the
pool of the event loop it streams on, so a worker reuses its connections to a provider from one step to the
next. The pool holds no timeout of its own: each request passes its model's timeouts.
"""

from __future__ import annotations

import asyncio
import weakref

import httpx

__all__ = ["MAX_KEEPALIVE_CONNECTIONS", "USER_AGENT", "pooled_client"]

USER_AGENT = "tempo-agents/0.1"
MAX_KEEPALIVE_CONNECTIONS = 64

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()


def pooled_client() -> httpx.AsyncClient:
    """The shared client of the running event loop (made on first use, made again if it was closed)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = httpx.AsyncClient(
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=MAX_KEEPALIVE_CONNECTIONS),
            headers={"user-agent": USER_AGENT},
        )
        _clients[loop] = client
    return client
