"""The answered view: who answered which waiting call, what they answered and when, newest first.

Read from the answers the store keeps (``Store.answered_calls``), a page of answers at a time: however many runs
still wait, the page lists answers. An answer is kept by whoever ended its call's wait (the server that had it
accepted, else the resumed call's activity: ``activities/kept_answer.py``); answers given before the store kept
them are not listed.
"""

from __future__ import annotations

from typing import Any

from tempo_agents.client.app import App
from tempo_agents.server.errors import ApiError
from tempo_agents.server.run_views import page_cursor, page_token
from tempo_agents.store.base import Resources

__all__ = ["answered_page"]

_SKIP = "answers:"


def _skipped(cursor: str | None) -> int:
    """How many answers earlier pages showed, from the ``nextCursor`` they handed out."""
    if not cursor:
        return 0
    token = page_token(cursor)
    text = token.decode("ascii", "replace") if token is not None else ""
    count = text[len(_SKIP) :]
    if not text.startswith(_SKIP) or not count.isascii() or not count.isdigit():
        raise ApiError(400, "Invalid query parameters", issues=[{"field": "cursor", "message": "bad cursor"}])
    return int(count)


async def answered_page(
    app: App, *, agent: str | None, per_page: int, cursor: str | None, resource: Resources = None
) -> dict[str, Any]:
    """One page of answers, newest first (``total`` of them in all, ``nextCursor`` for the next page), of runs of
    ``resource`` (one, any of a set, or all)."""
    skip = _skipped(cursor)
    page = await app.store.answered_calls(
        app.task_queue, agent_id=agent, resource_id=resource, limit=per_page, skip=skip
    )
    items = [
        {"runId": kept.run_id, "agentId": kept.agent_id, "threadId": kept.thread_id, **kept.answer}
        for kept in page.answers
    ]
    shown = skip + len(items)
    next_cursor = page_cursor(f"{_SKIP}{shown}".encode()) if shown < page.total else None
    return {"items": items, "total": page.total, "nextCursor": next_cursor}
