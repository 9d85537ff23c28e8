"""Who may answer a waiting call: principals and groups given by the tool or the agent, or a policy registered on
the App by name (user code, so it runs in the tool-call activity, never in the workflow)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from tempo_agents.approvals.policy import ApprovalRequest

__all__ = ["ApproverPolicy", "Approvers"]

ApproverPolicy = Callable[[ApprovalRequest], Sequence[str] | Awaitable[Sequence[str]]]
"""Returns who may answer a call (principals, ``group:<name>``); empty: anyone."""

Approvers = Sequence[str] | str | None
"""``approvers=`` of a tool or an agent: principals and ``group:<name>``s, or the name of an
:data:`ApproverPolicy` registered on the App (``App(approver_policies={"name": policy})``)."""
