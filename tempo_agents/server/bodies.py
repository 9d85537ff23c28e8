"""Request bodies of the HTTP API, as the official client sends them (camelCase, unknown keys allowed)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict
from pydantic.alias_generators import to_camel

__all__ = [
    "MAX_OFFSET",
    "ApproveBody",
    "DeclineBody",
    "ObserveBody",
    "ResumeBody",
    "RunApproveBody",
    "RunDeclineBody",
    "RunForkBody",
    "RunResumeBody",
    "RunToolCallBody",
    "StreamBody",
    "ToolExecuteBody",
    "WholeNumber",
]


WholeNumber = Annotated[int, Strict()]
"""A number the API takes as a JSON integer only: ``true``, ``"1"`` and ``1.0`` are refused (pydantic's lax mode takes
``true`` as 1)."""

MAX_OFFSET = 2**63 - 1
"""The largest journal offset a request may name (both stores keep offsets as signed 64-bit integers)."""


class _Body(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class StreamBody(_Body):
    """``POST /agents/:agentId/stream`` and ``/generate``: the messages and the run options."""

    messages: Any = Field(description="a string, a list of strings, or a list of {role, content} messages")
    run_id: str | None = None
    max_steps: WholeNumber | None = Field(default=None, ge=1)
    memory: dict[str, Any] | None = None
    request_context: dict[str, Any] | None = None
    tool_choice: Any = None
    active_tools: list[str] | None = None
    require_tool_approval: bool | None = None
    model_settings: dict[str, Any] | None = None
    provider_options: dict[str, Any] | None = None
    client_tools: dict[str, Any] | None = None
    thread_strategy: Literal["reject", "enqueue", "interrupt", "rollback", "steer"] | None = Field(
        default=None, description="what the message does when its memory thread has an active run (default enqueue)"
    )
    budget: dict[str, Any] | None = Field(
        default=None, description="limits on tokens and cost ({run, thread, resource, onExceeded}; ours)"
    )
    waiting_holds_thread: bool | None = Field(
        default=None,
        description="a run on a memory thread that waits for a person keeps the thread (default: it yields it; ours)",
    )


class ResumeBody(_Body):
    """``POST /agents/:agentId/resume-stream``."""

    run_id: str
    tool_call_id: str | None = None
    resume_data: Any = Field(description="what the suspended tool is resumed with")
    request_context: dict[str, Any] | None = None


class DeclineBody(_Body):
    """``POST /agents/:agentId/decline-tool-call`` (and ``-generate``)."""

    run_id: str
    tool_call_id: str | None = None
    request_context: dict[str, Any] | None = None
    reason: str | None = None


_ARGS_DESCRIPTION = (
    "the call's arguments as the approver changed them: the tool runs with exactly these, checked against its "
    "input schema (omit to approve the arguments the model made)"
)


class ApproveBody(_Body):
    """``POST /agents/:agentId/approve-tool-call`` (and ``-generate``)."""

    run_id: str
    tool_call_id: str | None = None
    request_context: dict[str, Any] | None = None
    args: Any = Field(default=None, description=_ARGS_DESCRIPTION)


class ObserveBody(_Body):
    """``POST /agents/:agentId/observe``: replay from ``offset`` (inclusive), then follow."""

    run_id: str
    offset: WholeNumber = Field(default=0, ge=0, le=MAX_OFFSET)


class RunForkBody(_Body):
    """``POST /runs/:runId/fork``: where to fork, what to change, which tools to reuse."""

    at_step: WholeNumber | None = Field(
        default=None, ge=0, description="the model step the fork asks again (default: the last good one)"
    )
    messages: Any = Field(default=None, description="messages added after the copied steps")
    replace_input: Any = Field(default=None, description="messages that stand for the run's input")
    agent_id: str | None = Field(default=None, description="another registered agent (model, instructions)")
    reuse: Literal["none", "tools"] = "none"
    rerun: list[str] = Field(default_factory=list, description="tools that run even when reused")
    instructions: str | None = Field(default=None, description="added to the agent's instructions")
    max_steps: WholeNumber | None = Field(default=None, ge=1)
    model_settings: dict[str, Any] | None = None
    request_context: dict[str, Any] | None = None
    memory: dict[str, Any] | None = None


class RunSteerBody(_Body):
    """``POST /runs/:runId/steer``: a user message for the run's next model step."""

    message: Any = Field(description="a string, or one {role, content} message")


class ToolExecuteBody(_Body):
    """``POST /tools/:toolId/execute``: the tool's input under ``data``."""

    data: Any = Field(description="the tool's input")
    request_context: dict[str, Any] | None = None


class RunToolCallBody(_Body):
    """``POST /runs/:runId/approve``: which call (optional when only one waits)."""

    tool_call_id: str | None = None


class RunApproveBody(RunToolCallBody):
    """``POST /runs/:runId/approve``."""

    args: Any = Field(default=None, description=_ARGS_DESCRIPTION)


class RunBudgetBody(_Body):
    """``POST /runs/:runId/budget``: answer a run that waits for its budget, ``raise`` it (to ``budget``) or
    ``end`` the run."""

    action: Literal["raise", "end"]
    budget: dict[str, Any] | None = Field(
        default=None, description="the run's budget from now on ({run, thread, resource, onExceeded})"
    )


class RunResumeBody(RunToolCallBody):
    """``POST /runs/:runId/resume``."""

    resume_data: Any = None


class RunDeclineBody(RunToolCallBody):
    """``POST /runs/:runId/decline``."""

    reason: str | None = None
