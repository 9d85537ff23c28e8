"""Counting the starts of a local activity in the store.

A local activity whose worker was lost starts again at attempt 1 in the next workflow task, so Temporal's attempt
number cannot tell how many workers a local model step or tool call has lost. Its starts are counted in the store
instead (a saved outcome of its own, written before the work begins), where they survive the worker: the count is
the attempt number the work sees, and a start past ``maximum_attempts`` stops it (ARCHITECTURE.md, "Local
activities").
"""

from __future__ import annotations

from typing import Any

from tempo_agents.store.base import Store


async def saved_or_counted_start(store: Store, run_id: str, key: str) -> tuple[dict[str, Any] | None, int]:
    """The outcome of the local activity saved under ``key`` if it ended before (and 0), else ``None`` and this
    start's number (1 for the first): one store call, the counter kept beside the outcome it counts for."""
    return await store.saved_or_counted(run_id, key, f"{key}:starts")
