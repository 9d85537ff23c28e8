"""``AnthropicModel``: a Claude model behind the streaming Messages API, called over httpx.

The key is read from the worker's environment on every call. The adapter never retries: its errors say whether
another attempt can help (``errors.py``), and the model-step activity's retry policy does the rest.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from tempo_agents.errors import ConfigurationError
from tempo_agents.models.anthropic.errors import CallFailures
from tempo_agents.models.anthropic.stream import StreamDecoder
from tempo_agents.models.anthropic.wire import PROVIDER, build_request_body, server_tool_names
from tempo_agents.models.model import ModelEvent, ModelRequest
from tempo_agents.models.provider_http import SSEDecoder, pooled_client

__all__ = ["DEFAULT_BASE_URL", "AnthropicModel"]

DEFAULT_BASE_URL = "https://api.anthropic.com"


class AnthropicModel:
    """A Claude model behind the Anthropic Messages API (streaming), implementing :class:`Model`.

    The key is read from the worker's environment variable ``api_key_env`` each time the model is
    called; the base URL is ``base_url``, else ``ANTHROPIC_BASE_URL``, else ``https://api.anthropic.com``
    (a base URL ending in ``/v1`` is accepted too). Calls share the connection pool of their event loop
    (``models/provider_http/``) unless an ``http_client`` is given (which the model never closes).
    ``read_timeout`` is the longest the stream may go without a byte (the API pings while it thinks)
    before a retryable timeout.

    ``request.settings`` understood (snake_case or camelCase): ``max_tokens`` (default 4096;
    ``max_output_tokens`` too), ``temperature``, ``top_p``, ``top_k``, ``stop`` / ``stop_sequences``
    (a string or a list) and ``provider_options``, a dict merged into the request body last
    (shallowly; either flat or namespaced as ``{"anthropic": {...}}``, other providers' namespaces
    are ignored). Other settings are ignored; ``stream`` is always true.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "ANTHROPIC_API_KEY",
        anthropic_version: str = "2023-06-01",
        connect_timeout: float = 10.0,
        read_timeout: float = 120.0,
        write_timeout: float = 30.0,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        if not model or not model.strip():
            raise ConfigurationError(
                'anthropic: the model name is empty; use anthropic/<model>, e.g. "anthropic/claude-sonnet-4-5"',
                code="MODEL_STRING_INVALID",
            )
        self._model = model
        self._base_url = base_url
        self.api_key_env = api_key_env
        self.anthropic_version = anthropic_version
        self.timeout = httpx.Timeout(
            connect=connect_timeout, read=read_timeout, write=write_timeout, pool=connect_timeout
        )
        self.extra_headers = dict(headers or {})
        self._http_client = http_client

    def __repr__(self) -> str:
        return f"AnthropicModel({self._model!r}, base_url={self.base_url!r})"

    @property
    def provider(self) -> str:
        return PROVIDER

    @property
    def model_id(self) -> str:
        return self._model

    @property
    def base_url(self) -> str:
        """The base URL calls go to (``base_url``, else ``ANTHROPIC_BASE_URL``, else the public API)."""
        return (self._base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")

    @property
    def messages_url(self) -> str:
        base = self.base_url
        return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body this model sends for ``request``."""
        return build_request_body(self._model, request)

    def _api_key(self, failures: CallFailures) -> str:
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise failures.missing_key()
        return key

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one step. Closing this generator (or cancelling its task) closes the HTTP response."""
        failures = CallFailures(self)
        headers = {
            **self.extra_headers,
            "x-api-key": self._api_key(failures),
            "anthropic-version": self.anthropic_version,
            "content-type": "application/json",
            "accept": "text/event-stream",
        }
        content = json.dumps(self.request_body(request), ensure_ascii=False).encode()
        decoder = StreamDecoder(failures, server_tool_names(request.tools))
        client = self._http_client if self._http_client is not None else pooled_client()
        try:
            async for event in self._stream(client, headers, content, decoder, failures):
                yield event
        except httpx.HTTPError as exc:
            raise failures.transport_error(exc) from None  # without httpx's chain: Temporal keeps failures small

    async def _stream(
        self,
        client: httpx.AsyncClient,
        headers: dict[str, str],
        content: bytes,
        decoder: StreamDecoder,
        failures: CallFailures,
    ) -> AsyncIterator[ModelEvent]:
        async with client.stream(
            "POST", self.messages_url, headers=headers, content=content, timeout=self.timeout
        ) as response:
            content_type = response.headers.get("content-type", "")
            if response.status_code != 200 or "text/event-stream" not in content_type:
                await response.aread()
                raise failures.status_error(response)
            sse = SSEDecoder()  # an event the body ends in without a blank line is not read: the answer is cut
            async for line in response.aiter_lines():
                record = sse.feed(line)
                if record is not None:
                    for event in decoder.handle(record.event, record.data):
                        yield event
        if decoder.finish is None:
            raise failures.ended_early()
        yield decoder.finish
