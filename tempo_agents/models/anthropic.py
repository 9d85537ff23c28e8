"""Anthropic adapter: ``anthropic/<model>`` over the streaming Messages API, spoken directly with httpx.

Mapping, in short (see :class:`AnthropicModel` for the details):

* our ``system`` messages become the top-level ``system`` string (joined with blank lines, wherever they stood);
  ``user`` text becomes ``text`` blocks; assistant text and tool calls become ``text`` and ``tool_use`` blocks;
  our ``tool`` messages become ``user`` messages of ``tool_result`` blocks; consecutive messages of one role
  are merged, as the API needs user/assistant alternation.
* a :class:`ToolDefinition` with ``kind="web_search"`` becomes the server tool
  ``{"type": "web_search_20250305", "name": "web_search"}``; its ``server_tool_use`` block is reported as a
  ``ToolCallEvent(provider_executed=True)`` and its ``web_search_tool_result`` block as a ``ToolResultEvent``
  whose ``result`` is the block's raw ``content`` (kept whole, so it can be sent back in a later turn).
* stop reasons: ``end_turn``/``stop_sequence`` → ``stop``, ``max_tokens`` and
  ``model_context_window_exceeded`` → ``length``, ``tool_use`` → ``tool-calls``, ``refusal`` →
  ``content-filter``, ``pause_turn`` (a long server-tool turn the caller may continue) and anything
  unknown → ``other``.
* usage: ``input_tokens`` counts the whole prompt (``input_tokens`` + cache creation + cache reads) from
  ``message_start``, updated by ``message_delta`` when it repeats them; ``output_tokens`` is the cumulative
  count of the last ``message_delta``.

Errors classify themselves as :class:`ModelError`: 408, 409, 429 (with ``retry-after``), 5xx, 529,
timeouts (including a stream that stalls for ``read_timeout`` seconds), dropped connections, a damaged
(non-JSON) event and ``overloaded_error``/``api_error`` events mid-stream are ``retryable``; a missing key,
400, 401, 403, 404, 413 are not. The adapter never retries on its own: the model-step activity's retry
policy does. Errors wrapping httpx errors are raised ``from None`` and quote the server briefly, so the
failure Temporal records for a retried attempt stays within its size limit and keeps the reason.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from tempo_agents.errors import ConfigurationError, ModelError
from tempo_agents.models._error_text import MAY_SUCCEED_LATER, clipped, quoted_start, retry_outlook, without_full_stop
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
from tempo_agents.models.provider_http import SSEDecoder, pooled_client, retry_after_seconds
from tempo_agents.models.usage import Usage

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_TOKENS",
    "WEB_SEARCH_TOOL_TYPE",
    "AnthropicModel",
    "anthropic",
    "build_request_body",
    "from_model_string",
]

PROVIDER = "anthropic"
DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` is required by the Messages API; used when ``settings`` has none."""
WEB_SEARCH_TOOL_TYPE = "web_search_20250305"
WEB_SEARCH_TOOL_NAME = "web_search"
_SERVER_TOOL_ID_PREFIX = "srvtoolu_"

FINISH_REASONS: dict[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool-calls",
    "refusal": "content-filter",
    "pause_turn": "other",
}

