"""Running the HTTP API with uvicorn inside the caller's event loop (the CLI, tests).

The caller owns SIGINT/SIGTERM: uvicorn's own signal handling is switched off, and :meth:`ApiServer.stop`
ends it. Open streams get a short grace period on shutdown, then are cancelled (their runs go on).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
from collections.abc import Generator, Mapping, Sequence

import uvicorn

from tempo_agents.client.app import App
from tempo_agents.errors import TempoAgentsError
from tempo_agents.identity import OidcSettings, Principal
from tempo_agents.server.access import Policy
from tempo_agents.server.access.principals import RoleGrants
from tempo_agents.server.app import DEFAULT_PREFIX, create_server
from tempo_agents.server.auth import Authorize, allow_all
from tempo_agents.server.request_limits import MAX_BODY_BYTES

__all__ = ["DEFAULT_API_HOST", "DEFAULT_API_PORT", "ApiServer", "ApiServerError", "is_loopback"]

DEFAULT_API_HOST = "127.0.0.1"
DEFAULT_API_PORT = 4111
_SHUTDOWN_GRACE_SECONDS = 2


class ApiServerError(TempoAgentsError):
    """The HTTP API could not start (for example, its port is taken)."""

    code = "API_SERVER_ERROR"


class _Uvicorn(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield  # signals belong to the command that runs the server


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class ApiServer:
    """The HTTP API of ``app`` on ``host:port`` (``port=0`` picks a free one); ``tokens``, ``oidc``,
    ``cors_origins``, ``codec_cors_origins``, ``max_body_bytes``, ``groups`` and ``roles`` as :func:`create_server`
    takes them. Without tokens, a provider or an
    ``authorize`` hook it listens on a loopback address only (another ``host`` is refused)."""

    def __init__(
        self,
        app: App,
        *,
        host: str = DEFAULT_API_HOST,
        port: int = DEFAULT_API_PORT,
        prefix: str = DEFAULT_PREFIX,
        authorize: Authorize | Policy = allow_all,
        tokens: Mapping[str, str | Principal] | None = None,
        oidc: OidcSettings | None = None,
        cors_origins: Sequence[str] = (),
        log_level: str = "warning",
        temporal_ui_url: str | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
        groups: Mapping[str, Sequence[str]] | None = None,
        codec_cors_origins: Sequence[str] = (),
        roles: RoleGrants | None = None,
    ) -> None:
        if not tokens and oidc is None and authorize is allow_all and not is_loopback(host):
            raise ApiServerError(
                f"refusing to serve the HTTP API on {host} with neither tokens nor an authorize hook: anyone who "
                "can reach it could start and answer runs; pass tokens= (or authorize=), or listen on 127.0.0.1"
            )
        config = uvicorn.Config(
            create_server(
                app,
                prefix=prefix,
                authorize=authorize,
                tokens=tokens,
                oidc=oidc,
                cors_origins=cors_origins,
                temporal_ui_url=temporal_ui_url,
                max_body_bytes=max_body_bytes,
                groups=groups,
                codec_cors_origins=codec_cors_origins,
                roles=roles,
            ),
            host=host,
            port=port,
            log_level=log_level,
            lifespan="on",  # the server's shutdown closes what it opened (create_server's lifespan)
            timeout_graceful_shutdown=_SHUTDOWN_GRACE_SECONDS,
        )
        self._server = _Uvicorn(config)
        self._task: asyncio.Task[None] | None = None
        self.host = host
        self.port = port
        self.token_count = len(tokens or {})
        """How many static bearer tokens the server accepts (0: it asks for none, unless ``oidc`` is set)."""
        self.oidc = oidc
        """The OpenID Connect provider whose tokens the server accepts, if any."""

    @property
    def url(self) -> str:
        """The base URL (without the ``/api`` prefix)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def start(self) -> None:
        """Listen; returns once the server accepts connections."""
        uvicorn_log = logging.getLogger("uvicorn.error")
        level = uvicorn_log.level
        uvicorn_log.setLevel(logging.CRITICAL)  # a taken port is reported below, in one line
        try:
            await self._wait_started()
        finally:
            uvicorn_log.setLevel(level)
        sockets = [sock for server in self._server.servers for sock in (server.sockets or ())]
        if sockets:
            self.port = int(sockets[0].getsockname()[1])

    async def _wait_started(self) -> None:
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if self._task.done():
                error = self._task.exception() if not self._task.cancelled() else None
                raise ApiServerError(
                    f"the HTTP API could not listen on {self.host}:{self.port}"
                    + (": the port is already in use or not allowed" if isinstance(error, SystemExit) else "")
                )
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        """Stop listening, give open streams a moment, then close them."""
        if self._task is None:
            return
        self._server.should_exit = True
        with contextlib.suppress(BaseException):
            await self._task
        self._task = None

    async def wait(self) -> None:
        """Until the server stops on its own (it should not)."""
        if self._task is not None:
            await asyncio.shield(self._task)
