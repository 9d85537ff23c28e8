"""What an erasure covers (a resource, a thread or a run) and what it did."""

from __future__ import annotations

from dataclasses import dataclass, field

from tempo_agents.errors import ConfigurationError
from tempo_agents.workflows.visibility_queries import UNFILTERABLE, filterable

__all__ = ["ErasureReport", "ErasureScope"]


@dataclass(frozen=True)
class ErasureScope:
    """One of: every run and thread of a ``resource`` (a tenant or a customer); one thread (``thread`` with its
    ``resource``); one ``run`` (with the sub-agent runs it started and its forks)."""

    resource: str | None = None
    thread: str | None = None
    run: str | None = None

    def __post_init__(self) -> None:
        if self.run is not None and (self.resource is not None or self.thread is not None):
            raise ConfigurationError("erase a run, a thread or a resource: a run is named alone")
        if self.thread is not None and self.resource is None:
            raise ConfigurationError("a thread is erased with its resource: pass both")
        if self.run is None and self.resource is None:
            raise ConfigurationError("name what to erase: a resource, a thread (with its resource) or a run")
        for name, value in (("resource", self.resource), ("thread", self.thread), ("run", self.run)):
            if value is not None and not value.strip():
                raise ConfigurationError(f"the {name} to erase must not be empty")
            if value is not None and not filterable(value):
                raise ConfigurationError(f"the {name} to erase {UNFILTERABLE} (and no run starts under such an id)")


@dataclass(frozen=True)
class ErasureReport:
    """What an erasure did, by id only (never any of the erased content).

    ``stopped``: runs that were still running (waiting for a person, queued, working) and were terminated;
    ``deleted_runs``: runs (sub-agent runs and forks included) whose executions were deleted from Temporal;
    ``deleted_threads``: the threads (thread id, resource id) erased, their workflows included;
    ``deleted_schedules``: schedules whose runs belonged to the scope; ``store_rows``: rows deleted from the store."""

    scope: ErasureScope
    stopped: list[str] = field(default_factory=list)
    deleted_runs: list[str] = field(default_factory=list)
    deleted_threads: list[tuple[str, str]] = field(default_factory=list)
    deleted_schedules: list[str] = field(default_factory=list)
    store_rows: int = 0

    def to_wire(self) -> dict[str, object]:
        """The report as the HTTP API and the CLI print it."""
        return {
            "scope": {key: value for key, value in vars(self.scope).items() if value is not None},
            "stopped": self.stopped,
            "deletedRuns": self.deleted_runs,
            "deletedThreads": [
                {"threadId": thread, "resourceId": resource} for thread, resource in self.deleted_threads
            ],
            "deletedSchedules": self.deleted_schedules,
            "storeRows": self.store_rows,
        }
