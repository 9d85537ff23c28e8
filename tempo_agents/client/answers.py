"""Answering a run from an App: a waiting call's answer (the ``resume`` update, or its signal) under the answerer's
groups, and a budget answer (the ``budget`` update); each returns the stream from the answer on.

A caller that read the call it answers hands it down: the answerer is checked against its approvers before the
update is sent, and once the run accepted the answer the call's wait is ended in the store at once
(``activities/kept_answer.py``), so a listing made after the answer leaves it out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from tempo_agents.activities.kept_answer import end_wait
from tempo_agents.agent.agent import Agent
from tempo_agents.budgets import Budget
from tempo_agents.client.budget_usage import send_budget_answer
from tempo_agents.client.resume import ANSWER_METHODS, AnsweringClient, send_resume, stream_after
from tempo_agents.errors import ConfigurationError
from tempo_agents.streams import AgentStream
from tempo_agents.workflows.payloads import Answer, BudgetAnswer, PendingCall, ResumeRequest

__all__ = ["AnsweringApp", "answer_budget", "answer_call", "signal_answer", "with_groups"]


class AnsweringApp(AnsweringClient, Protocol):
    """What answering needs of an App beyond its client and store: its agents and its principals' groups."""

    @property
    def groups(self) -> Mapping[str, Sequence[str]]: ...

    def agent(self, agent_id: str) -> Agent: ...


def with_groups(request: ResumeRequest, groups: Mapping[str, Sequence[str]]) -> ResumeRequest:
    """The request with the groups the App gives its answerer added after the ones it carries."""
    if request.answered_by is None:
        return request
    carried = [*request.answered_by_groups]
    carried += [group for group in groups.get(request.answered_by, []) if group not in carried]
    return request.model_copy(update={"answered_by_groups": carried})


async def answer_call(
    app: AnsweringApp,
    run_id: str,
    request: ResumeRequest,
    *,
    agent_id: str,
    idempotency_key: str | None = None,
    method: str | None = None,
    waiting: PendingCall | None = None,
) -> AgentStream:
    """``App.answer``: the answer of a waiting call of ``agent_id``'s run sent as the ``resume`` update, under the
    answerer's groups; refused answers are worded for ``method`` (by default the action's). ``waiting``: the call
    as the caller read it (the answerer is checked against its approvers before the update is sent, and its wait
    ends in the store once the answer is accepted)."""
    agent = app.agent(agent_id)
    stream = await send_resume(
        app,
        run_id,
        with_groups(request, app.groups),
        agent_id=agent.id,
        agent_name=agent.name,
        method=method or ANSWER_METHODS.get(request.action, request.action),
        idempotency_key=idempotency_key,
        waiting=waiting,
    )
    if waiting is not None:  # accepted: listings made from now on leave the call out (its resumed activity agrees)
        await end_wait(app.store, run_id, waiting.tool_call_id, waiting.round, _accepted(request, waiting))
    return stream


def _accepted(request: ResumeRequest, waiting: PendingCall) -> Answer:
    """The accepted answer as the store keeps it (who, what, when: now, as the run's ``answers`` query says it)."""
    return Answer(
        tool_call_id=waiting.tool_call_id,
        tool_name=waiting.tool_name,
        action=request.action,
        answered_by=request.answered_by,
        answered_at=datetime.now(UTC),
        data=request.data if request.action == "resume" else None,
        reason=request.reason if request.action == "decline" else None,
        args=request.args if request.action == "approve" else None,
    )


async def signal_answer(
    app: AnsweringApp, run_id: str, resume_data: Any, *, tool_call_id: str | None, answered_by: str | None
) -> None:
    """``App.signal_resume``: a resume sent as the ``resume`` signal, under the answerer's groups."""
    request = ResumeRequest(action="resume", data=resume_data, tool_call_id=tool_call_id, answered_by=answered_by)
    if answered_by is not None:
        request = request.model_copy(update={"answered_by_groups": list(app.groups.get(answered_by, []))})
    await app.client.get_workflow_handle(run_id).signal("resume", request)


async def answer_budget(
    app: AnsweringClient,
    run_id: str,
    *,
    budget: Budget | Mapping[str, Any] | None,
    end: bool,
    answered_by: str | None,
) -> AgentStream:
    """``App.answer_budget``: raise the budget of a run that waits for it, or end the run."""
    if end == (budget is not None):
        raise ConfigurationError("answer_budget needs either budget=... (raise it) or end=True")
    answer = BudgetAnswer(
        action="end" if end else "raise",
        budget=None if budget is None else Budget.model_validate(budget),
        answered_by=answered_by,
    )
    accepted = await send_budget_answer(app.client, run_id, answer)
    stream = await stream_after(app, run_id, accepted)
    assert stream is not None  # no limit on the attempts
    return stream
