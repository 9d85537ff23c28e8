"""The HTTP side of ``tempo-agents api``: requests, SSE reading, and failures as the reference's CLI codes."""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import httpx

from tempo_agents.cli.api.output import Output

__all__ = ["DEFAULT_URL", "ApiClient", "ApiCommandError", "Command", "Handler", "api_base"]

DEFAULT_URL = "http://localhost:4111"


class ApiCommandError(Exception):
    """A failure reported as ``{"error": {"code", "message", "details"}}`` with exit code 1."""

    def __init__(self, code: str, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            error["details"] = self.details
        return {"error": error}


def api_base(url: str) -> str:
    """The API root: ``/api`` is added unless the URL already ends with it."""
    url = url.rstrip("/")
    return url if url.endswith("/api") else url + "/api"


def parse_headers(values: list[str]) -> dict[str, str]:
    """``--header "Name: value"`` options."""
    headers: dict[str, str] = {}
    for value in values:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise ApiCommandError("MALFORMED_HEADER", f'Header must look like "Name: value", got "{value}"')
        headers[name.strip()] = content.strip()
    return headers


class ApiClient:
    """One HTTP API, over httpx."""

    def __init__(self, url: str, *, headers: Mapping[str, str] | None = None, timeout_ms: int = 30_000) -> None:
        self._timeout_ms = timeout_ms
        self._http = httpx.AsyncClient(
            base_url=api_base(url) + "/", headers=dict(headers or {}), timeout=timeout_ms / 1000
        )

    async def __aenter__(self) -> ApiClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self._http.aclose()

    async def request(self, method: str, path: str, *, json_body: Any = None, params: Any = None) -> Any:
        """The JSON answer of one request; failures raise :class:`ApiCommandError`."""
        try:
            response = await self._http.request(method, path.lstrip("/"), json=json_body, params=params)
        except httpx.TimeoutException:
            raise ApiCommandError("REQUEST_TIMEOUT", f"Request timed out after {self._timeout_ms}ms") from None
        except httpx.TransportError:
            raise ApiCommandError("SERVER_UNREACHABLE", "Could not connect to target server") from None
        return _answer(response)

    async def events(
        self, method: str, path: str, *, json_body: Any = None, params: Any = None
    ) -> AsyncIterator[dict[str, Any]]:
        """The chunks of an SSE response, as they arrive (until ``[DONE]``)."""
        try:
            async with self._http.stream(
                method, path.lstrip("/"), json=json_body, params=params, timeout=httpx.Timeout(None, connect=10)
            ) as response:
                if response.status_code >= 400:
                    await response.aread()
                    _answer(response)
                buffer = ""
                async for text in response.aiter_text():
                    buffer += text
                    *blocks, buffer = buffer.split("\n\n")
                    for block in blocks:
                        data = next((line[6:] for line in block.split("\n") if line.startswith("data: ")), None)
                        if data is None:
                            continue
                        if data == "[DONE]":
                            return
                        yield json.loads(data)
        except httpx.TransportError:
            raise ApiCommandError("SERVER_UNREACHABLE", "Could not connect to target server") from None


def _answer(response: httpx.Response) -> Any:
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    if response.status_code >= 400:
        raise ApiCommandError(
            "HTTP_ERROR",
            f"Request failed with status {response.status_code}",
            {"status": response.status_code, "body": body},
        )
    return body


Handler = Callable[[ApiClient, argparse.Namespace, Output], Awaitable[int]]
"""What one command does: with the client, its arguments and the output, to its exit code."""

Command = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]", str, Handler, str], argparse.ArgumentParser]
"""Makes one command of a group: its name, its :data:`Handler` and its help (the group's type is generic only to
type checkers, hence its quotes)."""
