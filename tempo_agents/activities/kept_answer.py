"""The answer a resumed call's activity keeps in the store as it ends the call's wait: who answered, what and when,
for the dashboard's Answered view (``Store.answered_calls``)."""

from __future__ import annotations

from datetime import UTC, datetime

from tempo_agents.store.base import GivenAnswer
from tempo_agents.workflows.payloads import Answer, ToolCallInput

__all__ = ["kept_answer"]


def kept_answer(call_input: ToolCallInput) -> GivenAnswer | None:
    """The answer a person gave the call (``None``: not resumed by an answer, its deadline passed, or it was handed
    off to another run: the run's ``answers`` leave those out too).

    When is the activity's clock: the server that had the answer accepted keeps its own first, and the store keeps
    the first one given for a call's round."""
    resolution = call_input.resolution
    if resolution is None or resolution.expired or resolution.action in ("handoff", "expire"):
        return None
    now = datetime.now(UTC)
    answer = Answer(
        tool_call_id=call_input.call.tool_call_id,
        tool_name=call_input.call.tool_name,
        action=resolution.action,
        answered_by=resolution.answered_by,
        answered_at=now,
        data=resolution.data if resolution.action == "resume" else None,
        reason=resolution.reason,
        args=resolution.args,
    )
    return GivenAnswer(now.timestamp(), answer.to_wire())
