"""A used answer link is spent: the store keeps that it was used, under its run, by the link's nonce.

A call whose answer its tool refused waits again in the same round, so the round alone cannot tell a used link
from a fresh one; this record can. The answer-link route checks it before it reads the call and writes it after
the run took the answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from tempo_agents.approvals.answer_links.signing import LinkClaims
from tempo_agents.audit import AuditEntry
from tempo_agents.store.base import SavedOutcome, Store

__all__ = ["SPENT_KEY_PREFIX", "link_spent", "record_spent"]

SPENT_KEY_PREFIX = "answer-link-used:"
"""The saved outcome's key, before the link's nonce."""


def _spent_key(claims: LinkClaims) -> str:
    return SPENT_KEY_PREFIX + claims.nonce


async def link_spent(store: Store, claims: LinkClaims) -> bool:
    """Whether the link was used already."""
    return await store.saved_outcome(claims.run_id, _spent_key(claims)) is not None


async def record_spent(store: Store, claims: LinkClaims, choice: str, audit: Sequence[AuditEntry] = ()) -> None:
    """Keep that the link was used (by whom, with which choice, for which call), with its ``audit`` records in the
    same transaction."""
    used = {"principal": claims.principal, "choice": choice, "toolCallId": claims.tool_call_id}
    await store.record(claims.run_id, [], [], SavedOutcome(_spent_key(claims), used), audit=audit)
