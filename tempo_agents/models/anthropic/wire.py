"""Our request in the Messages API's wire format: ``system``, alternating messages of blocks, tools, settings.

Our ``system`` messages become the top-level ``system`` string; ``tool`` messages become ``user`` messages of
``tool_result`` blocks; consecutive messages of one role are merged. The web search definition becomes the
server tool ``{"type": "web_search_20250305", "name": "web_search"}``, and a search the model ran earlier is sent
back as its ``server_tool_use`` and ``web_search_tool_result`` blocks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tempo_agents.errors import ConfigurationError
from tempo_agents.models.messages import Message, TextPart, ToolCallPart, ToolResultPart
from tempo_agents.models.model import ModelRequest, ToolChoiceTool, ToolDefinition

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "PROVIDER",
    "SERVER_TOOL_ID_PREFIX",
    "WEB_SEARCH_TOOL_NAME",
    "WEB_SEARCH_TOOL_TYPE",
    "build_request_body",
    "server_tool_names",
]

PROVIDER = "anthropic"
DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` is required by the Messages API; used when ``settings`` has none."""
WEB_SEARCH_TOOL_TYPE = "web_search_20250305"
WEB_SEARCH_TOOL_NAME = "web_search"
SERVER_TOOL_ID_PREFIX = "srvtoolu_"
"""How the ids of calls the API ran itself (server tools) begin."""
_PROVIDER_NAMESPACES = {"anthropic", "openai", "openai-compatible", "google", "xai", "mistral", "groq", "bedrock"}


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


def server_tool_names(tools: list[ToolDefinition]) -> dict[str, str]:
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
        if isinstance(part, ToolResultPart) and part.tool_call_id.startswith(SERVER_TOOL_ID_PREFIX)
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
            if part.tool_call_id.startswith(SERVER_TOOL_ID_PREFIX):
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
            if part.tool_call_id.startswith(SERVER_TOOL_ID_PREFIX):
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
