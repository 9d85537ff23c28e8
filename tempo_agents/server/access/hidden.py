"""The answers for what a principal may not see: the very 404 a route gives for a run or schedule that does not
exist, so that another tenant's are indistinguishable from none."""

from __future__ import annotations

from typing import Any

from tempo_agents.client.app import App
from tempo_agents.client.resume import resume_error_text
from tempo_agents.errors import ConfigurationError
from tempo_agents.server.errors import ApiError
from tempo_agents.workflows import resume_errors

__all__ = ["hidden_run", "hidden_schedule"]

_ANSWER_METHODS = {"resume": "resumeStream", "approve": "approveToolCall", "decline": "declineToolCall"}
"""The reference's method names of the answers, by the action an inbox answer names."""


def _answer_method(path: str, body: Any) -> str | None:
    """The method a body-run route's 404 names (``None``: the route is no answer)."""
    if path == "/inbox/answer":
        action = body.get("action") if isinstance(body, dict) else None
        return _ANSWER_METHODS.get(action) if isinstance(action, str) else None
    last = path.rsplit("/", 1)[-1].removesuffix("-generate")
    return {"resume-stream": "resumeStream", "approve-tool-call": "approveToolCall"}.get(
        last, "declineToolCall" if last == "decline-tool-call" else None
    )


def _agent_name(app: App, agent_id: str | None) -> str:
    if agent_id is None:
        return ""
    try:
        return app.agent(agent_id).name
    except ConfigurationError:
        return ""


def hidden_run(app: App, run_id: str, *, path: str, agent_id: str | None, body: Any) -> ApiError:
    """The 404 of ``path`` for a run that does not exist (an answer's words the reference's way)."""
    method = _answer_method(path, body)
    if method is None:
        return ApiError(404, f'no run "{run_id}" exists')
    text = resume_error_text(
        resume_errors.NO_SNAPSHOT_FOUND,
        agent_name=_agent_name(app, agent_id),
        method=method,
        run_id=run_id,
        tool_call_id=None,
    )
    return ApiError(404, text, code=resume_errors.NO_SNAPSHOT_FOUND)


def hidden_schedule(schedule_id: str) -> ApiError:
    """The 404 of a schedule that does not exist."""
    return ApiError(404, f"Schedule with id {schedule_id} not found")
