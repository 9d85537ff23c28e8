"""Search attributes that let dashboards find runs through visibility, without scanning."""

from __future__ import annotations

from typing import Literal, TypeAlias

from temporalio.common import SearchAttributeKey

__all__ = ["AGENT_ID", "ALL", "FORK_OF", "RESOURCE_ID", "STATUS", "THREAD_ID", "RunStatus"]

RunStatus: TypeAlias = Literal["running", "suspended", "completed", "failed"]

STATUS = SearchAttributeKey.for_keyword("TempoAgentStatus")
"""``running``, ``suspended`` (waiting for a person), ``completed`` or ``failed``."""
AGENT_ID = SearchAttributeKey.for_keyword("TempoAgentId")
THREAD_ID = SearchAttributeKey.for_keyword("TempoAgentThread")
RESOURCE_ID = SearchAttributeKey.for_keyword("TempoAgentResource")

FORK_OF = SearchAttributeKey.for_keyword("TempoAgentForkOf")
"""The run a fork was forked from (set when the fork starts)."""

ALL = (STATUS, AGENT_ID, THREAD_ID, RESOURCE_ID, FORK_OF)
"""Every attribute a namespace needs (all of type Keyword)."""
