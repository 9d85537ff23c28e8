"""The Slack requests taken already (the replay guard of ``POST /slack/interactions``), kept in the store as long
as a copy of one could still pass the signature's timestamp window.

Each taken request is counted in the store under a key that starts with its timestamp, zero-padded so that keys sort
by time; the count is raised in one transaction, so of copies of a request that arrive at once exactly one is the
first. Each request taken deletes those whose timestamp is older than the window and a margin
(:data:`SEEN_KEPT_SECONDS`): a copy of one of them is refused by the window anyway, so the table holds only a few
minutes of clicks.
"""

from __future__ import annotations

from tempo_agents.notifications import SLACK_TOLERANCE_SECONDS
from tempo_agents.store.base import Store

__all__ = ["SEEN_KEPT_SECONDS", "SEEN_SIGNATURES_RUN", "first_time", "seen_key"]

SEEN_SIGNATURES_RUN = "slack-interactions"
"""The store's key space (a saved outcome per request) of the Slack requests taken already."""

SEEN_KEPT_SECONDS = SLACK_TOLERANCE_SECONDS + 60
"""How long a taken request is kept after its timestamp: the window, and a minute for clocks that differ."""


def seen_key(timestamp: int, signature: str) -> str:
    """The key under which the request signed ``signature`` at ``timestamp`` is counted."""
    return f"{timestamp:012d} {signature}"


async def first_time(store: Store, timestamp: int, signature: str, *, now: float) -> bool:
    """Whether this request is taken for the first time; if so, the requests older than the window are forgotten."""
    key = seen_key(timestamp, signature)
    _, count = await store.saved_or_counted(SEEN_SIGNATURES_RUN, f"{key}:never-saved", key)
    if count != 1:
        return False
    await store.forget_outcomes_before(SEEN_SIGNATURES_RUN, f"{int(now) - SEEN_KEPT_SECONDS:012d}")
    return True
