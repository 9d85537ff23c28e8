"""Waiting calls as clients may see them: arguments and suspend payloads through the display transform."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tempo_agents.agent.agent import Agent
from tempo_agents.tools.displayed_call import displayed_call
from tempo_agents.workflows.payloads import PendingCall

__all__ = ["iso", "pending_view", "shown_call"]


def iso(moment: datetime | None) -> str | None:
    """An ISO-8601 UTC time with milliseconds and ``Z``, as the reference writes them."""
    if moment is None:
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def shown_call(
    agent: Agent | None,
    *,
    tool_call_id: str,
    tool_name: str,
    args: Any,
    suspend_payload: Any,
    approval: bool = False,
) -> tuple[Any, Any]:
    """``(args, suspend_payload)`` projected for display by the tool's (and agent's) transform, as every surface
    shows them (``tools/displayed_call.py``); ``approval``: the call waits for approval."""
    transform = agent.transform_for(tool_name) if agent is not None else None
    shown = await displayed_call(
        transform,
        tool_name=tool_name,
        tool_call_id=tool_call_id,
        args=args,
        suspend_payload=suspend_payload,
        approval=approval,
    )
    return shown.args, shown.suspend_payload


async def pending_view(agent: Agent | None, call: PendingCall) -> dict[str, Any]:
    """A pending call for ``GET /runs/:runId``: display-projected payloads and the resume schema."""
    args, payload = await shown_call(
        agent, tool_call_id=call.tool_call_id, tool_name=call.tool_name, args=call.args,
        suspend_payload=call.suspend_payload, approval=call.requires_approval,
    )  # fmt: skip
    view: dict[str, Any] = {
        "toolCallId": call.tool_call_id,
        "toolName": call.tool_name,
        "toolId": call.tool_id,
        "args": args,
        "requiresApproval": call.requires_approval,
        "suspendPayload": payload,
        "resumeSchema": call.resume_schema,
        "suspendedAt": iso(call.suspended_at),
        "expiresAt": iso(call.expires_at),
        "round": call.round,
        "approvers": call.approvers,
        "argsSchema": call.args_schema,
        # Edit-then-approve starts from the arguments shown: only where they are the arguments that would run.
        "argsEditable": bool(call.requires_approval and call.args_schema and args == call.args),
    }
    return view
