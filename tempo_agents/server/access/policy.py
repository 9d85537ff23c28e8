"""The policy hook: what roles cannot say, decided per request after the role check.

``create_server(app, authorize=policy)`` with a function ``policy(principal, action, target)`` returning
:attr:`Decision.ALLOW`, :attr:`Decision.DENY` (a 403) or a :class:`Filter` (listings keep only the tenants it
names; a single run, schedule or thread outside them is answered as one that does not exist).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum

from tempo_agents.identity import Principal

__all__ = ["AccessTarget", "Decision", "Filter", "Policy", "Verdict"]


class Decision(StrEnum):
    """A policy's answer for a request it does not filter."""

    ALLOW = "allow"
    DENY = "deny"


@dataclass(frozen=True)
class Filter:
    """Allow, but only within ``tenants``."""

    tenants: frozenset[str]


@dataclass(frozen=True)
class AccessTarget:
    """What a request acts on, as a policy sees it."""

    kind: str
    """The route's target kind (``run``, ``schedule``, ``start``, ``list`` …)."""
    id: str | None = None
    """The run, schedule or thread it names, when it names one."""
    tenant: str | None = None
    """The tenant it acts in (a run's resource, the resource a start names), when it has one."""
    agent_id: str | None = None
    """The agent the route names, when it names one."""


Verdict = Decision | Filter
Policy = Callable[[Principal, str, AccessTarget], Verdict | Awaitable[Verdict]]
"""``authorize(principal, action, target)``: allow, deny or filter one request."""
