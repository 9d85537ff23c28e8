"""``OpenAICompatibleModel``: one model behind a streaming Chat Completions endpoint, called over httpx.

The key is read from the worker's environment on every call and never enters a request body. The adapter
never retries: its errors say whether another attempt can help (``errors.py``), and the model-step
activity's retry policy does the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from tempo_agents.errors import ConfigurationError
from tempo_agents.models.model import ModelEvent, ModelRequest
from tempo_agents.models.openai_compatible.errors import CallFailures, json_or_none
from tempo_agents.models.openai_compatible.stream import StreamState
from tempo_agents.models.openai_compatible.wire import check_base_url, request_body
from tempo_agents.models.provider_http import USER_AGENT, pooled_client

__all__ = ["DEFAULT_OPENAI_BASE_URL", "OpenAICompatibleModel"]

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
_DRAIN_SECONDS = 1.0
"""After ``[DONE]``, how long to wait for the end of the body so the connection can be reused."""


class OpenAICompatibleModel:
    """A model behind an OpenAI-compatible streaming Chat Completions endpoint.

    ``base_url`` is the API root (``.../v1``); ``None`` means ``OPENAI_BASE_URL`` from the worker's
    environment, else ``https://api.openai.com/v1``. ``api_key_env`` names the environment variable
    holding the key (read on every call); ``None`` sends no ``Authorization`` header (local servers).
    ``read_timeout`` bounds every wait for bytes, so a stream that stalls that long fails with a retryable
    timeout. ``client`` shares an ``httpx.AsyncClient``; without one, a pool per event loop is shared.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        provider: str = "openai-compatible",
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 300.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if not model or not model.strip():
            raise ConfigurationError("OpenAI-compatible model: the model name is empty")
        if base_url is not None:
            check_base_url(base_url, provider=provider, model=model)
        if connect_timeout <= 0 or read_timeout <= 0:
            raise ConfigurationError(
                f'{provider} model "{model}": connect_timeout and read_timeout must be positive seconds'
            )
        self._model = model
        self._base_url = base_url
        self._api_key_env = api_key_env
        self._provider = provider
        self._headers = dict(headers or {})
        self._timeout = httpx.Timeout(
            connect=connect_timeout, read=read_timeout, write=max(connect_timeout, 30.0), pool=connect_timeout
        )
        self._client = client

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def model_id(self) -> str:
        return self._model

    @property
    def api_key_env(self) -> str | None:
        return self._api_key_env

    @property
    def timeout(self) -> httpx.Timeout:
        """The connect, read, write and pool timeouts of every request."""
        return self._timeout

    @property
    def base_url(self) -> str:
        """The API root, resolved now (``OPENAI_BASE_URL`` is read when no base URL was given)."""
        if self._base_url is not None:
            return self._base_url.rstrip("/")
        from_env = os.environ.get("OPENAI_BASE_URL", "").strip()
        if from_env:
            check_base_url(from_env, provider=self._provider, model=self._model)
            return from_env.rstrip("/")
        return DEFAULT_OPENAI_BASE_URL

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/chat/completions"

    def __repr__(self) -> str:
        return f"OpenAICompatibleModel(model={self._model!r}, provider={self._provider!r}, base_url={self._base_url!r})"

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body this adapter sends for ``request`` (the key is not part of it)."""
        return request_body(request, model=self._model, provider=self._provider, base_url=self.base_url)

    def _request_headers(self, failures: CallFailures) -> dict[str, str]:
        headers = {"accept": "text/event-stream", "user-agent": USER_AGENT}
        if self._api_key_env is not None:
            key = os.environ.get(self._api_key_env, "").strip()
            if not key:
                raise failures.missing_key()
            headers["authorization"] = f"Bearer {key}"
        if self._provider == "openai":
            for env, header in (("OPENAI_ORG_ID", "openai-organization"), ("OPENAI_PROJECT_ID", "openai-project")):
                value = os.environ.get(env, "").strip()
                if value:
                    headers[header] = value
        headers.update({name.lower(): value for name, value in self._headers.items()})
        return headers

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one step. Closing this generator (or cancelling its task) closes the HTTP response."""
        failures = CallFailures(self)
        body = self.build_body(request)
        headers = self._request_headers(failures)
        endpoint = self.endpoint
        client = self._client if self._client is not None else pooled_client()
        search_name = next((tool.name for tool in request.tools if tool.kind == "web_search"), None)
        state = StreamState(failures, step=request.step, web_search_name=search_name)
        try:
            async with client.stream("POST", endpoint, json=body, headers=headers, timeout=self._timeout) as response:
                if not response.is_success:
                    await response.aread()
                    raise failures.status_error(response, web_search=search_name is not None)
                content_type = response.headers.get("content-type", "")
                if "json" in content_type and "event-stream" not in content_type:
                    # A server that ignored ``stream: true`` and answered with one completion.
                    await response.aread()
                    for event in state.whole_response(json_or_none(response.text)):
                        yield event
                    return
                lines = response.aiter_lines()
                async for line in lines:
                    for event in state.feed_line(line):
                        yield event
                    if state.done:
                        break
                else:
                    for event in state.end_of_body():
                        yield event
                    return
                # After [DONE]: read the end of the body so the connection goes back to the pool.
                with contextlib.suppress(httpx.HTTPError, TimeoutError):
                    await asyncio.wait_for(_drain(lines), _DRAIN_SECONDS)
        except httpx.HTTPError as error:  # timeouts, refused and dropped connections, undecodable bodies
            raise failures.transport_error(error) from None


async def _drain(lines: AsyncIterator[str]) -> None:
    async for _ in lines:
        pass
