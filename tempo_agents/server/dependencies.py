"""What route handlers share: the App being served, lookups that answer 404, the GET request context."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Annotated, Any

from fastapi import Depends, Query, Request

from tempo_agents.agent.agent import Agent
from tempo_agents.client.app import App
from tempo_agents.errors import ConfigurationError, ToolNotFoundError
from tempo_agents.server.errors import ApiError
from tempo_agents.tools.tool import Tool

__all__ = ["PRINTABLE", "AppDep", "RequestContextDep", "find_agent", "find_agent_tool", "find_tool", "request_id"]


PRINTABLE = r"^[^\x00-\x1f\x7f]*$"
"""The pattern of ids used in visibility filters: no control characters (a NUL ends a filter's string early)."""


async def _served_app(request: Request) -> App:
    app: App = request.app.state.tempo_app
    return app


AppDep = Annotated[App, Depends(_served_app)]
"""The App this server serves."""


async def _request_context(
    request_context: Annotated[
        str | None, Query(alias="requestContext", description="JSON, or base64 of UTF-8 JSON")
    ] = None,
) -> dict[str, Any]:
    if not request_context:
        return {}
    for decode in (lambda v: v, lambda v: base64.b64decode(v + "=" * (-len(v) % 4)).decode()):
        try:
            value = json.loads(decode(request_context))
        except (ValueError, binascii.Error, UnicodeDecodeError):
            continue
        if isinstance(value, dict):
            return value
    raise ApiError(
        400,
        "Invalid query parameters",
        issues=[{"field": "requestContext", "message": "expected a JSON object or base64 of one"}],
    )


RequestContextDep = Annotated[dict[str, Any], Depends(_request_context)]
"""The ``requestContext`` query parameter of GET routes, decoded."""


def find_agent(app: App, agent_id: str) -> Agent:
    """The agent, or a 404 with the reference's text."""
    try:
        return app.agent(agent_id)
    except ConfigurationError:
        raise ApiError(404, f"Agent with id {agent_id} not found") from None


def find_tool(app: App, tool_id: str) -> Tool:
    """A tool by its id among the App's and its agents' tools, or a 404."""
    try:
        return app.tool(tool_id)
    except ToolNotFoundError:
        raise ApiError(404, "Tool not found") from None


def find_agent_tool(agent: Agent, tool_id: str) -> Tool:
    """One of an agent's tools by its **id** (not the name the model calls it by), or a 404."""
    for tool in agent.tools.values():
        if tool.id == tool_id:
            return tool
    raise ApiError(404, "Tool not found")


def request_id(request: Request) -> str | None:
    """The caller's own idempotency key for a request, when it sent one."""
    return request.headers.get("idempotency-key") or request.headers.get("x-request-id") or None