_RETRYABLE_ERROR_TYPES = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}
_ERROR_TYPE_STATUS: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
_PROVIDER_NAMESPACES = {"anthropic", "openai", "openai-compatible", "google", "xai", "mistral", "groq", "bedrock"}


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

    def _error(
        self, message: str, *, retryable: bool, status: int | None = None, retry_after: float | None = None
    ) -> ModelError:
        return ModelError(
            f"{PROVIDER}/{self._model}: {message}",
            retryable=retryable,
            provider=PROVIDER,
            model=self._model,
            status=status,
            retry_after=retry_after,
        )

    def _api_key(self) -> str:
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise self._error(
                f"no API key: the environment variable {self.api_key_env} is not set on this worker. Set it in "
                "the worker's environment (keys are never taken from workflow inputs).",
                retryable=False,
            )
        return key

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        headers = {
            **self.extra_headers,
            "x-api-key": self._api_key(),
            "anthropic-version": self.anthropic_version,
            "content-type": "application/json",
            "accept": "text/event-stream",
        }
        content = json.dumps(self.request_body(request), ensure_ascii=False).encode()
        decoder = _StreamDecoder(self, _server_tool_names(request.tools))
        client = self._http_client if self._http_client is not None else pooled_client()
        try:
            async for event in self._stream(client, headers, content, decoder):
                yield event
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from None  # without httpx's chain: Temporal keeps failures small

    def _transport_error(self, exc: httpx.HTTPError) -> ModelError:
        said = clipped(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__, 200)
        if isinstance(exc, httpx.ConnectTimeout):
            what = f"timed out connecting to {self.base_url}"
        elif isinstance(exc, httpx.ReadTimeout):
            what = f"timed out: no data from {self.base_url} for {self.timeout.read} s (stalled stream)"
        elif isinstance(exc, httpx.TimeoutException):
            what = f"timed out talking to {self.base_url} ({type(exc).__name__})"
        elif isinstance(exc, (httpx.UnsupportedProtocol, httpx.LocalProtocolError)):
            return self._error(
                f"cannot call {self.messages_url}: {said}; check base_url / ANTHROPIC_BASE_URL", retryable=False
            )
        elif isinstance(exc, httpx.TransportError):
            what = f"connection to {self.base_url} failed or was dropped ({said})"
        elif isinstance(exc, httpx.DecodingError):
            what = f"the response body from {self.messages_url} could not be decoded ({said})"
        else:  # too many redirects, ...
            return self._error(f"bad response from {self.messages_url}: {said}", retryable=False)
        return self._error(f"{what}; {MAY_SUCCEED_LATER}", retryable=True)

    async def _stream(
        self, client: httpx.AsyncClient, headers: dict[str, str], content: bytes, decoder: _StreamDecoder
    ) -> AsyncIterator[ModelEvent]:
        async with client.stream(
            "POST", self.messages_url, headers=headers, content=content, timeout=self.timeout
        ) as response:
            content_type = response.headers.get("content-type", "")
            if response.status_code != 200 or "text/event-stream" not in content_type:
                await response.aread()
                raise self._status_error(response)
            sse = SSEDecoder()
            async for line in response.aiter_lines():
                record = sse.feed(line)
                if record is not None:
                    for event in decoder.handle(record.event, record.data):
                        yield event
        if decoder.finish is None:
            raise self._error(
                f"the response stream ended before message_stop (connection dropped mid-stream); {MAY_SUCCEED_LATER}",
                retryable=True,
            )
        yield decoder.finish

    def _status_error(self, response: httpx.Response) -> ModelError:
        status = response.status_code
        error_type, detail = _error_detail(response)
        request_id = response.headers.get("request-id")
        where = f" (request-id {request_id})" if request_id else ""
        retry_after = retry_after_seconds(response.headers)
        if status == 200:
            if error_type:
                return self._event_error(error_type, detail)
            return self._error(
                f"expected an event stream from {self.messages_url} but got "
                f"{response.headers.get('content-type') or 'no content type'}{where}; check base_url",
                retryable=False,
            )
        said = without_full_stop(detail)
        label = f"HTTP {status}" + (f" {error_type}" if error_type else "") + (f": {said}" if said else "")
        retryable = status in (408, 409, 429) or status >= 500
        should_retry = response.headers.get("x-should-retry")
        if should_retry in ("true", "false"):
            retryable = should_retry == "true"
        hint = self._status_hint(status, error_type, retry_after)
        return self._error(
            f"{label}{where}; {hint}; {retry_outlook(retryable)}",
            retryable=retryable,
            status=status,
            retry_after=retry_after if retryable else None,
        )

    def _status_hint(self, status: int, error_type: str, retry_after: float | None) -> str:
        """What HTTP ``status`` means for the user (whether to retry is said separately)."""
        if status == 401:
            return f"check that {self.api_key_env} on the worker holds a valid Anthropic API key"
        if status == 403:
            return f"the key in {self.api_key_env} is not allowed to use this model or feature"
        if status == 404:
            return f'check the model name "{self._model}" (anthropic/<model>) and the base URL {self.base_url}'
        if status == 402:
            return "check the billing of the Anthropic account"
        if status == 408:
            return "the server timed out waiting for the request"
        if status == 409:
            return "the server reported a conflict"
        if status == 413:
            return "the request is too large; shorten the conversation or tool results"
        if status == 429:
            return "rate limited" + (f"; retry after {retry_after:g} s" if retry_after is not None else "")
        if status == 529 or error_type == "overloaded_error":
            return "the API is overloaded"
        if status >= 500:
            return "server error"
        return "fix the request (messages, tools or settings)"

    def _event_error(self, error_type: str, detail: str) -> ModelError:
        """The :class:`ModelError` for an ``error`` event (``status`` is the type's HTTP equivalent)."""
        retryable = error_type in _RETRYABLE_ERROR_TYPES
        text = f"{error_type}: {without_full_stop(clipped(detail))}" if detail else error_type
        return self._error(
            f"error event mid-stream: {text}; {retry_outlook(retryable)}",
            retryable=retryable,
            status=_ERROR_TYPE_STATUS.get(error_type),
        )


