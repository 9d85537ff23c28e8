"""The inbox: every call that waits for a person, one page of waiting runs at a time, newest first (from the
store, ``client/waiting_runs.py``)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Literal

from tempo_agents.approvals import may_answer
from tempo_agents.budgets import is_budget_wait
from tempo_agents.client.app import App
from tempo_agents.client.waiting_runs import WaitingRun, waiting_page
from tempo_agents.errors import ConfigurationError
from tempo_agents.server.dashboard.asked import asked
from tempo_agents.server.errors import ApiError
from tempo_agents.server.pending_view import pending_view
from tempo_agents.server.run_views import page_cursor, page_token
from tempo_agents.store.base import Resources
from tempo_agents.tools.builtin.ask_user import ask_user_tool
from tempo_agents.workflows.payloads import PendingCall

__all__ = ["ItemKind", "inbox_page", "item_kind"]

ItemKind = Literal["question", "approval", "input", "budget"]
_SKIP = "skip:"
_ASKED_KEPT = 2000
_asked: OrderedDict[tuple[int, str, str, str | None], dict[str, Any]] = OrderedDict()
"""What led to each waiting call, by (store, run, call, when it was suspended): it never changes while the call
waits, and the inbox is read again at every change, so each call's transcript is read once."""


async def _what_was_asked(app: App, run_id: str, tool_call_id: str, suspended_at: str | None) -> dict[str, Any]:
    key = (id(app.store), run_id, tool_call_id, suspended_at)
    found = _asked.get(key)
    if found is None:
        found = _asked[key] = await asked(app.store, run_id, tool_call_id)
        while len(_asked) > _ASKED_KEPT:
            _asked.popitem(last=False)
    return found


def item_kind(call: PendingCall) -> ItemKind:
    """How the inbox asks for the answer: an ``ask_user`` question, an approval, a run that waits for its budget
    to be raised, or a form from the resume schema."""
    if is_budget_wait(call.tool_name, call.tool_call_id):
        return "budget"
    if call.requires_approval:
        return "approval"
    if call.tool_id == ask_user_tool.id:
        return "question"
    return "input"


async def _items(app: App, run: WaitingRun, principal: str | None, groups: list[str]) -> list[dict[str, Any]]:
    try:
        agent = app.agent(run.agent_id or "")
    except ConfigurationError:
        agent = None
    items = []
    for call in run.calls:
        view = await pending_view(agent, call)
        items.append(
            {
                "runId": run.run_id,
                "agentId": run.agent_id,
                "agentName": agent.name if agent is not None else None,
                "threadId": run.thread_id,
                "resourceId": run.resource_id,
                "kind": item_kind(call),
                "waitingForMe": bool(call.approvers)
                and principal is not None
                and may_answer(call.approvers, principal, groups),
                "mayAnswer": may_answer(call.approvers, principal, groups),
                **view,
                **await _what_was_asked(app, run.run_id, call.tool_call_id, view["suspendedAt"]),  # what led to it
            }
        )
    return items


def _skipped(cursor: str | None) -> int:
    """How many runs earlier pages showed, from the ``nextCursor`` they handed out."""
    if not cursor:
        return 0
    token = page_token(cursor)
    text = token.decode("ascii", "replace") if token is not None else ""
    if not text.startswith(_SKIP) or not text[len(_SKIP) :].isascii() or not text[len(_SKIP) :].isdigit():
        raise ApiError(400, "Invalid query parameters", issues=[{"field": "cursor", "message": "bad cursor"}])
    return int(text[len(_SKIP) :])


async def inbox_page(
    app: App,
    *,
    agent: str | None,
    per_page: int,
    cursor: str | None,
    thread: str | None = None,
    resource: Resources = None,
    principal: str | None = None,
    groups: list[str] | None = None,
) -> dict[str, Any]:
    """One page of waiting runs (``total`` of them in all) as inbox items: the calls waiting for ``principal``
    (assigned to it or to one of its ``groups``) first, then those anyone may answer, then those assigned to
    others; each part the newest suspension first.

    Read from the store, where a wait is recorded with the chunk that journals it: a run is in the inbox as
    soon as its suspension can be read, and out of it once its answer was accepted."""
    skip = _skipped(cursor)
    page = await waiting_page(
        app.store,
        app.client,
        app.task_queue,
        agent_id=agent,
        thread_id=thread,
        resource_id=resource,
        limit=per_page,
        skip=skip,
    )
    items = [item for run in page.runs for item in await _items(app, run, principal, groups or [])]
    items.sort(key=lambda item: item["suspendedAt"] or "", reverse=True)
    items.sort(key=lambda item: 0 if item["waitingForMe"] else 1 if item["mayAnswer"] else 2)  # stable: newest first
    shown = skip + len(page.runs)
    next_cursor = page_cursor(f"{_SKIP}{shown}".encode()) if shown < page.total else None
    return {"items": items, "total": page.total, "nextCursor": next_cursor}
