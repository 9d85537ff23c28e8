"""Which run (and which tool call) the code running now works for, as activities see it.

Set around every tempo-agents activity by the telemetry interceptor; read by the JSON log formatter and by
the metrics that the activity code records itself.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["RunScope", "current_scope", "run_scope"]


@dataclass(frozen=True)
class RunScope:
    """The run an activity works for: its id (the workflow id), its agent, and the tool call, if any."""

    run_id: str
    agent_id: str
    tool_call_id: str | None = None
    tool_name: str | None = None


_current: ContextVar[RunScope | None] = ContextVar("tempo_agents_run_scope", default=None)


def current_scope() -> RunScope | None:
    """The scope of the activity running in this context, or ``None`` outside one."""
    return _current.get()


@contextlib.contextmanager
def run_scope(scope: RunScope) -> Iterator[RunScope]:
    """Make ``scope`` current for the block (and the tasks and threads it starts)."""
    token = _current.set(scope)
    try:
        yield scope
    finally:
        _current.reset(token)
