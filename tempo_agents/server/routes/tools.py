"""Tool routes: list, details and direct execution (outside any run), at the top level and under an agent."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse
from pydantic_core import to_jsonable_python

from tempo_agents.server.bodies import ToolExecuteBody
from tempo_agents.server.dependencies import AppDep, RequestContextDep, find_agent, find_agent_tool, find_tool
from tempo_agents.server.errors import ApiError
from tempo_agents.server.shapes import tool_listing
from tempo_agents.tools.context import ToolContext
from tempo_agents.tools.tool import Tool

__all__ = ["router"]

router = APIRouter(tags=["tools"])


@router.get("/tools", summary="List every tool, keyed by tool id")
async def list_tools(app: AppDep, _: RequestContextDep) -> dict[str, Any]:
    return {tool_id: tool_listing(tool) for tool_id, tool in app.tools.items()}


@router.get("/tools/{tool_id}", summary="One tool by its id")
async def get_tool(app: AppDep, tool_id: str, _: RequestContextDep) -> dict[str, Any]:
    return tool_listing(find_tool(app, tool_id))


@router.post("/tools/{tool_id}/execute", summary="Run a tool directly, outside any run")
async def execute_tool(
    app: AppDep,
    tool_id: str,
    body: ToolExecuteBody,
    run_id: Annotated[str | None, Query(alias="runId")] = None,
) -> JSONResponse:
    return await _execute(find_tool(app, tool_id), body, run_id=run_id, agent_id=None)


@router.get("/agents/{agent_id}/tools/{tool_id}", summary="One of an agent's tools, by tool id")
async def get_agent_tool(app: AppDep, agent_id: str, tool_id: str, _: RequestContextDep) -> dict[str, Any]:
    return tool_listing(find_agent_tool(find_agent(app, agent_id), tool_id))


@router.post("/agents/{agent_id}/tools/{tool_id}/execute", summary="Run one of an agent's tools directly")
async def execute_agent_tool(app: AppDep, agent_id: str, tool_id: str, body: ToolExecuteBody) -> JSONResponse:
    agent = find_agent(app, agent_id)
    return await _execute(find_agent_tool(agent, tool_id), body, run_id=None, agent_id=agent.id)


def _missing(data: Any) -> bool:
    """The values the reference treats as no input at all (``null``, ``false``, ``0``, ``""``)."""
    if data is None or data is False or data == "":
        return True
    return isinstance(data, int | float) and not isinstance(data, bool) and data == 0


async def _execute(tool: Tool, body: ToolExecuteBody, *, run_id: str | None, agent_id: str | None) -> JSONResponse:
    """The tool's output as JSON (``null`` for none); input validation failures are a 200 error object."""
    if _missing(body.data):
        raise ApiError(400, 'Argument "data" is required')
    if not tool.executable:
        raise ApiError(400, "Tool is not executable")
    context = ToolContext(run_id=run_id, agent_id=agent_id, request_context=dict(body.request_context or {}))
    try:
        output = await tool.execute(body.data, context)
    except Exception as error:
        # Not a 5xx: the client would retry, running the tool again.
        raise ApiError(422, str(error) or type(error).__name__) from None
    return JSONResponse(to_jsonable_python(output, by_alias=True, fallback=str))
