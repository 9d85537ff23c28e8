"""web_fetch (reference §4.7) against real HTTP(S) servers on 127.0.0.1 and a DNS resolver the tests control.

Loopback servers are only reachable through ``allow_loopback_for_tests=True``, a factory argument;
the tests of blocked forms run with it off, so a form that slipped through would reach a live server (most
blocked URLs point at the server's port) and fail the "server saw nothing" assertions.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest

from tempo_agents.tools import Tool, ToolContext
from tempo_agents.tools.builtin._addresses import is_blocked_address, is_blocked_hostname, parse_ipv4_literal
from tempo_agents.tools.builtin.web_fetch import (
    ACCEPT,
    DESCRIPTION,
    USER_AGENT,
    create_web_fetch_tool,
    web_fetch_tool,
)

BLOCKED = {"content": "Failed to fetch URL: URL resolves to a private or reserved address.", "isError": True}
PAGE = "<html><body>Hello from the test server</body></html>"
LOOPBACK = "127.0.0.1"
PUBLIC = "93.184.216.34"
DISCONNECT_SECONDS = 10.0
"""How soon the test server must see a cancelled fetch close its socket: at once when idle; a loaded machine (load
average 20 on two cores) took more than 2 s."""


# --------------------------------------------------------------------------- test HTTP server


@dataclass
class Seen:
    """One request as the server read it."""

    path: str
    headers: dict[str, str]


@dataclass
class TestServer:
    """A minimal HTTP/1.1 server on 127.0.0.1 (plain or TLS) that records what it receives."""

    __test__ = False

    tls: ssl.SSLContext | None = None
    requests: list[Seen] = field(default_factory=list)
    requested: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once a request's head has arrived."""
    disconnected: asyncio.Event = field(default_factory=asyncio.Event)
    sni_names: list[str | None] = field(default_factory=list)
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def start(self) -> None:
        if self.tls is not None:
            self.tls.sni_callback = self._record_sni
        self._server = await asyncio.start_server(self._serve, LOOPBACK, 0, ssl=self.tls)

    def _record_sni(self, _sock: ssl.SSLObject, name: str | None, _ctx: ssl.SSLContext) -> None:
        self.sni_names.append(name)

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            request_line, *lines = head.decode("latin-1").split("\r\n")
            headers = {}
            for line in lines:
                if line:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
            path = request_line.split(" ")[1]
            self.requests.append(Seen(path, headers))
            self.requested.set()
            await self._route(path, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _wait_for_disconnect(self, reader: asyncio.StreamReader) -> None:
        with contextlib.suppress(ConnectionError, TimeoutError, ssl.SSLError):
            await asyncio.wait_for(reader.read(), 30)
        self.disconnected.set()

    async def _route(self, path: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        parts = urlsplit(path)
        route, query = parts.path, parse_qs(parts.query)
        if route == "/page":
            await respond(writer, 200, "OK", {"Content-Type": "text/html; charset=utf-8"}, PAGE.encode())
        elif route == "/missing":
            await respond(writer, 404, "Not Found", {"Content-Type": "text/plain"}, b"Not found")
        elif route == "/large":
            await respond(writer, 200, "OK", {"Content-Type": "text/plain"}, b"0123456789" * 15_000)
        elif route == "/exact":
            await respond(writer, 200, "OK", {"Content-Type": "text/plain"}, b"y" * 100_000)
        elif route == "/latin1":
            await respond(writer, 200, "OK", {"Content-Type": "text/plain; charset=iso-8859-1"}, b"caf\xe9")
        elif route == "/bad-utf8":
            await respond(writer, 200, "OK", {"Content-Type": "text/plain"}, b"ok \xff end")
        elif route == "/no-location":
            await respond(writer, 302, "Found", {"Content-Type": "text/plain"}, b"no location")
        elif route == "/redirect":
            await respond(writer, 302, "Found", {"Location": query["to"][0]}, b"moved")
        elif route.startswith("/chain/"):
            remaining = int(route.rsplit("/", 1)[1])
            if remaining == 0:
                await respond(writer, 200, "OK", {"Content-Type": "text/plain"}, b"end of chain")
            else:
                await respond(writer, 302, "Found", {"Location": f"/chain/{remaining - 1}"}, b"")
        elif route.startswith("/slow-chain/"):
            remaining = int(route.rsplit("/", 1)[1])
            await asyncio.sleep(0.2)
            await respond(writer, 302, "Found", {"Location": f"/slow-chain/{max(remaining - 1, 0)}"}, b"")
        elif route == "/slow-headers":
            await self._wait_for_disconnect(reader)
        elif route == "/slow-body":
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\nstart")
            await writer.drain()
            await self._wait_for_disconnect(reader)
        else:
            await respond(writer, 500, "Unknown Route", {}, b"")


async def respond(writer: asyncio.StreamWriter, status: int, reason: str, headers: dict[str, str], body: bytes) -> None:
    lines = [f"HTTP/1.1 {status} {reason}", f"Content-Length: {len(body)}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
    await writer.drain()


@pytest.fixture
async def server() -> AsyncIterator[TestServer]:
    test_server = TestServer()
    await test_server.start()
    try:
        yield test_server
    finally:
        await test_server.close()


class FakeDNS:
    """A resolver the tests control: host -> successive answers (the last one repeats); records every query."""

    def __init__(self, answers: dict[str, Sequence[Sequence[str]]], delay: float = 0.0) -> None:
        self.answers = answers
        self.delay = delay
        self.queries: list[str] = []

    async def __call__(self, host: str) -> list[str]:
        self.queries.append(host)
        if self.delay:
            await asyncio.sleep(self.delay)
        if host not in self.answers:
            raise OSError(f"getaddrinfo ENOTFOUND {host}")
        series = self.answers[host]
        count = self.queries.count(host)
        return list(series[min(count, len(series)) - 1])


def loopback_dns(*names: str) -> FakeDNS:
    return FakeDNS({name: [[LOOPBACK]] for name in names})


def make_tool(dns: FakeDNS, **kwargs: Any) -> Tool:
    kwargs.setdefault("allow_loopback_for_tests", True)
    return create_web_fetch_tool(resolver=dns, **kwargs)


async def fetch(tool: Tool, url: str, context: ToolContext | None = None) -> Any:
    return await tool.execute({"url": url}, context or ToolContext())


# --------------------------------------------------------------------------- the tool itself


def test_tool_definition_is_the_reference_one() -> None:
    assert web_fetch_tool.id == "web_fetch"
    assert web_fetch_tool.description == DESCRIPTION
    assert DESCRIPTION == "Fetch a web page by URL and return text content with basic response metadata."
    schema = web_fetch_tool.model_input_schema()
    assert list(schema["properties"]) == ["url"]
    assert schema["required"] == ["url"]
    assert schema["properties"]["url"]["description"] == "The fully qualified HTTP or HTTPS URL to fetch."
    assert schema["properties"]["url"]["minLength"] == 1
    assert USER_AGENT == "tempo-agents Web Fetch Tool/1.0"
    assert ACCEPT == "text/html,text/plain,application/json,application/xml;q=0.9,*/*;q=0.8"


async def test_allowed_fetch_reaches_the_server_with_the_right_headers(server: TestServer) -> None:
    dns = loopback_dns("public.test")
    result = await fetch(make_tool(dns), f"http://public.test:{server.port}/page")
    assert result == {
        "content": PAGE,
        "truncated": False,
        "status": 200,
        "statusText": "OK",
        "contentType": "text/html; charset=utf-8",
        "url": f"http://public.test:{server.port}/page",
        "ok": True,
    }
    assert dns.queries == ["public.test"]
    (seen,) = server.requests
    assert seen.path == "/page"
    assert seen.headers == {
        "host": f"public.test:{server.port}",
        "user-agent": "tempo-agents Web Fetch Tool/1.0",
        "accept": "text/html,text/plain,application/json,application/xml;q=0.9,*/*;q=0.8",
    }


async def test_a_loopback_literal_is_reachable_only_with_the_test_switch(server: TestServer) -> None:
    result = await fetch(make_tool(FakeDNS({})), f"http://127.0.0.1:{server.port}/page")
    assert result["content"] == PAGE and result["url"] == f"http://127.0.0.1:{server.port}/page"
    assert server.requests[0].headers["host"] == f"127.0.0.1:{server.port}"
    assert await fetch(web_fetch_tool, f"http://127.0.0.1:{server.port}/page") == BLOCKED
    assert len(server.requests) == 1


async def test_no_input_field_can_enable_loopback(server: TestServer) -> None:
    tool = create_web_fetch_tool(resolver=loopback_dns("public.test"))
    for extra in (
        {"allow_loopback_for_tests": True},
        {"allowPrivateAddressesForTests": True, "allow_loopback": True, "resolver": None, "transport": None},
    ):
        for url in (f"http://127.0.0.1:{server.port}/page", f"http://public.test:{server.port}/page"):
            assert await tool.execute({"url": url, **extra}, ToolContext()) == BLOCKED
        # the default tool (system resolver): literals only, so that no real DNS query is made
        for url in (f"http://127.0.0.1:{server.port}/page", f"http://2130706433:{server.port}/page"):
            assert await web_fetch_tool.execute({"url": url, **extra}, ToolContext()) == BLOCKED
    context = ToolContext(request_context={"allow_loopback_for_tests": True})
    assert await tool.execute({"url": f"http://127.0.0.1:{server.port}/page"}, context) == BLOCKED
    assert server.requests == []


async def test_non_2xx_responses_are_ordinary_results(server: TestServer) -> None:
    result = await fetch(make_tool(loopback_dns("public.test")), f"http://public.test:{server.port}/missing")
    assert result == {
        "content": "Not found",
        "truncated": False,
        "status": 404,
        "statusText": "Not Found",
        "contentType": "text/plain",
        "url": f"http://public.test:{server.port}/missing",
        "ok": False,
    }


async def test_a_3xx_without_location_is_returned_as_is(server: TestServer) -> None:
    result = await fetch(make_tool(loopback_dns("public.test")), f"http://public.test:{server.port}/no-location")
    assert result["status"] == 302 and result["ok"] is False and result["content"] == "no location"
    assert "isError" not in result


async def test_the_body_is_capped_at_100000_characters(server: TestServer) -> None:
    tool = make_tool(loopback_dns("public.test"))
    large = await fetch(tool, f"http://public.test:{server.port}/large")
    assert large["truncated"] is True and large["ok"] is True
    assert large["content"] == ("0123456789" * 15_000)[:100_000]
    exact = await fetch(tool, f"http://public.test:{server.port}/exact")
    assert exact["truncated"] is False and exact["content"] == "y" * 100_000
    small = await fetch(make_tool(loopback_dns("public.test"), max_chars=7), f"http://public.test:{server.port}/page")
    assert small["content"] == PAGE[:7] and small["truncated"] is True


async def test_the_body_is_decoded_with_its_charset(server: TestServer) -> None:
    tool = make_tool(loopback_dns("public.test"))
    assert (await fetch(tool, f"http://public.test:{server.port}/latin1"))["content"] == "café"
    assert (await fetch(tool, f"http://public.test:{server.port}/bad-utf8"))["content"] == "ok \ufffd end"


@pytest.mark.parametrize(
    "url",
    ["ftp://example.com/file", "file:///etc/passwd", "javascript:alert(1)", "data:text/plain,hi", "gopher://x/"],
)
async def test_only_http_and_https(url: str) -> None:
    dns = FakeDNS({})
    result = await fetch(make_tool(dns), url)
    assert result == {"content": "Failed to fetch URL: only HTTP and HTTPS URLs are supported.", "isError": True}
    assert dns.queries == []


async def test_network_errors_are_results(server: TestServer) -> None:
    down = FakeDNS({})

    async def failing(host: str) -> list[str]:
        raise OSError("network down")

    result = await fetch(create_web_fetch_tool(resolver=failing), "http://example.test/")
    assert result == {"content": "Failed to fetch URL: network down", "isError": True}
    assert await fetch(make_tool(down), "http://nowhere.test/") == {
        "content": "Failed to fetch URL: getaddrinfo ENOTFOUND nowhere.test",
        "isError": True,
    }
    assert await fetch(make_tool(FakeDNS({"empty.test": [[]]})), "http://empty.test/") == {
        "content": "Failed to fetch URL: getaddrinfo ENOTFOUND empty.test",
        "isError": True,
    }
    closed = socket.socket()
    closed.bind((LOOPBACK, 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    refused = await fetch(make_tool(loopback_dns("public.test")), f"http://public.test:{closed_port}/")
    assert refused["isError"] is True and refused["content"].startswith("Failed to fetch URL: ")
    assert set(refused) == {"content", "isError"}
    assert await fetch(make_tool(down), "http://[::1") == {
        "content": "Failed to fetch URL: Invalid URL",
        "isError": True,
    }


# --------------------------------------------------------------------------- blocked forms (test switch OFF)

BLOCKING_DNS: dict[str, Sequence[Sequence[str]]] = {
    "private.test": [["10.0.0.5"]],
    "loopback.test": [[LOOPBACK]],
    "mixed.test": [[PUBLIC, LOOPBACK]],
    "mixed-private.test": [[PUBLIC, "192.168.1.20"]],
    "mixed-v6.test": [["2606:4700::1111", "fd00::1"]],
    "mapped.test": [["::ffff:127.0.0.1"]],
    "metadata.test": [["169.254.169.254"]],
    "unspecified.test": [["0.0.0.0"]],
    "garbage.test": [["not-an-address"]],
}

BLOCKED_URLS = [
    # IPv4 literals, in every spelling inet_aton accepts
    "http://127.0.0.1:{port}/page",
    "http://2130706433:{port}/page",
    "http://0177.0.0.1:{port}/page",
    "http://0x7f.0.0.1:{port}/page",
    "http://0x7F.1:{port}/page",
    "http://0x7f000001:{port}/page",
    "http://017700000001:{port}/page",
    "http://127.1:{port}/page",
    "http://127.0.1:{port}/page",
    "http://127.0.0.1.:{port}/page",
    "http://%31%32%37.0.0.1:{port}/page",
    "http://0.0.0.0:{port}/page",
    "http://0:{port}/page",
    "http://10.0.0.1/",
    "http://172.16.0.1/",
    "http://172.31.255.255/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/",
    "http://192.0.0.8/",
    "http://192.0.2.1/",
    "http://198.18.0.1/",
    "http://198.51.100.1/",
    "http://203.0.113.1/",
    "http://224.0.0.1/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    "https://10.1.2.3/",
    # IPv6 literals, including IPv4-mapped and other embedded forms
    "http://[::1]:{port}/page",
    "http://[0:0:0:0:0:0:0:1]:{port}/page",
    "http://[::]:{port}/page",
    "http://[::ffff:127.0.0.1]:{port}/page",
    "http://[::ffff:7f00:1]:{port}/page",
    "http://[0:0:0:0:0:ffff:127.0.0.1]:{port}/page",
    "http://[::ffff:10.0.0.1]/",
    "http://[::127.0.0.1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:7f00:1::1]/",
    "http://[fc00::1]/",
    "http://[fd12:3456::1]/",
    "http://[fe80::1]/",
    "http://[ff02::1]/",
    "https://[::1]/",
    # localhost names
    "http://localhost:{port}/page",
    "http://LOCALHOST:{port}/page",
    "http://localhost.:{port}/page",
    "http://api.localhost:{port}/page",
    "https://deep.name.localhost/",
    # names whose DNS answers include a private or reserved address
    "http://private.test:{port}/page",
    "http://loopback.test:{port}/page",
    "http://mixed.test:{port}/page",
    "http://mixed-private.test/",
    "http://mixed-v6.test/",
    "http://mapped.test:{port}/page",
    "http://metadata.test/latest/meta-data/",
    "http://unspecified.test:{port}/page",
    "http://garbage.test:{port}/page",
]


def test_there_are_at_least_30_blocked_forms() -> None:
    assert len(BLOCKED_URLS) >= 30


async def test_every_blocked_form_is_blocked_and_reaches_nothing(server: TestServer) -> None:
    dns = FakeDNS(BLOCKING_DNS)
    tool = create_web_fetch_tool(resolver=dns)  # test switch OFF
    for template in BLOCKED_URLS:
        url = template.format(port=server.port)
        assert await fetch(tool, url) == BLOCKED, url
    assert server.requests == []
    # literals and localhost names never reach DNS; every name does
    assert sorted(set(dns.queries)) == sorted(BLOCKING_DNS)


async def test_the_test_switch_opens_loopback_only(server: TestServer) -> None:
    tool = make_tool(FakeDNS(BLOCKING_DNS))  # test switch ON
    for template in (
        "http://localhost:{port}/page",
        "http://api.localhost:{port}/page",
        "http://[::ffff:127.0.0.1]:{port}/page",
        "http://private.test:{port}/page",
        "http://mixed-private.test:{port}/page",
        "http://mixed-v6.test:{port}/page",
        "http://mapped.test:{port}/page",
        "http://unspecified.test:{port}/page",
        "http://0.0.0.0:{port}/page",
        "http://[::]:{port}/page",
        "http://169.254.169.254/",
    ):
        assert await fetch(tool, template.format(port=server.port)) == BLOCKED, template
    assert server.requests == []


# --------------------------------------------------------------------------- DNS rebinding: the checked address is used


async def test_the_connection_goes_to_the_checked_address_not_a_second_answer(server: TestServer) -> None:
    dns = FakeDNS({"rebind.test": [[LOOPBACK], ["10.0.0.1"]]})
    tool = make_tool(dns)
    result = await fetch(tool, f"http://rebind.test:{server.port}/page")
    assert result["ok"] is True and result["content"] == PAGE
    assert dns.queries == ["rebind.test"]  # resolved once; the HTTP stack never resolved it again
    (seen,) = server.requests
    assert seen.headers["host"] == f"rebind.test:{server.port}"
    # the next fetch gets the private answer, checks it and goes nowhere
    assert await fetch(tool, f"http://rebind.test:{server.port}/page") == BLOCKED
    assert len(server.requests) == 1


async def test_pinning_with_the_switch_off_sends_the_request_to_the_checked_ip() -> None:
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, headers={"content-type": "text/plain"}, text="public page")

    dns = FakeDNS({"rebind.test": [[PUBLIC], [LOOPBACK]]})
    tool = create_web_fetch_tool(resolver=dns, transport=httpx.MockTransport(handler))
    result = await fetch(tool, "https://rebind.test/a?b=1")
    assert result["content"] == "public page" and result["url"] == "https://rebind.test/a?b=1"
    (request,) = sent
    assert request.url == httpx.URL(f"https://{PUBLIC}/a?b=1")
    assert request.headers["host"] == "rebind.test"
    assert request.extensions["sni_hostname"] == "rebind.test"
    assert await fetch(tool, "https://rebind.test/a?b=1") == BLOCKED
    assert len(sent) == 1 and dns.queries == ["rebind.test", "rebind.test"]


async def test_the_request_is_addressed_to_the_checked_ip_in_every_form() -> None:
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, text="ok")

    dns = FakeDNS({"v6.test": [["2606:4700::1111"]], "mapped.test": [["::ffff:8.8.8.8"]]})
    tool = create_web_fetch_tool(resolver=dns, transport=httpx.MockTransport(handler))
    cases: list[tuple[str, str | None, str | None, str | None, str | None]] = [
        # (url asked for, url reported, url the request was sent to, Host header, SNI name); names always carry
        # their SNI name (httpcore only uses it for https), literals none
        ("http://134744072/", "http://8.8.8.8/", "http://8.8.8.8/", "8.8.8.8", None),
        ("http://0010.0010.0010.0010:81/x", "http://8.8.8.8:81/x", "http://8.8.8.8:81/x", "8.8.8.8:81", None),
        (
            "http://[2606:4700:0:0:0:0:0:1111]/",
            "http://[2606:4700::1111]/",
            "http://[2606:4700::1111]/",
            "[2606:4700::1111]",
            None,
        ),
        ("https://v6.test/p", "https://v6.test/p", "https://[2606:4700::1111]/p", "v6.test", "v6.test"),
        (
            "http://mapped.test:8080/",
            "http://mapped.test:8080/",
            "http://8.8.8.8:8080/",
            "mapped.test:8080",
            "mapped.test",
        ),
        ("http://EXAMPLE.%74est/", None, None, None, None),
    ]
    for asked, reported, sent_to, host, sni in cases:
        result = await fetch(tool, asked)
        if reported is None:
            assert result == {"content": "Failed to fetch URL: getaddrinfo ENOTFOUND example.test", "isError": True}
            continue
        assert result["url"] == reported, asked
        request = sent[-1]
        assert str(request.url) == sent_to
        assert request.headers["host"] == host
        assert request.extensions.get("sni_hostname") == sni


async def test_the_next_checked_address_is_tried_when_connecting_fails() -> None:
    sent: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.url.host)
        if request.url.host == "203.0.113.1":  # never reached: this answer is blocked
            raise AssertionError("connected to a blocked address")
        if request.url.host == "8.8.4.4":
            raise httpx.ConnectError("connection refused")
        return httpx.Response(200, text="second")

    dns = FakeDNS({"multi.test": [["8.8.4.4", "8.8.8.8"]], "bad.test": [["8.8.8.8", "203.0.113.1"]]})
    tool = create_web_fetch_tool(resolver=dns, transport=httpx.MockTransport(handler))
    assert (await fetch(tool, "http://multi.test/"))["content"] == "second"
    assert sent == ["8.8.4.4", "8.8.8.8"]
    assert await fetch(tool, "http://bad.test/") == BLOCKED
    assert len(sent) == 2


async def test_a_public_redirect_to_loopback_is_blocked_with_the_switch_off(server: TestServer) -> None:
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(302, headers={"location": f"http://127.0.0.1:{server.port}/page"})

    tool = create_web_fetch_tool(resolver=FakeDNS({"public.test": [[PUBLIC]]}), transport=httpx.MockTransport(handler))
    assert await fetch(tool, "http://public.test/start") == BLOCKED
    assert len(sent) == 1 and server.requests == []


# --------------------------------------------------------------------------- redirects


async def test_redirect_to_another_allowed_name(server: TestServer) -> None:
    dns = loopback_dns("public.test", "other.test")
    target = quote(f"http://other.test:{server.port}/page", safe="")
    result = await fetch(make_tool(dns), f"http://public.test:{server.port}/redirect?to={target}")
    assert result["content"] == PAGE and result["url"] == f"http://other.test:{server.port}/page"
    assert dns.queries == ["public.test", "other.test"]
    assert [seen.headers["host"] for seen in server.requests] == [
        f"public.test:{server.port}",
        f"other.test:{server.port}",
    ]


async def test_relative_redirects_resolve_against_the_current_url(server: TestServer) -> None:
    result = await fetch(make_tool(loopback_dns("public.test")), f"http://public.test:{server.port}/redirect?to=page")
    assert result["content"] == PAGE and result["url"] == f"http://public.test:{server.port}/page"


@pytest.mark.parametrize(
    "target",
    [
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://private.test/",
        "http://mixed.test/",
        "http://mapped.test:{port}/page",
        "http://[::ffff:127.0.0.1]:{port}/page",
        "http://[fd00::1]/",
        "http://localhost:{port}/page",
        "http://admin.localhost:{port}/page",
        "https://192.168.0.1/",
        "http://012.0.0.1/",
        "http://0xa9fea9fe/latest/meta-data/",
    ],
)
async def test_redirect_chains_ending_at_a_private_address_are_blocked(server: TestServer, target: str) -> None:
    dns = FakeDNS({"public.test": [[LOOPBACK]], **BLOCKING_DNS, "mixed.test": [[LOOPBACK, "10.0.0.7"]]})
    hop2 = quote(target.format(port=server.port), safe="")
    hop1 = quote(f"http://public.test:{server.port}/redirect?to={hop2}", safe="")
    assert await fetch(make_tool(dns), f"http://public.test:{server.port}/redirect?to={hop1}") == BLOCKED
    assert [seen.path.split("?")[0] for seen in server.requests] == ["/redirect", "/redirect"]


async def test_redirect_to_a_non_http_scheme(server: TestServer) -> None:
    dns = loopback_dns("public.test")
    for target in ("ftp://example.com/file", "file:///etc/passwd"):
        result = await fetch(make_tool(dns), f"http://public.test:{server.port}/redirect?to={quote(target, safe='')}")
        assert result == {"content": "Failed to fetch URL: Redirect target must use HTTP or HTTPS.", "isError": True}


async def test_at_most_5_redirects(server: TestServer) -> None:
    tool = make_tool(loopback_dns("public.test"))
    five = await fetch(tool, f"http://public.test:{server.port}/chain/5")
    assert five["content"] == "end of chain" and five["url"] == f"http://public.test:{server.port}/chain/0"
    assert len(server.requests) == 6
    server.requests.clear()
    assert await fetch(tool, f"http://public.test:{server.port}/chain/6") == {
        "content": "Failed to fetch URL: Too many redirects. Maximum is 5.",
        "isError": True,
    }
    assert len(server.requests) == 6  # the first request and 5 redirects; the 6th redirect is not followed


# --------------------------------------------------------------------------- one deadline


@pytest.mark.parametrize("path", ["/slow-headers", "/slow-body", "/slow-chain/4"])
async def test_one_deadline_covers_headers_body_and_redirects(server: TestServer, path: str) -> None:
    tool = make_tool(loopback_dns("public.test"), timeout=0.5)
    started = time.monotonic()
    result = await fetch(tool, f"http://public.test:{server.port}{path}")
    assert result == {"content": "Failed to fetch URL: Request timed out after 500ms.", "isError": True}
    assert 0.45 < time.monotonic() - started < 2.0
    if path != "/slow-chain/4":
        await asyncio.wait_for(server.disconnected.wait(), DISCONNECT_SECONDS)  # the socket was closed


async def test_the_deadline_covers_dns() -> None:
    dns = FakeDNS({"slow.test": [[LOOPBACK]]}, delay=5)
    result = await fetch(make_tool(dns, timeout=0.3), "http://slow.test/")
    assert result == {"content": "Failed to fetch URL: Request timed out after 300ms.", "isError": True}


# --------------------------------------------------------------------------- cancellation


async def test_setting_cancelled_stops_a_slow_request(server: TestServer) -> None:
    context = ToolContext()
    tool = make_tool(loopback_dns("public.test"))
    fetching = asyncio.ensure_future(fetch(tool, f"http://public.test:{server.port}/slow-headers", context))
    await asyncio.wait_for(server.requested.wait(), DISCONNECT_SECONDS)  # the server holds the request
    cancelled_at = time.monotonic()
    context.cancelled.set()
    with pytest.raises(asyncio.CancelledError):
        await fetching
    assert time.monotonic() - cancelled_at < 1.0  # not the 30 s the server would hold it
    await asyncio.wait_for(server.disconnected.wait(), DISCONNECT_SECONDS)


async def test_cancelling_the_task_stops_a_slow_body(server: TestServer) -> None:
    tool = make_tool(loopback_dns("public.test"))
    task = asyncio.ensure_future(fetch(tool, f"http://public.test:{server.port}/slow-body"))
    await asyncio.wait_for(server.requested.wait(), DISCONNECT_SECONDS)  # the server sends the body's start
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(server.disconnected.wait(), DISCONNECT_SECONDS)


async def test_an_already_cancelled_context_sends_nothing(server: TestServer) -> None:
    context = ToolContext()
    context.cancelled.set()
    dns = loopback_dns("public.test")
    with pytest.raises(asyncio.CancelledError):
        await fetch(make_tool(dns), f"http://public.test:{server.port}/page", context)
    assert dns.queries == [] and server.requests == []


# --------------------------------------------------------------------------- HTTPS: SNI and verification use the name


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    assert shutil.which("openssl") is not None, "the openssl command makes the test certificate (.ci/run installs it)"
    folder = tmp_path_factory.mktemp("tls")

    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"),
            *("-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=secure.test"),
            *("-addext", "subjectAltName=DNS:secure.test"),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


async def test_https_pins_the_ip_and_verifies_the_name(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)
    tls_server = TestServer(tls=server_context)
    await tls_server.start()
    client_context = ssl.create_default_context(cafile=str(cert))
    try:
        async with httpx.AsyncHTTPTransport(verify=client_context) as transport:
            dns = FakeDNS({"secure.test": [[LOOPBACK], ["10.0.0.1"]], "wrong.test": [[LOOPBACK]]})
            tool = make_tool(dns, transport=transport)
            result = await fetch(tool, f"https://secure.test:{tls_server.port}/page")
            assert result["content"] == PAGE and result["url"] == f"https://secure.test:{tls_server.port}/page"
            assert tls_server.sni_names == ["secure.test"]
            assert tls_server.requests[0].headers["host"] == f"secure.test:{tls_server.port}"
            # same IP, another name: the certificate is checked against the name, so this fails
            wrong = await fetch(tool, f"https://wrong.test:{tls_server.port}/page")
            assert wrong["isError"] is True and "certificate verify failed" in wrong["content"]
            assert "secure.test" not in tls_server.sni_names[1:]
            assert len(tls_server.requests) == 1
    finally:
        await tls_server.close()


# --------------------------------------------------------------------------- address rules


@pytest.mark.parametrize(
    "text", ["127.1", "0x7f.1", "2130706433", "0177.0.0.1", "1.2.3.4", "0", "10.1", "0xA.0xb.012.255", "4294967295"]
)
def test_ipv4_literals_are_read_like_inet_aton(text: str) -> None:
    address = parse_ipv4_literal(text)
    assert address is not None and address.packed == socket.inet_aton(text)


@pytest.mark.parametrize("text", ["1.2.3.4.5", "256.1.1.1", "08.0.0.1", "4294967296", "1..2", "a.b", "example.test"])
def test_names_are_not_ipv4_literals(text: str) -> None:
    assert parse_ipv4_literal(text) is None


@pytest.mark.parametrize(
    "text",
    [
        *("8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "192.0.1.1", "198.20.0.1", "223.255.255.255", PUBLIC),
        *("2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1", "2a00:1450::1"),
    ],
)
def test_public_addresses_are_allowed(text: str) -> None:
    assert not is_blocked_address(ipaddress.ip_address(text))


@pytest.mark.parametrize(
    "text",
    [
        *("0.255.255.255", "100.64.0.0", "100.127.255.255", "172.31.255.255", "198.19.255.255", "224.0.0.0"),
        *("::ffff:0:7f00:1", "fe80::1%eth0", "fec0::1", "2001:db8::1", "2001:0:4136:e378:8000:63bf:80ff:fffe"),
    ],
)
def test_range_edges_and_embedded_forms_are_blocked(text: str) -> None:
    assert is_blocked_address(ipaddress.ip_address(text))


def test_the_loopback_switch_is_narrow() -> None:
    assert not is_blocked_address(ipaddress.ip_address("127.0.0.1"), allow_loopback=True)
    assert not is_blocked_address(ipaddress.ip_address("::1"), allow_loopback=True)
    for text in ("10.0.0.1", "0.0.0.0", "::", "::ffff:127.0.0.1", "169.254.169.254", "fd00::1"):
        assert is_blocked_address(ipaddress.ip_address(text), allow_loopback=True), text
    assert is_blocked_hostname("LocalHost.") and is_blocked_hostname("a.localhost")
    assert not is_blocked_hostname("localhost.example.com") and not is_blocked_hostname("mylocalhost")
