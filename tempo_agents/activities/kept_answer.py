"""An answered call's wait, ended in the store: the record of the wait dropped and the answer kept (who answered,
what and when) for the dashboard's Answered view (``Store.answered_calls``).

:func:`end_wait` is the one way it is done, from the two places an answer is known. The client that had an answer
accepted for a call it read (the HTTP server's answers, answer links) ends the wait at once, so a listing made after
its answer leaves the call out; the resumed call's activity (``tool_call.py``, a sub-agent call's relay in
``child_relay.py``) ends it for every answer however it came (the Python API, a signal, the ``temporal`` CLI). The
store drops a wait once and keeps the first answer given for a call's round.
"""

from __future__ import annotations

from datetime import UTC, datetime

from tempo_agents.store.base import GivenAnswer, Store
from tempo_agents.workflows.payloads import Answer, ToolCallInput

__all__ = ["end_answered_wait", "end_wait", "kept_answer"]


async def end_wait(store: Store, run_id: str, tool_call_id: str, round: int, answer: Answer | None) -> None:
    """The call no longer waits in ``round``: listings leave it out from now on, and ``answer`` (``None``: nobody
    answered it) is kept with where it waited, as answered when it says (else now)."""
    given = None
    if answer is not None:
        answered_at = answer.answered_at or datetime.now(UTC)
        given = GivenAnswer(answered_at.timestamp(), answer.model_copy(update={"answered_at": answered_at}).to_wire())
    await store.forget_waiting(run_id, tool_call_id, round, given)


def kept_answer(call_input: ToolCallInput) -> Answer | None:
    """The answer a person gave the call (``None``: not resumed by an answer, its deadline passed, or it was handed
    off to another run: the run's ``answers`` leave those out too). When is the activity's clock."""
    resolution = call_input.resolution
    if resolution is None or resolution.expired or resolution.action in ("handoff", "expire"):
        return None
    return Answer(
        tool_call_id=call_input.call.tool_call_id,
        tool_name=call_input.call.tool_name,
        action=resolution.action,
        answered_by=resolution.answered_by,
        answered_at=datetime.now(UTC),
        data=resolution.data if resolution.action == "resume" else None,
        reason=resolution.reason,
        args=resolution.args,
    )


async def end_answered_wait(store: Store, call_input: ToolCallInput) -> None:
    """A resumed call's wait ended by its activity, when the call was resolved (answered, or its deadline passed)."""
    if call_input.resolution is None:
        return
    await end_wait(
        store, call_input.run_id, call_input.call.tool_call_id, call_input.round - 1, kept_answer(call_input)
    )
