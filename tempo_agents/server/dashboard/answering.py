"""Answering an inbox item: the resume, approval or decline, and the words a late second answer gets."""

from __future__ import annotations

from typing import Any, Literal

from temporalio.service import RPCError

from tempo_agents.client.app import App
from tempo_agents.server.access.hidden import is_hidden
from tempo_agents.server.errors import ApiError, api_error_from
from tempo_agents.server.resuming import ResumeCommand, resume_run
from tempo_agents.workflows.payloads import Answer

__all__ = ["ALREADY_ANSWERED", "already_answered_text", "answer_item"]

ALREADY_ANSWERED = "ALREADY_ANSWERED"
"""The ``code`` of a 409 to an answer that came after another one."""


def already_answered_text(answered_by: str | None) -> str:
    """What the person who answered second reads."""
    return f"already answered by {answered_by or 'someone else'}"


async def _answer_of(app: App, run_id: str, tool_call_id: str | None) -> Answer | None:
    try:
        answers = await app.queries(run_id).answers()
    except RPCError:
        return None
    found = [answer for answer in answers if tool_call_id is None or answer.tool_call_id == tool_call_id]
    return found[-1] if found else None


async def answer_item(
    app: App,
    *,
    run_id: str,
    tool_call_id: str | None,
    action: Literal["resume", "approve", "decline"],
    data: Any,
    reason: str | None,
    answered_by: str | None,
    answered_by_groups: list[str] | None = None,
    args: Any = None,
) -> dict[str, Any]:
    """Send the answer under ``answered_by`` (a member of ``answered_by_groups``; ``args``: an approval's changed
    arguments); a call someone already answered is a 409 that names them and carries their answer (``answer``:
    the action, the data or reason, when)."""
    command = ResumeCommand(
        action,
        run_id,
        tool_call_id,
        data=data,
        reason=reason,
        answered_by=answered_by,
        answered_by_groups=tuple(answered_by_groups or ()),
        args=args,
    )
    try:
        _, resumed = await resume_run(app, None, command)
    except Exception as error:
        refused = api_error_from(error)
        if refused is None or refused.status not in (404, 409) or is_hidden(run_id):
            raise
        earlier = await _answer_of(app, run_id, tool_call_id)
        if earlier is None:
            raise refused from None
        raise ApiError(
            409,
            already_answered_text(earlier.answered_by),
            code=ALREADY_ANSWERED,
            answeredBy=earlier.answered_by,
            answer=earlier.to_wire(),
        ) from None
    return {
        "runId": run_id,
        "toolCallId": tool_call_id,
        "accepted": True,
        "answeredBy": answered_by,
        "offset": resumed.offset,
    }
