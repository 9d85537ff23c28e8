"""The ``web_fetch`` built-in tool: fetch a page over HTTP(S) without reaching private networks.

Server-side request forgery protection
--------------------------------------
Only ``http`` and ``https`` URLs are fetched. Before any connection the host is checked: ``localhost`` and
``*.localhost`` are refused, a literal IP address (in any spelling the system resolver would accept, see
:mod:`._addresses`) is checked directly, and a name is resolved **by this module** and every address in the
answer is checked; one private or reserved address in the answer blocks the fetch.

How the connection is pinned to the checked address
---------------------------------------------------
The request is sent to a URL whose host is the checked IP address itself, so the HTTP stack never resolves
the name again and a second DNS answer (DNS rebinding) has no way in:

* ``Host`` is set explicitly to the original ``host[:port]``, so the server sees the name the user asked for.
* For ``https``, the request carries the ``sni_hostname`` extension set to the original host name. httpcore
  passes it as ``server_hostname`` to ``SSLContext.wrap_socket`` (see ``httpcore._async.connection``), so the
  TLS handshake sends the name as SNI **and** the default context (``check_hostname=True``,
  ``CERT_REQUIRED``, certifi trust store) verifies the certificate against the name, not against the IP.
  The tests check this against a local TLS server with a certificate for one name: the right name is
  accepted, another name pinned to the same IP is refused.
* Every hop (the first request and each redirect) gets a fresh connection pool that is closed after it, so
  a TLS connection verified for one name is never reused for another name that shares its IP address.
* Requests go straight to the transport (no ``httpx.AsyncClient``): no proxy taken from the environment,
  no cookies, no automatic redirects; redirects are followed here, each target checked like the first URL.

If the name resolves to several (all allowed) addresses they are tried in order when connecting fails.

Everything (DNS, connect, headers, body, redirects) runs under one deadline. When ``context.cancelled``
is set, or the calling task is cancelled, the request is abandoned, its sockets closed, and
``asyncio.CancelledError`` is raised: cancellation is not a tool result.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import ipaddress
import socket
import ssl
import string
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

import httpx
from pydantic import BaseModel, Field

from tempo_agents.errors import ConfigurationError
from tempo_agents.tools.builtin._addresses import (
    IPAddress,
    is_blocked_address,
    is_blocked_hostname,
    parse_host_literal,
    parse_ipv4_literal,
)
from tempo_agents.tools.context import ToolContext
from tempo_agents.tools.tool import Tool, create_tool

__all__ = [
    "ACCEPT",
    "DESCRIPTION",
    "USER_AGENT",
    "Resolver",
    "WebFetchInput",
    "WebFetchOutput",
    "create_web_fetch_tool",
    "system_resolver",
    "web_fetch_tool",
]

DESCRIPTION = "Fetch a web page by URL and return text content with basic response metadata."
"""The tool description the model reads (word for word: models are prompted with it)."""

URL_DESCRIPTION = "The fully qualified HTTP or HTTPS URL to fetch."
"""The description of the ``url`` input field (word for word, as the tool description)."""

USER_AGENT = "tempo-agents Web Fetch Tool/1.0"
"""The ``user-agent`` header sent with every request."""

ACCEPT = "text/html,text/plain,application/json,application/xml;q=0.9,*/*;q=0.8"
"""The ``accept`` header sent with every request."""

_PREFIX = "Failed to fetch URL: "
_ONLY_HTTP = "only HTTP and HTTPS URLs are supported."
_REDIRECT_SCHEME = "Redirect target must use HTTP or HTTPS."
_BLOCKED = "URL resolves to a private or reserved address."
_INVALID_URL = "Invalid URL"
_HTTP_SCHEMES = ("http", "https")
_HOST_CHARACTERS = frozenset(string.ascii_lowercase + string.digits + "-._:")

Resolver = Callable[[str], Awaitable[Sequence[str]]]
"""An async DNS resolver: host name -> the IP addresses (as strings) it resolves to."""


class WebFetchInput(BaseModel):
    """Input of ``web_fetch``: only ``url`` is read; any other key is ignored."""

    url: str = Field(min_length=1, description=URL_DESCRIPTION)


class WebFetchOutput(BaseModel):
    """Output of ``web_fetch``: the page (``content`` and metadata) or ``{content: error text, isError: true}``."""

    content: str
    truncated: bool | None = None
    status: int | None = None
    statusText: str | None = None
    contentType: str | None = None
    url: str | None = None
    ok: bool | None = None
    isError: bool | None = None


async def system_resolver(host: str) -> list[str]:
    """Resolve ``host`` with the event loop's ``getaddrinfo``; every address, in the system's order, once."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    addresses: list[str] = []
    for _family, _type, _proto, _canonname, sockaddr in infos:
        address = str(sockaddr[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


class _FetchFailure(Exception):
    """A failure with the exact text that follows ``Failed to fetch URL: ``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class _Target:
    """A URL about to be requested, with its host as checked and connected to."""

    url: httpx.URL
    host: str
    """Lower-case ASCII host (IDNA for international names), without brackets."""
    literal: IPAddress | None
    """The address the host spells, when it is an IP literal."""

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.url.port is None else f"{host}:{self.url.port}"


def _error(message: str) -> dict[str, Any]:
    return {"content": _PREFIX + message, "isError": True}


def _parse_url(raw: str) -> httpx.URL:
    try:
        return httpx.URL(raw)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        # httpx refuses dotted IPv4 literals with octal parts ("0177.0.0.1") that inet_aton and WHATWG URL
        # parsers read as 127.0.0.1; read them the same way so that they are checked (and blocked) as such
        canonical = _canonical_ipv4_url(raw)
        if canonical is not None:
            with contextlib.suppress(httpx.InvalidURL, TypeError, ValueError):
                return httpx.URL(canonical)
        raise _FetchFailure(_INVALID_URL) from exc


def _join(url: httpx.URL, location: str) -> httpx.URL:
    """``location`` resolved against ``url`` (a redirect target), read like a first URL when httpx refuses it."""
    try:
        return url.join(location)
    except (httpx.InvalidURL, TypeError, ValueError):
        return _parse_url(urljoin(str(url), location))


def _canonical_ipv4_url(raw: str) -> str | None:
    """``raw`` with its host written as a canonical dotted quad, if that host is an ``inet_aton`` literal."""
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError:
        return None
    address = parse_ipv4_literal(parts.hostname) if parts.hostname else None
    if address is None:
        return None
    userinfo, at, _ = parts.netloc.rpartition("@")
    netloc = f"{userinfo}{at}{address}" + ("" if port is None else f":{port}")
    return urlunsplit(parts._replace(netloc=netloc))


def _target(url: httpx.URL) -> _Target:
    try:
        host = unquote(url.raw_host.decode("ascii"), errors="strict").lower()
    except (UnicodeDecodeError, UnicodeEncodeError) as exc:
        raise _FetchFailure(_INVALID_URL) from exc
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host or not set(host) <= _HOST_CHARACTERS:
        raise _FetchFailure(_INVALID_URL)
    literal = parse_host_literal(host)
    if ":" in host and literal is None:
        raise _FetchFailure(_INVALID_URL)
    if literal is not None:
        # "2130706433", "0x7f.1", "0:0:0:0:0:0:0:1": written the canonical way, as WHATWG URL parsers do
        host = str(literal)
    if host != url.raw_host.decode("ascii"):
        url = url.copy_with(host=host)  # the URL shows the host that was checked (decoded, canonical)
    return _Target(url=url, host=host, literal=literal)


def _connect_host(address: IPAddress) -> str:
    if isinstance(address, ipaddress.IPv6Address):
        plain = ipaddress.IPv6Address(int(address))
        return str(plain.ipv4_mapped or plain)
    return str(address)


def _final_url(url: httpx.URL) -> str:
    text = str(url)
    if url.raw_path == b"/" and not url.query and not url.fragment and not text.endswith("/"):
        text += "/"  # "http://example.com" -> "http://example.com/", as WHATWG URLs print
    return text


def _message_of(exc: BaseException) -> str:
    return str(exc) or "Unknown error"


class _WebFetcher:
    """One configured fetcher: the ``execute`` of a ``web_fetch`` tool."""

    def __init__(
        self,
        *,
        resolver: Resolver | None,
        allow_loopback: bool,
        timeout: float,
        max_chars: int,
        max_redirects: int,
        transport: httpx.AsyncBaseTransport | None,
    ) -> None:
        self._resolver: Resolver = resolver or system_resolver
        self._allow_loopback = allow_loopback
        self._timeout = timeout
        self._max_chars = max_chars
        self._max_redirects = max_redirects
        self._transport = transport
        self._ssl: ssl.SSLContext | None = None

    async def execute(self, input: WebFetchInput, context: ToolContext) -> dict[str, Any]:
        """Fetch ``input.url``; raise ``asyncio.CancelledError`` as soon as ``context.cancelled`` is set."""
        if context.cancelled.is_set():
            raise asyncio.CancelledError("web_fetch cancelled before the request started")
        fetch = asyncio.ensure_future(self.fetch(input.url))
        watch = asyncio.ensure_future(context.cancelled.wait())
        try:
            await asyncio.wait({fetch, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            watch.cancel()
            if not fetch.done():
                fetch.cancel()
                await asyncio.wait({fetch})  # let the request close its sockets
        if fetch.cancelled():
            raise asyncio.CancelledError("web_fetch cancelled")
        return fetch.result()

    async def fetch(self, raw_url: str) -> dict[str, Any]:
        """Fetch ``raw_url`` under the deadline; every failure becomes an ``isError`` result."""
        deadline = asyncio.timeout(self._timeout)
        try:
            async with deadline:
                return await self._fetch(raw_url)
        except _FetchFailure as failure:
            return _error(failure.message)
        except TimeoutError as exc:
            if deadline.expired():
                return _error(f"Request timed out after {round(self._timeout * 1000)}ms.")
            return _error(_message_of(exc))
        except Exception as exc:
            return _error(_message_of(exc))

    async def _fetch(self, raw_url: str) -> dict[str, Any]:
        url = _parse_url(raw_url)
        if url.scheme not in _HTTP_SCHEMES:
            raise _FetchFailure(_INVALID_URL if not url.scheme else _ONLY_HTTP)
        redirects = 0
        while True:
            target = _target(url)
            url = target.url
            addresses = await self._checked_addresses(target)
            async with contextlib.AsyncExitStack() as stack:
                response = await self._send(stack, target, addresses)
                location = response.headers.get("location")
                if 300 <= response.status_code < 400 and location:
                    if redirects >= self._max_redirects:
                        raise _FetchFailure(f"Too many redirects. Maximum is {self._max_redirects}.")
                    next_url = _join(url, location)
                    if next_url.scheme not in _HTTP_SCHEMES:
                        raise _FetchFailure(_REDIRECT_SCHEME)
                    redirects += 1
                    url = next_url
                    continue  # leaving the block closes the unread body and the connection
                content, truncated = await self._read_text(response)
                return {
                    "content": content,
                    "truncated": truncated,
                    "status": response.status_code,
                    "statusText": response.reason_phrase,
                    "contentType": response.headers.get("content-type"),
                    "url": _final_url(url),
                    "ok": 200 <= response.status_code <= 299,
                }

    async def _checked_addresses(self, target: _Target) -> list[IPAddress]:
        """The addresses to connect to, after checking the host and every address it resolves to."""
        if is_blocked_hostname(target.host):
            raise _FetchFailure(_BLOCKED)
        if target.literal is not None:
            answers: list[IPAddress] = [target.literal]
        else:
            answers = []
            for text in await self._resolver(target.host):
                try:
                    answers.append(ipaddress.ip_address(text))
                except ValueError as exc:  # an answer we cannot read is not an answer we can trust
                    raise _FetchFailure(_BLOCKED) from exc
            if not answers:
                raise _FetchFailure(f"getaddrinfo ENOTFOUND {target.host}")
        if any(is_blocked_address(answer, allow_loopback=self._allow_loopback) for answer in answers):
            raise _FetchFailure(_BLOCKED)
        return list(dict.fromkeys(answers))

    def _ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context(trust_env=False)
        return self._ssl

    async def _send(
        self, stack: contextlib.AsyncExitStack, target: _Target, addresses: Sequence[IPAddress]
    ) -> httpx.Response:
        """Send the GET to the first checked address that accepts a connection; the stack closes it all."""
        transport = self._transport
        if transport is None:
            transport = await stack.enter_async_context(
                httpx.AsyncHTTPTransport(verify=self._ssl_context(), trust_env=False)
            )
        headers = [("Host", target.host_header), ("User-Agent", USER_AGENT), ("Accept", ACCEPT)]
        extensions: dict[str, Any] = {} if target.literal is not None else {"sni_hostname": target.host}
        failure: httpx.ConnectError | None = None
        for address in addresses:
            request = httpx.Request(
                "GET",
                target.url.copy_with(host=_connect_host(address)),
                headers=headers,
                extensions=extensions,
            )
            try:
                response = await transport.handle_async_request(request)
            except httpx.ConnectError as exc:
                failure = exc
                continue
            stack.push_async_callback(response.aclose)
            return response
        assert failure is not None
        raise failure

    async def _read_text(self, response: httpx.Response) -> tuple[str, bool]:
        """Decode the body with its charset (utf-8 otherwise), stopping after ``max_chars`` characters."""
        try:
            decoder = codecs.getincrementaldecoder(response.charset_encoding or "utf-8")(errors="replace")
        except LookupError:
            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        parts: list[str] = []
        size = 0
        chunks = cast(AsyncGenerator[bytes, None], response.aiter_bytes())
        try:
            async for chunk in chunks:
                text = decoder.decode(chunk)
                if size + len(text) > self._max_chars:
                    parts.append(text[: self._max_chars - size])
                    return "".join(parts), True
                parts.append(text)
                size += len(text)
        finally:
            await chunks.aclose()
        text = decoder.decode(b"", final=True)
        if size + len(text) > self._max_chars:
            parts.append(text[: self._max_chars - size])
            return "".join(parts), True
        parts.append(text)
        return "".join(parts), False


def create_web_fetch_tool(
    *,
    resolver: Resolver | None = None,
    allow_loopback_for_tests: bool = False,
    timeout: float = 15.0,
    max_chars: int = 100_000,
    max_redirects: int = 5,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Tool:
    """Build a ``web_fetch`` tool; the defaults give exactly :data:`web_fetch_tool`.

    ``resolver`` replaces the system DNS resolver (an async ``host -> [ip, ...]``). ``timeout`` is the one
    deadline in seconds for the whole fetch, ``max_chars`` the body cap, ``max_redirects`` the redirect cap.
    ``transport`` replaces the per-hop ``httpx.AsyncHTTPTransport`` (it receives requests already addressed
    to the checked IP; the caller owns and closes it).

    ``allow_loopback_for_tests`` exists only so that tests can reach servers on loopback: it lets
    ``127.0.0.0/8`` and ``::1`` through and nothing else (``localhost`` names, IPv4-mapped loopback and all
    other private and reserved ranges stay blocked). It is a Python argument only: no tool input, header or
    environment variable can turn it on. Never set it in production code.
    """
    if timeout <= 0:
        raise ConfigurationError("create_web_fetch_tool(): timeout must be a positive number of seconds")
    if max_chars < 0 or max_redirects < 0:
        raise ConfigurationError("create_web_fetch_tool(): max_chars and max_redirects must not be negative")
    fetcher = _WebFetcher(
        resolver=resolver,
        allow_loopback=allow_loopback_for_tests,
        timeout=timeout,
        max_chars=max_chars,
        max_redirects=max_redirects,
        transport=transport,
    )
    return create_tool(
        id="web_fetch",
        description=DESCRIPTION,
        input_schema=WebFetchInput,
        output_schema=WebFetchOutput,
        execute=fetcher.execute,
    )


web_fetch_tool: Tool = create_web_fetch_tool()
"""The ``web_fetch`` tool: system DNS, 15 s deadline, 100 000 characters, 5 redirects, private addresses blocked."""
