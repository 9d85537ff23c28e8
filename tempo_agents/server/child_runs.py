"""The child runs of a run (its ``agent-<key>`` and ``workflow-<key>`` calls), read from its journal's links."""

from __future__ import annotations

from typing import Any

from tempo_agents.store.base import Store
from tempo_agents.workflows.child_payloads import CHILD_RUN_CHUNK

__all__ = ["PAGE", "child_runs"]

PAGE = 1000


async def child_runs(store: Store, run_id: str) -> list[dict[str, Any]]:
    """``[{toolCallId, toolName, childRunId, kind, workflow}]`` in the order the calls started, so a page can
    nest each child's stream under its call."""
    children: list[dict[str, Any]] = []
    offset = 0
    while True:
        entries = await store.read_chunks(run_id, offset, limit=PAGE)
        for entry in entries:
            if entry.chunk.get("type") == CHILD_RUN_CHUNK:
                children.append(dict(entry.chunk.get("data") or {}))
        if len(entries) < PAGE:
            return children
        offset = entries[-1].offset + 1
