"""Walking an App's agents and their sub-agents (several levels deep)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tempo_agents.agent.agent import Agent


def with_sub_agents(agents: Iterable[Agent]) -> Iterator[Agent]:
    """Every agent, then its sub-agents, depth first, each once."""
    seen: set[int] = set()
    stack = list(agents)[::-1]
    while stack:
        agent = stack.pop()
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        yield agent
        stack.extend(list(agent.agents.values())[::-1])
