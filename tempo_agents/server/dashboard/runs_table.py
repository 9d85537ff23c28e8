"""The runs table: a page of runs from visibility, with each run's steps, tokens and what it waits for.

Open runs are asked (their workflow's queries), at most once a second per run however many dashboards refresh;
a closed run's figures never change, so they are asked once and kept: a completed run's from its result (the
server has it), another closed run's from its queries (which a worker answers by replaying it).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from typing import Any

from temporalio.client import WorkflowFailureError, WorkflowQueryFailedError
from temporalio.service import RPCError

from tempo_agents.client.app import App
from tempo_agents.server.run_views import list_runs
from tempo_agents.store.base import Resources
from tempo_agents.workflows.payloads import PendingCall, RunResult

__all__ = ["RunFigures"]

_QUERY_TIMEOUT = 5.0
_KEPT = 10_000
_OPEN = ("running", "suspended")
_FRESH_SECONDS = 1.0


class RunFigures:
    """Steps, tokens and waiting calls of listed runs; closed runs' figures kept (at most 10,000 runs)."""

    def __init__(self, app: App) -> None:
        self._app = app
        self._closed: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._recent: OrderedDict[str, tuple[float, str, dict[str, Any]]] = OrderedDict()

    async def _ask(self, run: dict[str, Any]) -> dict[str, Any]:
        run_id = run["runId"]
        if run_id in self._closed:
            return self._closed[run_id]
        recent = self._recent.get(run_id)
        if recent is not None and recent[1] == run["status"] and time.monotonic() - recent[0] < _FRESH_SECONDS:
            return recent[2]
        queries = self._app.queries(run_id)
        waiting = run["status"] == "suspended"
        try:
            if run["status"] == "completed":  # its result holds the figures: no worker has to replay it
                finished = self._app.client.get_workflow_handle(run_id, result_type=RunResult)
                result = await asyncio.wait_for(finished.result(), _QUERY_TIMEOUT)
                steps, usage, pending = result.steps, result.usage, list[PendingCall]()
            else:
                steps, usage, pending = await asyncio.wait_for(
                    asyncio.gather(
                        queries.steps(),
                        queries.usage(),
                        queries.pending() if waiting else asyncio.sleep(0, list[PendingCall]()),
                    ),
                    _QUERY_TIMEOUT,
                )
            if run.get("forkOf"):  # a fork's copied steps count, as on its page and in compare
                origin = await self._app.fork_origin(run_id)
                copied = None if origin is None else origin.get("step")
                steps += copied if isinstance(copied, int) and not isinstance(copied, bool) else 0
        except (RPCError, TimeoutError, WorkflowFailureError, WorkflowQueryFailedError):
            # One run that cannot answer (no worker, a workflow that cannot replay) never fails the page.
            return {"steps": None, "totalTokens": None, "waitingFor": []}
        figures = {
            "steps": steps,
            "totalTokens": usage.total_tokens,
            "waitingFor": [call.tool_name for call in pending],
        }
        if run["status"] not in _OPEN:
            self._closed[run_id] = figures
            while len(self._closed) > _KEPT:
                self._closed.popitem(last=False)
        else:
            self._recent[run_id] = (time.monotonic(), run["status"], figures)
            self._recent.move_to_end(run_id)
            while len(self._recent) > _KEPT:
                self._recent.popitem(last=False)
        return figures

    async def page(
        self,
        *,
        status: str | None,
        agent: str | None,
        thread: str | None,
        search: str | None,
        per_page: int,
        cursor: str | None,
        resource: Resources = None,
    ) -> dict[str, Any]:
        """One page of runs, newest first, each with its figures (of ``resource``: one, any of a set, or all)."""
        page = await list_runs(
            self._app,
            status=status,
            agent=agent,
            thread=thread,
            resource=resource,
            search=search,
            per_page=per_page,
            cursor=cursor,
        )
        figures = await asyncio.gather(*(self._ask(run) for run in page["runs"]))
        page["runs"] = [{**run, **found} for run, found in zip(page["runs"], figures, strict=True)]
        return page
