"""The inbox: every call that waits for a person, one page of waiting runs at a time, newest first."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any, Literal

from temporalio.service import RPCError

from tempo_agents.agent.app import App
from tempo_agents.errors import ConfigurationError
from tempo_agents.server.dashboard.asked import asked
from tempo_agents.server.pending_view import pending_view
from tempo_agents.server.run_views import list_runs
from tempo_agents.tools.builtin.ask_user import ask_user_tool
from tempo_agents.workflows.payloads import PendingCall

__all__ = ["ItemKind", "inbox_page", "item_kind"]

ItemKind = Literal["question", "approval", "input"]
_QUERY_TIMEOUT = 5.0
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
    """How the inbox asks for the answer: an ``ask_user`` question, an approval, or a form from the resume schema."""
    if call.requires_approval:
        return "approval"
    if call.tool_id == ask_user_tool.id:
        return "question"
    return "input"


async def _items(app: App, run: dict[str, Any]) -> list[dict[str, Any]]:
    try:
        pending = await asyncio.wait_for(app.queries(run["runId"]).pending(), _QUERY_TIMEOUT)
    except (RPCError, TimeoutError):  # answered and gone, or no worker: the next page load shows it again
        return []
    try:
        agent = app.agent(run["agentId"] or "")
    except ConfigurationError:
        agent = None
    items = []
    for call in pending:
        view = await pending_view(agent, call)
        items.append(
            {
                "runId": run["runId"],
                "agentId": run["agentId"],
                "agentName": agent.name if agent is not None else None,
                "threadId": run["threadId"],
                "resourceId": run["resourceId"],
                "startedAt": run["startedAt"],
                "kind": item_kind(call),
                **view,
                **await _what_was_asked(app, run["runId"], call.tool_call_id, view["suspendedAt"]),  # what led to it
            }
        )
    return items


async def inbox_page(app: App, *, agent: str | None, per_page: int, cursor: str | None) -> dict[str, Any]:
    """One page of waiting runs (``total`` of them in all) as inbox items, the newest suspension first."""
    page = await list_runs(app, status="suspended", agent=agent, per_page=per_page, cursor=cursor, top_only=True)
    found = await asyncio.gather(*(_items(app, run) for run in page["runs"]))
    items = [item for items in found for item in items]
    items.sort(key=lambda item: item["suspendedAt"] or "", reverse=True)
    return {"items": items, "total": page["total"], "nextCursor": page["nextCursor"]}
