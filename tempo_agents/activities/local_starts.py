"""Counting the starts of a local activity in the store.

A local activity whose worker was lost starts again at attempt 1 in the next workflow task, so Temporal's attempt
number cannot tell how many workers a local model step or tool call has lost. Its starts are counted in the store
instead (a saved outcome of its own, written before the work begins), where they survive the worker: the count is
the attempt number the work sees, and a start past ``maximum_attempts`` stops it (ARCHITECTURE.md, "Local
activities").
"""

from __future__ import annotations

from tempo_agents.store.base import SavedOutcome, Store


async def count_start(store: Store, run_id: str, key: str) -> int:
    """Count this start of the local activity whose outcome is saved under ``key``; return the count (1 first)."""
    starts_key = f"{key}:starts"
    counted = await store.saved_outcome(run_id, starts_key)
    starts = 1 + (int(counted["starts"]) if counted is not None else 0)
    await store.record(run_id, [], [], SavedOutcome(starts_key, {"starts": starts}))
    return starts