def anthropic(model: str, **options: Any) -> AnthropicModel:
    """An :class:`AnthropicModel` for ``model`` (``"claude-sonnet-4-5"`` or ``"anthropic/claude-sonnet-4-5"``)."""
    if model.startswith(f"{PROVIDER}/"):
        model = model.split("/", 1)[1]
    return AnthropicModel(model, **options)


def from_model_string(spec: str, **options: Any) -> AnthropicModel:
    """The model an ``anthropic/<model>`` string names."""
    provider, sep, model = spec.partition("/")
    if provider != PROVIDER or not sep or not model.strip():
        raise ConfigurationError(
            f'"{spec}" is not an Anthropic model string; use anthropic/<model>, e.g. "anthropic/claude-sonnet-4-5"',
            code="MODEL_STRING_INVALID",
        )
    return AnthropicModel(model, **options)


# --- request mapping -------------------------------------------------------------------------------------------


def build_request_body(model: str, request: ModelRequest) -> dict[str, Any]:
    """The Messages API body for ``request`` (always ``stream: true``)."""
    settings = request.settings
    system, messages = _map_messages(request.messages)
    max_tokens = _setting(settings, "max_tokens", "maxTokens", "max_output_tokens", "maxOutputTokens")
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1):
        raise ConfigurationError(
            f"{PROVIDER}/{model}: max_tokens must be a positive integer, got {max_tokens!r}",
            code="INVALID_MODEL_SETTING",
        )
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens,
        "messages": messages,
    }
    if system:
        body["system"] = system
    for key, names in (("temperature", ("temperature",)), ("top_p", ("top_p", "topP")), ("top_k", ("top_k", "topK"))):
        value = _setting(settings, *names)
        if value is not None:
            body[key] = value
    stop = _setting(settings, "stop", "stop_sequences", "stopSequences")
    if stop:
        body["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    if request.tools:
        body["tools"] = [_tool(tool) for tool in request.tools]
        body["tool_choice"] = _tool_choice(request.tool_choice, request.tools)
    body.update(_provider_options(_setting(settings, "provider_options", "providerOptions")))
    body["stream"] = True
    return body


def _setting(settings: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if settings.get(name) is not None:
            return settings[name]
    return None


def _provider_options(options: Any) -> dict[str, Any]:
    if not isinstance(options, Mapping) or not options:
        return {}
    if PROVIDER in options or all(key in _PROVIDER_NAMESPACES for key in options):
        namespaced = options.get(PROVIDER)
        return dict(namespaced) if isinstance(namespaced, Mapping) else {}
    return dict(options)


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    if tool.kind == "web_search":
        return {"type": WEB_SEARCH_TOOL_TYPE, "name": WEB_SEARCH_TOOL_NAME}
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def _tool_choice(choice: Any, tools: list[ToolDefinition]) -> dict[str, Any]:
    if isinstance(choice, ToolChoiceTool):
        name = choice.tool_name
        if any(tool.kind == "web_search" and tool.name == name for tool in tools):
            name = WEB_SEARCH_TOOL_NAME
        return {"type": "tool", "name": name}
    return {"type": {"auto": "auto", "required": "any", "none": "none"}.get(str(choice), "auto")}


def _server_tool_names(tools: list[ToolDefinition]) -> dict[str, str]:
    """Anthropic's server tool name → the name our tool definition gave it."""
    names: dict[str, str] = {}
    for tool in tools:
        if tool.kind == "web_search":
            names[WEB_SEARCH_TOOL_NAME] = tool.name
    return names


def _map_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    system: list[str] = []
    mapped: list[dict[str, Any]] = []
    server_results = {
        part.tool_call_id: part
        for message in messages
        for part in message.content
        if isinstance(part, ToolResultPart) and part.tool_call_id.startswith(_SERVER_TOOL_ID_PREFIX)
    }
    for message in messages:
        if message.role == "system":
            if message.text:
                system.append(message.text)
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _assistant_blocks(message, server_results) if role == "assistant" else _user_blocks(message)
        if not blocks:
            continue
        if mapped and mapped[-1]["role"] == role:
            mapped[-1]["content"].extend(blocks)
        else:
            mapped.append({"role": role, "content": blocks})
    for entry in mapped:
        if entry["role"] == "user":  # tool_result blocks must lead a user message
            entry["content"].sort(key=lambda block: block["type"] != "tool_result")
    return "\n\n".join(system), mapped


def _user_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolResultPart):
            if part.tool_call_id.startswith(_SERVER_TOOL_ID_PREFIX):
                continue  # sent with its server_tool_use block, in the assistant message
            blocks.append(
                {
                    "type": "tool_result",
                    "tool_use_id": part.tool_call_id,
                    "content": _result_text(part.result),
                    "is_error": part.is_error,
                }
            )
        elif isinstance(part, ToolCallPart):
            continue  # a tool call in a user message has no Anthropic form
    return blocks


def _assistant_blocks(message: Message, server_results: Mapping[str, ToolResultPart]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCallPart):
            if part.tool_call_id.startswith(_SERVER_TOOL_ID_PREFIX):
                result = server_results.get(part.tool_call_id)
                if result is None:
                    continue  # a server tool call without its result cannot be replayed
                blocks.append(
                    {
                        "type": "server_tool_use",
                        "id": part.tool_call_id,
                        "name": WEB_SEARCH_TOOL_NAME,
                        "input": _tool_input(part.args),
                    }
                )
                blocks.append(
                    {"type": "web_search_tool_result", "tool_use_id": part.tool_call_id, "content": result.result}
                )
            else:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": part.tool_call_id,
                        "name": part.tool_name,
                        "input": _tool_input(part.args),
                    }
                )
    return blocks


