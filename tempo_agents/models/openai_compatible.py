"""OpenAI Chat Completions adapter, for ``openai/<model>`` and any OpenAI-compatible server.

One adapter covers OpenAI itself and the servers that speak its streaming Chat Completions wire format
(vLLM, Ollama, llama.cpp, LM Studio, OpenRouter, ...)::

    from_model_string("openai/gpt-4o")        # OPENAI_BASE_URL (default https://api.openai.com/v1), OPENAI_API_KEY
    openai_compatible("llama3.1", base_url="http://localhost:11434/v1", api_key_env=None)
    local_model("llama3.1", "ollama")         # the same, at the server's default address

The adapter streams ``POST {base_url}/chat/completions`` with ``stream: true`` over httpx and turns the
server-sent events into :mod:`tempo_agents.models.model` events. It never retries: every failure is a
:class:`~tempo_agents.errors.ModelError` that says whether retrying can help (rate limits, 408, 409, 5xx,
timeouts, dropped connections, a damaged event in the stream) or not (missing key, 400, 401, 403, 404), and
the model-step activity's retry policy does the rest. Errors that wrap httpx errors are raised without them
(``from None``) and messages quote the server briefly, so Temporal can record the reason for a retry within
its size limit for an activity failure. The API key is read from the worker's environment on every call and
never enters a request.

Wire choices that keep local servers working: an assistant message always carries ``content`` as a string
(``""`` beside tool calls, as llama.cpp and LM Studio reject ``null``); the output limit is sent as
``max_completion_tokens`` to api.openai.com and as ``max_tokens`` to any other server, whatever the
provider label; a legacy ``function_call`` delta is read as a tool call when the stream has no ``tool_calls``.

Built-in web search (a :class:`ToolDefinition` with ``kind="web_search"``): Chat Completions has no
``web_search`` *tool*. For provider ``openai`` (or a base URL on ``api.openai.com``) the definition is
dropped from ``tools`` and the request gets ``web_search_options: {}`` instead (provider defaults), which
OpenAI's search models (``gpt-4o-search-preview``, ``gpt-4o-mini-search-preview``, ``gpt-5-search-api``)
use to search on the provider side; other OpenAI models reject the parameter with a 400, reported as a
non-retryable error that says to use a search model. The ``url_citation`` annotations such a model returns
are surfaced as one provider-executed ``ToolCallEvent`` + ``ToolResultEvent`` (``{"sources": [...]}``) named
after the web-search tool. Any other provider raises :func:`web_search_unsupported`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
import weakref
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from typing import Any, Literal, TypeAlias
from urllib.parse import urlsplit

import httpx

from tempo_agents.errors import ConfigurationError, ModelError
from tempo_agents.models._error_text import (
    MAY_SUCCEED_LATER,
    capitalized,
    clipped,
    quoted_start,
    retry_outlook,
    without_full_stop,
)
from tempo_agents.models.messages import Message, TextPart, ToolCallPart, ToolResultPart
from tempo_agents.models.model import (
    FinishEvent,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ToolCallEvent,
    ToolChoiceTool,
    ToolDefinition,
    ToolInputDelta,
    ToolInputEnd,
    ToolInputStart,
    ToolResultEvent,
)
from tempo_agents.models.usage import Usage
from tempo_agents.tools.builtin.web_search import WEB_SEARCH_UNSUPPORTED_PROVIDER, web_search_unsupported

__all__ = [
    "DEFAULT_OPENAI_BASE_URL",
    "LOCAL_SERVER_URLS",
    "WEB_SEARCH_UNSUPPORTED_PROVIDER",
    "LocalServer",
    "OpenAICompatibleModel",
    "from_model_string",
    "local_model",
    "openai_compatible",
    "web_search_unsupported",
]

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
_USER_AGENT = "tempo-agents/0.1"
_DRAIN_SECONDS = 1.0
"""After ``[DONE]``, how long to wait for the end of the body so the connection can be reused."""


# One connection pool per event loop, shared by every model that was not given its own client.
_shared_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()


def _shared_client() -> httpx.AsyncClient:
    loop = asyncio.get_running_loop()
    client = _shared_clients.get(loop)
    if client is None or client.is_closed:
        client = httpx.AsyncClient(
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
            headers={"user-agent": _USER_AGENT},
        )
        _shared_clients[loop] = client
    return client


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
            _check_base_url(base_url, provider=provider, model=model)
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
    def base_url(self) -> str:
        """The API root, resolved now (``OPENAI_BASE_URL`` is read when no base URL was given)."""
        if self._base_url is not None:
            return self._base_url.rstrip("/")
        from_env = os.environ.get("OPENAI_BASE_URL", "").strip()
        if from_env:
            _check_base_url(from_env, provider=self._provider, model=self._model)
            return from_env.rstrip("/")
        return DEFAULT_OPENAI_BASE_URL

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/chat/completions"

    def __repr__(self) -> str:
        return f"OpenAICompatibleModel(model={self._model!r}, provider={self._provider!r}, base_url={self._base_url!r})"

    # -- request ------------------------------------------------------------------------------

    def _supports_web_search(self) -> bool:
        return self._provider == "openai" or self._is_openai_api()

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body this adapter sends for ``request`` (the key is not part of it)."""
        body: dict[str, Any] = {
            "model": self._model,
            "messages": messages_to_openai(request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        functions = [tool for tool in request.tools if tool.kind == "function"]
        searches = [tool for tool in request.tools if tool.kind == "web_search"]
        if searches:
            if not self._supports_web_search():
                raise web_search_unsupported(self._provider)
            body["web_search_options"] = {}
        if functions:
            body["tools"] = [_tool_to_openai(tool) for tool in functions]
            choice = _tool_choice_to_openai(request.tool_choice, {tool.name for tool in functions})
            if choice is not None:
                body["tool_choice"] = choice
        body.update(self._settings_to_openai(request.settings))
        return body

    def _is_openai_api(self) -> bool:
        """True when requests go to OpenAI's own API (host ``api.openai.com``), whatever the provider label."""
        return urlsplit(self.base_url).hostname == "api.openai.com"

    def _max_tokens_key(self) -> str:
        """OpenAI's API wants ``max_completion_tokens`` (its reasoning models reject ``max_tokens``); other
        servers (vLLM, Ollama, llama.cpp, LM Studio, OpenRouter, ...) read ``max_tokens`` and most ignore the
        newer name, so the limit is sent under the name the server at ``base_url`` reads."""
        return "max_completion_tokens" if self._is_openai_api() else "max_tokens"

    def _settings_to_openai(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        mapped: dict[str, Any] = {}
        max_key = self._max_tokens_key()
        extra: Any = None
        for key, value in settings.items():
            if key in ("provider_options", "providerOptions"):
                extra = value
                continue
            target = _SETTINGS.get(key)
            if target is None or value is None:
                continue
            mapped[max_key if target == "max_tokens" else target] = value
        if extra is not None:
            if not isinstance(extra, Mapping):
                raise ConfigurationError(
                    f'{self._provider} model "{self._model}": model setting provider_options must be a dict '
                    f"of extra request-body fields, got {type(extra).__name__}"
                )
            mapped.update(extra)
        return mapped

    def _request_headers(self) -> dict[str, str]:
        headers = {"accept": "text/event-stream", "user-agent": _USER_AGENT}
        if self._api_key_env is not None:
            key = os.environ.get(self._api_key_env, "").strip()
            if not key:
                raise ModelError(
                    f"{self._describe()}: no API key: the environment variable {self._api_key_env} is not set "
                    f"on the worker. Set {self._api_key_env} in the worker's environment"
                    + ("" if self._provider == "openai" else ", or pass api_key_env=None for a server without keys"),
                    retryable=False,
                    provider=self._provider,
                    model=self._model,
                )
            headers["authorization"] = f"Bearer {key}"
        if self._provider == "openai":
            for env, header in (("OPENAI_ORG_ID", "openai-organization"), ("OPENAI_PROJECT_ID", "openai-project")):
                value = os.environ.get(env, "").strip()
                if value:
                    headers[header] = value
        headers.update({name.lower(): value for name, value in self._headers.items()})
        return headers

    # -- streaming ----------------------------------------------------------------------------

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one step. Closing this generator (or cancelling its task) closes the HTTP response."""
        body = self.build_body(request)
        headers = self._request_headers()
        endpoint = self.endpoint
        client = self._client if self._client is not None else _shared_client()
        search_name = next((tool.name for tool in request.tools if tool.kind == "web_search"), None)
        state = _StreamState(self, step=request.step, web_search_name=search_name)
        try:
            async with client.stream("POST", endpoint, json=body, headers=headers, timeout=self._timeout) as response:
                if not response.is_success:
                    await response.aread()
                    raise self._status_error(response, web_search=search_name is not None)
                content_type = response.headers.get("content-type", "")
                if "json" in content_type and "event-stream" not in content_type:
                    # A server that ignored ``stream: true`` and answered with one completion.
                    await response.aread()
                    for event in state.whole_response(_json_or_none(response.text)):
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
            raise self._transport_error(error) from None

    # -- errors -------------------------------------------------------------------------------

    def _describe(self) -> str:
        try:
            where = self.endpoint
        except ConfigurationError:
            where = "OPENAI_BASE_URL"
        return f'{self._provider} model "{self._model}" at {where}'

    def _key_hint(self) -> str:
        return f"the API key in {self._api_key_env}" if self._api_key_env else "the server's authentication settings"

    def _status_error(self, response: httpx.Response, *, web_search: bool) -> ModelError:
        status = response.status_code
        detail = _ErrorDetail.parse(_json_or_none(response.text), fallback=response.text)
        retryable, advice = self._status_advice(status, detail, web_search=web_search)
        return ModelError(
            f"{self._describe()}: {_status_text(status, response.reason_phrase, detail.message)}. {advice}.",
            retryable=retryable,
            provider=self._provider,
            model=self._model,
            status=status,
            retry_after=_retry_after(response.headers) if retryable else None,
        )

    def _status_advice(self, status: int, detail: _ErrorDetail, *, web_search: bool) -> tuple[bool, str]:
        """Whether a later attempt can help after HTTP ``status``, and what to tell the user."""
        if status == 429 and "insufficient_quota" in (detail.code, detail.type):
            return False, f"The account has no quota left: check the plan and billing of {self._key_hint()}"
        if status in _RETRYABLE_STATUS_ADVICE:
            return True, f"{_RETRYABLE_STATUS_ADVICE[status]}; {MAY_SUCCEED_LATER}"
        if status >= 500:
            return True, f"The server failed or is overloaded; {MAY_SUCCEED_LATER}"
        if status == 401:
            return False, f"Check {self._key_hint()}: it is missing, wrong or revoked"
        if status == 403:
            key = capitalized(self._key_hint())
            return False, f"{key} is not allowed to use model {self._model!r} (or this endpoint)"
        if status == 404:
            return False, (
                f"Check the model name {self._model!r} and the base URL {self.base_url} "
                "(it should end in /v1 for most servers)"
            )
        if web_search and status == 400:
            return False, (
                "Web search on Chat Completions needs a search model such as gpt-4o-search-preview; "
                "otherwise check the request's messages, tools and model settings"
            )
        return False, "The request was rejected; check the messages, tools and model settings"

    def _transport_error(self, error: httpx.HTTPError) -> ModelError:
        """The error for a failed connection or body; raise it ``from None`` (keep Temporal's failure small)."""
        if isinstance(error, (httpx.UnsupportedProtocol, httpx.ProxyError, httpx.TooManyRedirects)):
            return ModelError(
                f"{self._describe()}: {without_full_stop(clipped(str(error)))}. Check the base URL and proxy settings.",
                retryable=False,
                provider=self._provider,
                model=self._model,
            )
        said = clipped(str(error) or type(error).__name__, 200)
        if isinstance(error, httpx.ConnectTimeout):
            what = f"could not connect within {self._timeout.connect:g}s"
        elif isinstance(error, httpx.ReadTimeout):
            what = f"no data from the server for {self._timeout.read:g}s (stalled stream)"
        elif isinstance(error, httpx.TimeoutException):
            what = f"timed out ({type(error).__name__})"
        elif isinstance(error, httpx.ConnectError):
            what = f"could not connect ({said}); check that the server is up"
        elif isinstance(error, httpx.DecodingError):
            what = f"the response body could not be decoded ({said})"
        else:
            what = f"the connection dropped ({said})"
        return ModelError(
            f"{self._describe()}: {what}; {MAY_SUCCEED_LATER}.",
            retryable=True,
            provider=self._provider,
            model=self._model,
        )

    def _stream_error(self, payload: Any) -> ModelError:
        detail = _ErrorDetail.parse(payload, fallback=json.dumps(payload)[:500])
        retryable = detail.looks_transient()
        said = without_full_stop(clipped(detail.message)) or "unknown error"
        return ModelError(
            f"{self._describe()}: the server reported an error mid-stream: {said} ({retry_outlook(retryable)}).",
            retryable=retryable,
            provider=self._provider,
            model=self._model,
            status=detail.status,
        )

    def _malformed_event_error(self, data: str) -> ModelError:
        """A ``data:`` event that is not JSON: the stream is damaged, so this attempt's answer cannot be trusted."""
        return ModelError(
            f"{self._describe()}: the stream is broken: an event is not JSON: {quoted_start('data: ' + data)}; "
            f"{MAY_SUCCEED_LATER}.",
            retryable=True,
            provider=self._provider,
            model=self._model,
        )

    def _incomplete_error(self) -> ModelError:
        return ModelError(
            f"{self._describe()}: the connection closed before the response was complete; {MAY_SUCCEED_LATER}.",
            retryable=True,
            provider=self._provider,
            model=self._model,
        )


def openai_compatible(
    model: str,
    *,
    base_url: str,
    api_key_env: str | None = "OPENAI_API_KEY",
    provider: str = "openai-compatible",
    **options: Any,
) -> OpenAICompatibleModel:
    """A model on any OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio, OpenRouter, ...).

    ``api_key_env=None`` for servers that need no key. ``options``: ``headers``, ``connect_timeout``,
    ``read_timeout``, ``client`` (see :class:`OpenAICompatibleModel`).
    """
    return OpenAICompatibleModel(model, base_url=base_url, api_key_env=api_key_env, provider=provider, **options)


LocalServer: TypeAlias = Literal["ollama", "llama.cpp", "vllm", "lm-studio"]

LOCAL_SERVER_URLS: dict[str, str] = {
    "ollama": "http://localhost:11434/v1",
    "llama.cpp": "http://localhost:8080/v1",
    "vllm": "http://localhost:8000/v1",
    "lm-studio": "http://localhost:1234/v1",
}
"""Where each local server listens when started with its defaults (``ollama serve``, ``llama-server``,
``vllm serve``, LM Studio's server)."""


def local_model(
    model: str,
    server: LocalServer,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    **options: Any,
) -> OpenAICompatibleModel:
    """A model on a local OpenAI-compatible server, by default at that server's default address.

    ``local_model("llama3.1", "ollama")`` talks to ``http://localhost:11434/v1`` with no key; give
    ``base_url`` for another host or port, and ``api_key_env`` when the server was started with an API key
    (``llama-server --api-key``, ``vllm serve --api-key``). ``model`` is the name the server knows the model
    by. The provider label is ``server``. ``options`` as for :func:`openai_compatible`.
    """
    if server not in LOCAL_SERVER_URLS:
        known = ", ".join(repr(name) for name in LOCAL_SERVER_URLS)
        raise ConfigurationError(f"local_model: unknown server {server!r}; expected one of {known}")
    url = base_url if base_url is not None else LOCAL_SERVER_URLS[server]
    return OpenAICompatibleModel(model, base_url=url, api_key_env=api_key_env, provider=server, **options)


def from_model_string(spec: str, **options: Any) -> OpenAICompatibleModel:
    """The model for ``openai/<model>``: ``OPENAI_BASE_URL`` (or api.openai.com) and ``OPENAI_API_KEY``."""
    prefix, _, model = spec.partition("/")
    if prefix != "openai" or not model.strip():
        raise ConfigurationError(f'expected a model string "openai/<model>", got {spec!r}')
    return OpenAICompatibleModel(model, base_url=None, api_key_env="OPENAI_API_KEY", provider="openai", **options)


# -- request mapping ------------------------------------------------------------------------------

_SETTINGS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "topP": "top_p",
    "stop": "stop",
    "stop_sequences": "stop",
    "stopSequences": "stop",
    "seed": "seed",
    "max_tokens": "max_tokens",
    "maxTokens": "max_tokens",
    "max_output_tokens": "max_tokens",
    "maxOutputTokens": "max_tokens",
    "presence_penalty": "presence_penalty",
    "presencePenalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "frequencyPenalty": "frequency_penalty",
}
"""Model settings the adapter maps (snake_case or camelCase); ``max_tokens`` is renamed for api.openai.com."""


def messages_to_openai(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages as Chat Completions messages (tool results become ``tool`` messages)."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            wire.append({"role": "system", "content": message.text})
        elif message.role == "assistant":
            wire.append(_assistant_to_openai(message))
        else:
            has_text = any(isinstance(part, TextPart) for part in message.content)
            if message.role == "user" and (has_text or not message.tool_results):
                wire.append({"role": "user", "content": message.text})
            wire.extend(
                {"role": "tool", "tool_call_id": part.tool_call_id, "content": _result_text(part)}
                for part in message.content
                if isinstance(part, ToolResultPart)
            )
    return wire


def _assistant_to_openai(message: Message) -> dict[str, Any]:
    """An assistant message; ``content`` is always a string, ``""`` beside tool calls when there is no text.

    OpenAI and vLLM accept ``null`` there too, but llama.cpp's server and LM Studio reject it (and some
    llama.cpp versions and lmdeploy reject a missing ``content``); an empty string is accepted by all.
    """
    entry: dict[str, Any] = {"role": "assistant", "content": message.text}
    calls = [_tool_call_to_openai(part) for part in message.content if isinstance(part, ToolCallPart)]
    if calls:
        entry["tool_calls"] = calls
    return entry


def _tool_call_to_openai(part: ToolCallPart) -> dict[str, Any]:
    arguments = "{}" if part.args is None else json.dumps(part.args, ensure_ascii=False)
    return {"id": part.tool_call_id, "type": "function", "function": {"name": part.tool_name, "arguments": arguments}}


def _result_text(part: ToolResultPart) -> str:
    if isinstance(part.result, str):
        return part.result
    return json.dumps(part.result, ensure_ascii=False, default=str)


def _tool_to_openai(tool: ToolDefinition) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.input_schema},
    }


def _tool_choice_to_openai(choice: Any, function_names: set[str]) -> Any:
    """``auto`` is the wire default with tools and is left out (some servers treat it specially)."""
    if isinstance(choice, ToolChoiceTool):
        if choice.tool_name not in function_names:
            return None  # e.g. the web search tool, which is not a function on this API
        return {"type": "function", "function": {"name": choice.tool_name}}
    if choice in ("none", "required"):
        return choice
    return None


def _check_base_url(base_url: str, *, provider: str, model: str) -> None:
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigurationError(
            f'{provider} model "{model}": base URL {base_url!r} is not an http(s) URL '
            "(expected something like https://api.openai.com/v1 or http://localhost:11434/v1)"
        )


# -- response parsing -----------------------------------------------------------------------------

_FINISH_REASONS = {
    "stop": "stop",
    "eos": "stop",
    "end_turn": "stop",
    "length": "length",
    "max_tokens": "length",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "tool_use": "tool-calls",
    "content_filter": "content-filter",
    "error": "error",
}


@dataclass
class _ToolCall:
    id: str
    server_id: bool
    name: str = ""
    started: bool = False
    args: list[str] = field(default_factory=list)
    finished: bool = False


class _StreamState:
    """Assembles events from Chat Completions chunks: text, indexed tool-call fragments, usage, finish."""

    def __init__(self, model: OpenAICompatibleModel, *, step: int, web_search_name: str | None) -> None:
        self._model = model
        self._step = step
        self._web_search_name = web_search_name
        self._calls: list[_ToolCall] = []
        self._by_index: dict[int, _ToolCall] = {}
        self._by_id: dict[str, _ToolCall] = {}
        self._finish_reason: str | None = None
        self._usage: Usage | None = None
        self._response_id: str | None = None
        self._sources: dict[str, dict[str, Any]] = {}
        self._data: list[str] = []
        self._event_name = ""
        self._saw_tool_calls = False
        self.done = False

    def feed_line(self, line: str) -> list[ModelEvent]:
        """One line of the event stream; a blank line dispatches the buffered ``data:`` event."""
        if line:
            if not line.startswith(":"):  # ":" starts a comment / keep-alive
                name, _, value = line.partition(":")
                value = value.removeprefix(" ")
                if name == "data":
                    self._data.append(value)
                elif name == "event":
                    self._event_name = value
            return []
        return self._flush()

    def end_of_body(self) -> list[ModelEvent]:
        """The body ended; without ``[DONE]`` or a finish reason the response is incomplete."""
        events = self._flush()
        if self.done:
            return events
        if self._finish_reason is None:
            raise self._model._incomplete_error()
        # Some servers end the body without ``[DONE]`` after the finish reason: accept it.
        self.done = True
        return events + self._final_events()

    def _flush(self) -> list[ModelEvent]:
        data, event_name = "\n".join(self._data), self._event_name
        self._data, self._event_name = [], ""
        if not data or self.done:
            return []
        return self._dispatch(data, event_name)

    def _dispatch(self, data: str, event_name: str) -> list[ModelEvent]:
        if data.strip() == "[DONE]":
            self.done = True
            return self._final_events()
        try:
            payload = json.loads(data)
        except ValueError:
            if event_name == "error":
                raise self._model._stream_error({"error": {"message": data}}) from None
            # A damaged event: skipping it would silently lose part of the answer.
            raise self._model._malformed_event_error(data) from None
        if event_name == "error" or (isinstance(payload, dict) and payload.get("error")):
            raise self._model._stream_error(payload)
        if not isinstance(payload, dict):
            return []
        return self._chunk(payload)

    def whole_response(self, payload: Any) -> list[ModelEvent]:
        """Events for a non-streamed ``chat.completion`` body."""
        if not isinstance(payload, dict) or payload.get("error") or not isinstance(payload.get("choices"), list):
            raise self._model._stream_error(payload if payload is not None else {"error": {"message": "empty body"}})
        choices: list[Any] = []
        for choice in payload["choices"]:
            if not isinstance(choice, dict):
                continue
            message = dict(choice.get("message") or {})
            calls = message.get("tool_calls")
            if isinstance(calls, list):
                message["tool_calls"] = [
                    {**call, "index": index} for index, call in enumerate(calls) if isinstance(call, dict)
                ]
            choices.append({**choice, "delta": message, "finish_reason": choice.get("finish_reason") or "stop"})
        events = self._chunk({**payload, "choices": choices})
        self.done = True
        return events + self._final_events()

    def _chunk(self, chunk: dict[str, Any]) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        if self._response_id is None and isinstance(chunk.get("id"), str):
            self._response_id = chunk["id"]
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._usage = _usage(usage)
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) not in (0, None):
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                for key in ("content", "refusal"):
                    text = delta.get(key)
                    if isinstance(text, str) and text:
                        events.append(TextDelta(text=text))
                events.extend(self._tool_call_delta(delta))
                self._annotations(delta.get("annotations"))
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                self._finish_reason = reason
                events.extend(self._complete_calls())
        return events

    def _tool_call_delta(self, delta: dict[str, Any]) -> list[ModelEvent]:
        """Tool-call fragments of one delta: ``tool_calls``, else the legacy single ``function_call``.

        Some servers send ``function_call`` beside ``tool_calls`` (a copy of the first call); it is read
        only from a stream that has not sent ``tool_calls``, so a call is never counted twice.
        """
        fragments = delta.get("tool_calls")
        if isinstance(fragments, list) and fragments:
            self._saw_tool_calls = True
            return [event for item in fragments if isinstance(item, dict) for event in self._tool_fragment(item)]
        legacy = delta.get("function_call")
        if isinstance(legacy, dict) and not self._saw_tool_calls:
            return self._tool_fragment({"index": 0, "function": legacy})
        return []

    def _tool_fragment(self, fragment: dict[str, Any]) -> list[ModelEvent]:
        index = fragment.get("index")
        call_id = fragment.get("id") if isinstance(fragment.get("id"), str) and fragment.get("id") else None
        call: _ToolCall | None = None
        if call_id is not None and call_id in self._by_id:
            call = self._by_id[call_id]
        elif isinstance(index, int) and index in self._by_index:
            known = self._by_index[index]
            # A different id at a known index is a new call (some servers send every call at index 0).
            if call_id is None or not known.server_id or known.id == call_id:
                call = known
        elif index is None and call_id is None and self._calls:
            call = self._calls[-1]
        if call is None or call.finished:
            slot = len(self._calls)
            call = _ToolCall(id=call_id or f"call_{self._step}_{slot}", server_id=call_id is not None)
            self._calls.append(call)
            self._by_index[index if isinstance(index, int) else slot] = call
            self._by_id[call.id] = call
        elif call_id is not None and not call.server_id and not call.started:
            call.id, call.server_id = call_id, True
            self._by_id[call_id] = call

        events: list[ModelEvent] = []
        function = fragment.get("function")
        function = function if isinstance(function, dict) else {}
        name = function.get("name")
        if isinstance(name, str) and name and not call.name:
            call.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # a few servers send parsed arguments
            arguments = json.dumps(arguments, ensure_ascii=False)
        if isinstance(arguments, str) and arguments:
            call.args.append(arguments)
            if call.started:
                events.append(ToolInputDelta(tool_call_id=call.id, args_text_delta=arguments))
        if not call.started and call.name:
            events.extend(self._start(call))
        return events

    def _start(self, call: _ToolCall) -> list[ModelEvent]:
        call.started = True
        events: list[ModelEvent] = [ToolInputStart(tool_call_id=call.id, tool_name=call.name)]
        events.extend(ToolInputDelta(tool_call_id=call.id, args_text_delta=text) for text in call.args)
        return events

    def _complete_calls(self) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        for call in self._calls:
            if call.finished:
                continue
            if not call.started:
                events.extend(self._start(call))
            call.finished = True
            events.append(ToolInputEnd(tool_call_id=call.id))
            events.append(ToolCallEvent(tool_call_id=call.id, tool_name=call.name, args_text="".join(call.args)))
        return events

    def _annotations(self, annotations: Any) -> None:
        if self._web_search_name is None or not isinstance(annotations, list):
            return
        for annotation in annotations:
            if not isinstance(annotation, dict) or annotation.get("type") != "url_citation":
                continue
            citation = annotation.get("url_citation")
            citation = citation if isinstance(citation, dict) else annotation
            url = citation.get("url")
            if isinstance(url, str) and url not in self._sources:
                self._sources[url] = {"type": "url", "url": url, "title": citation.get("title")}

    def _final_events(self) -> list[ModelEvent]:
        events = self._complete_calls()
        if self._sources and self._web_search_name is not None:
            call_id = f"ws_{self._response_id or f'step_{self._step}'}"
            events.append(
                ToolCallEvent(
                    tool_call_id=call_id, tool_name=self._web_search_name, args_text="{}", provider_executed=True
                )
            )
            events.append(
                ToolResultEvent(
                    tool_call_id=call_id,
                    tool_name=self._web_search_name,
                    result={"sources": list(self._sources.values())},
                )
            )
        reason = _FINISH_REASONS.get(self._finish_reason or "", "other")
        if self._calls and reason in ("stop", "other"):
            reason = "tool-calls"  # some servers say "stop" after tool calls
        events.append(FinishEvent(finish_reason=reason, usage=self._usage or Usage()))
        return events


def _usage(raw: dict[str, Any]) -> Usage:
    def count(*keys: str) -> int:
        for key in keys:
            value = raw.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return int(value)
        return 0

    input_tokens = count("prompt_tokens", "input_tokens")
    output_tokens = count("completion_tokens", "output_tokens")
    total = count("total_tokens") or input_tokens + output_tokens
    return Usage(input_tokens=input_tokens, output_tokens=output_tokens, total_tokens=total)


@dataclass
class _ErrorDetail:
    message: str
    type: str
    code: str
    status: int | None

    @classmethod
    def parse(cls, payload: Any, *, fallback: str) -> _ErrorDetail:
        error: Any = payload.get("error") if isinstance(payload, dict) else None
        if isinstance(error, str):
            return cls(error, "", "", None)
        if not isinstance(error, dict):
            # vLLM's older top-level form {"object": "error", "message": ...}, FastAPI's {"detail": ...}
            error = payload if isinstance(payload, dict) else {"message": fallback.strip()[:500]}
        message = error.get("message") or error.get("detail") or ""
        if not isinstance(message, str):
            message = json.dumps(message)[:500]
        raw_code = error.get("code")
        status = raw_code if isinstance(raw_code, int) and not isinstance(raw_code, bool) else None
        if status is None and isinstance(error.get("status"), int):
            status = error["status"]
        return cls(message.strip(), str(error.get("type") or ""), "" if raw_code is None else str(raw_code), status)

    def looks_transient(self) -> bool:
        if self.status is not None and (self.status in (408, 409, 429) or self.status >= 500):
            return True
        kind = f"{self.type} {self.code}".lower()
        if any(mark in kind for mark in ("server", "overload", "rate_limit", "timeout", "unavailable", "internal")):
            return True
        text = self.message.lower()
        return any(
            mark in text for mark in ("overloaded", "server error", "try again", "temporarily", "timed out", "capacity")
        )


_RETRYABLE_STATUS_ADVICE = {
    408: "The server timed out waiting for the request",
    409: "The server reported a conflict",
    429: "Rate limited by the server",
}
"""Statuses below 500 that another attempt may get past, and what they mean."""


def _status_text(status: int, reason_phrase: str, provider_said: str) -> str:
    """``HTTP 429 Too Many Requests: <what the server said>``, without empty parts or a final full stop."""
    phrase = reason_phrase.strip()
    if not phrase:
        with contextlib.suppress(ValueError):
            phrase = HTTPStatus(status).phrase  # HTTP/2 has no reason phrases
    text = f"HTTP {status} {phrase}" if phrase else f"HTTP {status}"
    said = without_full_stop(clipped(provider_said))
    return f"{text}: {said}" if said else text


def _retry_after(headers: httpx.Headers) -> float | None:
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        with contextlib.suppress(ValueError):
            return max(0.0, float(milliseconds) / 1000)
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


async def _drain(lines: AsyncIterator[str]) -> None:
    async for _ in lines:
        pass
