"""Our request in the Chat Completions wire format: the body (messages, tools, tool choice, settings).

Choices that keep local servers working: an assistant message always carries ``content`` as a string, and
the output limit is named as the server at the base URL reads it (``max_completion_tokens`` on
api.openai.com, ``max_tokens`` elsewhere). Web search becomes ``web_search_options`` where the provider has
it (package docstring).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from tempo_agents.errors import ConfigurationError
from tempo_agents.models.messages import Message, TextPart, ToolCallPart, ToolResultPart
from tempo_agents.models.model import ModelRequest, ToolChoiceTool, ToolDefinition
from tempo_agents.models.web_search import web_search_unsupported

__all__ = [
    "check_base_url",
    "is_openai_api",
    "max_tokens_key",
    "messages_to_openai",
    "request_body",
    "settings_to_openai",
    "tool_choice_to_openai",
    "tool_to_openai",
]


def request_body(request: ModelRequest, *, model: str, provider: str, base_url: str) -> dict[str, Any]:
    """The JSON body sent for ``request`` to the server at ``base_url`` (the key is not part of it)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": messages_to_openai(request.messages),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    functions = [tool for tool in request.tools if tool.kind == "function"]
    searches = [tool for tool in request.tools if tool.kind == "web_search"]
    if searches:
        if not (provider == "openai" or is_openai_api(base_url)):
            raise web_search_unsupported(provider)
        body["web_search_options"] = {}
    if functions:
        body["tools"] = [tool_to_openai(tool) for tool in functions]
        choice = tool_choice_to_openai(request.tool_choice, {tool.name for tool in functions})
        if choice is not None:
            body["tool_choice"] = choice
    body.update(
        settings_to_openai(request.settings, limit_key=max_tokens_key(base_url), where=f'{provider} model "{model}"')
    )
    return body


def is_openai_api(base_url: str) -> bool:
    """True when requests go to OpenAI's own API (host ``api.openai.com``), whatever the provider label."""
    return urlsplit(base_url).hostname == "api.openai.com"


def max_tokens_key(base_url: str) -> str:
    """OpenAI's API wants ``max_completion_tokens`` (its reasoning models reject ``max_tokens``); other
    servers (vLLM, Ollama, llama.cpp, LM Studio, OpenRouter, ...) read ``max_tokens`` and most ignore the
    newer name, so the limit is sent under the name the server at ``base_url`` reads."""
    return "max_completion_tokens" if is_openai_api(base_url) else "max_tokens"


def settings_to_openai(settings: Mapping[str, Any], *, limit_key: str, where: str) -> dict[str, Any]:
    """The request-body fields of the model settings; ``provider_options`` are merged in last."""
    mapped: dict[str, Any] = {}
    extra: Any = None
    for key, value in settings.items():
        if key in ("provider_options", "providerOptions"):
            extra = value
            continue
        target = _SETTINGS.get(key)
        if target is None or value is None:
            continue
        mapped[limit_key if target == "max_tokens" else target] = value
    if extra is not None:
        if not isinstance(extra, Mapping):
            raise ConfigurationError(
                f"{where}: model setting provider_options must be a dict "
                f"of extra request-body fields, got {type(extra).__name__}"
            )
        mapped.update(extra)
    return mapped


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


def tool_to_openai(tool: ToolDefinition) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.input_schema},
    }


def tool_choice_to_openai(choice: Any, function_names: set[str]) -> Any:
    """``auto`` is the wire default with tools and is left out (some servers treat it specially)."""
    if isinstance(choice, ToolChoiceTool):
        if choice.tool_name not in function_names:
            return None  # e.g. the web search tool, which is not a function on this API
        return {"type": "function", "function": {"name": choice.tool_name}}
    if choice in ("none", "required"):
        return choice
    return None


def check_base_url(base_url: str, *, provider: str, model: str) -> None:
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigurationError(
            f'{provider} model "{model}": base URL {base_url!r} is not an http(s) URL '
            "(expected something like https://api.openai.com/v1 or http://localhost:11434/v1)"
        )
