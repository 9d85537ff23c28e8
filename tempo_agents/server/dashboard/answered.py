"""The answered view: who answered which waiting call, what they answered and when, newest first.

Read from the ``answers`` query of a page of the latest runs (a closed run's is answered by a worker replaying
it); a run that answers no query in time is left out of the page rather than failing it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio.client import WorkflowQueryFailedError
from temporalio.service import RPCError

from tempo_agents.agent.app import App
from tempo_agents.server.run_views import list_runs

__all__ = ["answered_page"]

_QUERY_TIMEOUT = 5.0


async def _answers(app: App, run: dict[str, Any]) -> list[dict[str, Any]]:
    try:
        answers = await asyncio.wait_for(app.queries(run["runId"]).answers(), _QUERY_TIMEOUT)
    except (RPCError, WorkflowQueryFailedError, TimeoutError):
        return []
    return [
        {"runId": run["runId"], "agentId": run["agentId"], "threadId": run["threadId"], **answer.to_wire()}
        for answer in answers
    ]


async def answered_page(app: App, *, agent: str | None, per_page: int, cursor: str | None) -> dict[str, Any]:
    """The answers given in one page of the latest runs (``runs`` of them, ``nextCursor`` for the next)."""
    page = await list_runs(app, agent=agent, per_page=per_page, cursor=cursor, top_only=True)
    found = await asyncio.gather(*(_answers(app, run) for run in page["runs"]))
    items = [item for items in found for item in items]
    items.sort(key=lambda item: item.get("answeredAt") or "", reverse=True)
    return {"items": items, "runs": len(page["runs"]), "nextCursor": page["nextCursor"]}