def _tool_input(args: Any) -> dict[str, Any]:
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return {}
    return dict(args) if isinstance(args, Mapping) else {}


def _result_text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)


# --- response decoding -----------------------------------------------------------------------------------------


@dataclass
class _Block:
    kind: Literal["text", "tool_use", "server_tool_use", "tool_result", "other"]
    id: str = ""
    name: str = ""
    start_input: Any = None
    args: list[str] = field(default_factory=list)
    content: Any = None


class _StreamDecoder:
    """Turns Anthropic stream events into :class:`ModelEvent` s; ``finish`` is set by ``message_stop``."""

    def __init__(self, model: AnthropicModel, server_tool_names: Mapping[str, str]) -> None:
        self._model = model
        self._server_tool_names = server_tool_names
        self._blocks: dict[int, _Block] = {}
        self._call_names: dict[str, str] = {}
        self._input_tokens = 0
        self._output_tokens = 0
        self._stop_reason: str | None = None
        self.finish: FinishEvent | None = None

    def handle(self, event_name: str, data_text: str) -> list[ModelEvent]:
        try:
            data = json.loads(data_text)
        except ValueError:
            # A damaged event: this attempt's answer cannot be trusted, but a new stream may be whole.
            bad_line = quoted_start(f"data: {data_text}")
            raise self._model._error(
                f"the stream is broken: a {event_name or 'stream'} event is not JSON: {bad_line}; {MAY_SUCCEED_LATER}",
                retryable=True,
            ) from None
        if not isinstance(data, dict):
            return []
        kind = data.get("type") or event_name
        if kind == "error" or event_name == "error":
            error = _dict(data.get("error"))
            raise self._model._event_error(str(error.get("type") or "api_error"), str(error.get("message") or ""))
        if self.finish is not None:
            return []
        if kind == "message_start":
            self._usage(_dict(_dict(data.get("message")).get("usage")))
        elif kind == "content_block_start":
            return self._block_start(_index(data), _dict(data.get("content_block")))
        elif kind == "content_block_delta":
            return self._block_delta(_index(data), _dict(data.get("delta")))
        elif kind == "content_block_stop":
            return self._block_stop(_index(data))
        elif kind == "message_delta":
            reason = _dict(data.get("delta")).get("stop_reason")
            if reason:
                self._stop_reason = str(reason)
            self._usage(_dict(data.get("usage")))
        elif kind == "message_stop":
            usage = Usage(
                input_tokens=self._input_tokens,
                output_tokens=self._output_tokens,
                total_tokens=self._input_tokens + self._output_tokens,
            )
            reason = FINISH_REASONS.get(self._stop_reason or "", "other")
            self.finish = FinishEvent(finish_reason=reason, usage=usage)
        return []  # ping and unknown events

    def _usage(self, usage: Mapping[str, Any]) -> None:
        parts = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        if any(isinstance(usage.get(name), int) for name in parts):
            self._input_tokens = sum(usage.get(name) or 0 for name in parts)
        if isinstance(usage.get("output_tokens"), int):
            self._output_tokens = usage["output_tokens"]

    def _block_start(self, index: int, block: Mapping[str, Any]) -> list[ModelEvent]:
        block_type = str(block.get("type", ""))
        if block_type == "text":
            self._blocks[index] = _Block("text")
            text = block.get("text")
            return [TextDelta(text=text)] if isinstance(text, str) and text else []
        if block_type in ("tool_use", "server_tool_use"):
            call_id = str(block.get("id", ""))
            name = str(block.get("name", ""))
            provider_executed = block_type == "server_tool_use"
            if provider_executed:
                name = self._server_tool_names.get(name, name)
            self._call_names[call_id] = name
            kind: Literal["tool_use", "server_tool_use"] = "server_tool_use" if provider_executed else "tool_use"
            self._blocks[index] = _Block(kind, id=call_id, name=name, start_input=block.get("input"))
            return [ToolInputStart(tool_call_id=call_id, tool_name=name)]
        if block_type.endswith("_tool_result") and "tool_use_id" in block:
            call_id = str(block["tool_use_id"])
            name = self._call_names.get(call_id) or block_type.removesuffix("_tool_result")
            self._blocks[index] = _Block("tool_result", id=call_id, name=name, content=block.get("content"))
            return []
        self._blocks[index] = _Block("other")  # thinking, redacted_thinking, ...
        return []

    def _block_delta(self, index: int, delta: Mapping[str, Any]) -> list[ModelEvent]:
        block = self._blocks.get(index)
        delta_type = delta.get("type")
        if delta_type == "text_delta":
            text = delta.get("text")
            return [TextDelta(text=text)] if isinstance(text, str) and text else []
        if delta_type == "input_json_delta" and block is not None and block.kind in ("tool_use", "server_tool_use"):
            fragment = delta.get("partial_json")
            if isinstance(fragment, str) and fragment:
                block.args.append(fragment)
                return [ToolInputDelta(tool_call_id=block.id, args_text_delta=fragment)]
        return []  # citations_delta, thinking_delta, signature_delta, ...

    def _block_stop(self, index: int) -> list[ModelEvent]:
        block = self._blocks.pop(index, None)
        if block is None:
            return []
        if block.kind in ("tool_use", "server_tool_use"):
            args_text = "".join(block.args)
            if not args_text.strip():
                args_text = json.dumps(block.start_input) if isinstance(block.start_input, dict) else "{}"
            return [
                ToolInputEnd(tool_call_id=block.id),
                ToolCallEvent(
                    tool_call_id=block.id,
                    tool_name=block.name,
                    args_text=args_text,
                    provider_executed=block.kind == "server_tool_use",
                ),
            ]
        if block.kind == "tool_result":
            return [ToolResultEvent(tool_call_id=block.id, tool_name=block.name, result=block.content)]
        return []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _index(data: Mapping[str, Any]) -> int:
    index = data.get("index")
    return index if isinstance(index, int) else -1


def _error_detail(response: httpx.Response) -> tuple[str, str]:
    """``(error type, message)`` of an error response body, as far as it can be read."""
    try:
        payload = response.json()
    except ValueError:
        return "", clipped(response.text)
    error = _dict(_dict(payload).get("error"))
    if error:
        return str(error.get("type") or ""), clipped(str(error.get("message") or ""))
    return "", clipped(response.text)
