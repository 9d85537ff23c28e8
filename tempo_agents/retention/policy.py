"""How long a closed run's records are kept: for every run, per agent, per resource (tenant)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from tempo_agents.errors import ConfigurationError

__all__ = ["Retention"]


@dataclass(frozen=True)
class Retention:
    """How long a closed run's journal, transcript, answers, notification records and thread messages are kept.

    ``keep``: for every run (``None``: for ever, unless an agent or a resource says otherwise); ``agents``: per agent
    id; ``resources``: per resource (a tenant, a customer), which wins over the agent's. A run's time starts when it
    closes (completed, failed, cancelled, terminated). ``every``: how often a worker sweeps; ``batch``: how many runs
    one sweep deletes at a time, with ``pause`` between batches so live runs keep the store.
    """

    keep: timedelta | None = None
    agents: Mapping[str, timedelta] = field(default_factory=dict)
    resources: Mapping[str, timedelta] = field(default_factory=dict)
    every: timedelta = timedelta(minutes=10)
    batch: int = 100
    pause: timedelta = timedelta(milliseconds=50)

    def __post_init__(self) -> None:
        named = {"keep": self.keep} if self.keep is not None else {}
        named |= {f"agents[{key!r}]": value for key, value in self.agents.items()}
        named |= {f"resources[{key!r}]": value for key, value in self.resources.items()}
        for name, value in named.items():
            if value <= timedelta(0):
                raise ConfigurationError(f"retention {name} must be longer than zero, not {value}")
        if self.every <= timedelta(0) or self.batch < 1 or self.pause < timedelta(0):
            raise ConfigurationError("retention sweeps need every > 0, batch >= 1 and pause >= 0")

    def keep_for(self, agent_id: str | None, resource_id: str | None) -> timedelta | None:
        """How long a run of ``agent_id`` for ``resource_id`` is kept once closed (``None``: for ever)."""
        if resource_id is not None and resource_id in self.resources:
            return self.resources[resource_id]
        if agent_id is not None and agent_id in self.agents:
            return self.agents[agent_id]
        return self.keep

    def expires_at(self, agent_id: str | None, resource_id: str | None, closed_at: float) -> float | None:
        """When the records of a run of ``agent_id`` for ``resource_id`` that closed at ``closed_at`` expire (seconds
        since the epoch; ``None``: never)."""
        keep = self.keep_for(agent_id, resource_id)
        return None if keep is None else closed_at + keep.total_seconds()

    @property
    def applies(self) -> bool:
        """Whether any run can expire (a sweeper is needed)."""
        return self.keep is not None or bool(self.agents) or bool(self.resources)
