"""The JSON shapes the official client expects: tools, agents, stream chunks and ``generate`` results."""

from __future__ import annotations

import json
from typing import Any

from tempo_agents.agent.agent import Agent
from tempo_agents.journal.chunks import (
    Chunk,
    StartChunk,
    StepStartChunk,
    ToolCallApprovalChunk,
    ToolCallSuspendedChunk,
    chunk_to_wire,
)
from tempo_agents.streams import GenerateResult
from tempo_agents.tools.tool import Tool

__all__ = ["JSON_SCHEMA_DIALECT", "agent_details", "chunk_wire", "full_output", "message_id", "tool_listing"]

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _superjson(schema: dict[str, Any]) -> str:
    """A JSON schema as listings carry it: a string of ``{"json": schema}`` naming draft 2020-12."""
    document = schema if "$schema" in schema else {"$schema": JSON_SCHEMA_DIALECT, **schema}
    return json.dumps({"json": document}, separators=(",", ":"), ensure_ascii=False)


def tool_listing(tool: Tool, *, partial: bool = False) -> dict[str, Any]:
    """A tool as ``/tools`` and agent details list it; absent schemas are absent keys."""
    shown: dict[str, Any] = {"id": tool.id, "description": tool.description}
    if not partial:
        shown["inputSchema"] = _superjson(tool.model_input_schema())
        if tool.output_schema is not None:
            shown["outputSchema"] = _superjson(tool.output_schema.json_schema())
    # A predicate may ask for approval, so listings say it does.
    shown["requireApproval"] = bool(tool.require_approval)
    return shown


def _model_fields(agent: Agent) -> dict[str, str]:
    model = agent.model
    if isinstance(model, str):
        provider, _, model_id = model.partition("/")
        return {"provider": provider, "modelId": model_id or provider}
    return {"provider": model.provider, "modelId": model.model_id}


def agent_details(agent: Agent, *, partial: bool = False, with_id: bool = False) -> dict[str, Any]:
    """An agent as ``GET /agents/:agentId`` shows it (``with_id``: as an entry of ``GET /agents``).

    ``tools`` is keyed by the name the model calls each tool by (the agent's tool key).
    Instructions that are a function of the request context are resolved on workers only, so they
    show as an empty string.
    """
    details: dict[str, Any] = {"id": agent.id} if with_id else {}
    details.update(
        {
            "name": agent.name,
            "description": agent.description,
            "instructions": agent.instructions if isinstance(agent.instructions, str) else "",
            "tools": {name: tool_listing(tool, partial=partial) for name, tool in agent.tools.items()},
            "agents": {},
            "workflows": {},
            "skills": [],
            "workspaceTools": [],
            "browserTools": [],
            "hasBrowser": False,
            "inputProcessors": [],
            "outputProcessors": [],
            **_model_fields(agent),
            "supportsMemory": True,
            "defaultOptions": {},
            "source": "code",
        }
    )
    return details


def message_id(run_id: str, step_number: int) -> str:
    """The id of the assistant message a step writes, stable across reconnects."""
    return f"msg-{run_id}-{step_number}"


def chunk_wire(chunk: Chunk) -> dict[str, Any]:
    """A journal chunk as agent streams send it; ``step-start`` carries a ``messageId``, ``start`` an ``id``."""
    data = chunk_to_wire(chunk)
    if isinstance(chunk, StepStartChunk):
        data["payload"]["messageId"] = message_id(chunk.run_id, chunk.payload.step_number)
    elif isinstance(chunk, StartChunk):
        data["payload"]["id"] = chunk.payload.agent_id
    return data


def full_output(result: GenerateResult) -> dict[str, Any]:
    """A finished (or suspended) run in the shape of the reference's ``generate`` result.

    ``toolCalls`` and ``toolResults`` are whole chunks. A suspended run carries the waiting call's
    chunk payload as ``suspendPayload`` and its ``resumeSchema``.
    """
    usage = result.usage.model_dump(mode="json", by_alias=True, exclude_none=True)
    output: dict[str, Any] = {
        "text": result.text,
        "finishReason": result.finish_reason,
        "runId": result.run_id,
        "usage": usage,
        "totalUsage": usage,
        "toolCalls": [chunk_wire(chunk) for chunk in result.tool_calls],
        "toolResults": [chunk_wire(chunk) for chunk in result.tool_results],
        "steps": [],
        "stepCount": result.steps,
        "warnings": [],
        "request": {},
        "reasoning": [],
        "sources": [],
        "files": [],
        "response": {"messages": []},
        "messages": [],
        "rememberedMessages": [],
        "usedFallbackValue": False,
    }
    if result.error is not None:
        output["error"] = result.error
    if result.finish_reason == "suspended":
        waiting = [c for c in result.chunks if isinstance(c, ToolCallSuspendedChunk | ToolCallApprovalChunk)]
        if waiting:
            payload = chunk_wire(waiting[-1])["payload"]
            output["suspendPayload"] = payload
            output["resumeSchema"] = payload.get("resumeSchema", "")
    return output
