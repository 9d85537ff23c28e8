"""Visibility queries that find an App's runs (Temporal's list filter), spelled in one place."""

from __future__ import annotations

from collections.abc import Sequence

from tempo_agents.errors import ConfigurationError
from tempo_agents.store.base import Resources
from tempo_agents.workflows import search_attributes
from tempo_agents.workflows.activity_names import AGENT_RUN_WORKFLOW
from tempo_agents.workflows.thread_payloads import THREAD_WORKFLOW_ID_PREFIX

__all__ = ["TOP_RUNS", "UNFILTERABLE", "filterable", "quote", "runs_query", "waiting_clauses"]


def quote(value: str) -> str:
    """A string literal of Temporal's list filter; a value no filter can name (:func:`filterable`) is refused with a
    :class:`~tempo_agents.errors.ConfigurationError`, rather than sent to fail on the server."""
    if not filterable(value):
        raise ConfigurationError(f"{value!r} {UNFILTERABLE}")
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


UNFILTERABLE = "cannot contain a NUL character: Temporal's list filters cannot name it"
"""Why a value :func:`filterable` refuses is refused (after what it names)."""


def filterable(value: str) -> bool:
    """Whether a list filter can name ``value``: a NUL character ends a filter's string early on Temporal's SQL
    visibility stores (the dev server's among them), so a run started under such an id, or with it as a search
    attribute's value, could never be found again, to list it or to erase it."""
    return "\x00" not in value


TOP_RUNS = f"(ParentWorkflowId IS NULL OR ParentWorkflowId STARTS_WITH {quote(THREAD_WORKFLOW_ID_PREFIX)})"
"""Runs that are not a sub-agent's: a sub-agent's waiting call is shown, and answered, on its top run. A thread's run
is a child of its thread's workflow, and a top run."""


def waiting_clauses() -> list[str]:
    """Top runs waiting for a person now: running, with a suspended call."""
    return ["ExecutionStatus = 'Running'", f"{search_attributes.STATUS.name} = 'suspended'", TOP_RUNS]


def runs_query(
    task_queue: str,
    *,
    agent_id: str | None = None,
    thread_id: str | None = None,
    resource_id: Resources = None,
    clauses: Sequence[str] = (),
) -> str:
    """Agent runs on ``task_queue`` (an App's own: Apps that share a namespace do not see each other's
    runs), narrowed by agent, thread, resource and any further ``clauses``."""
    parts = [f"WorkflowType = {quote(AGENT_RUN_WORKFLOW)}", f"TaskQueue = {quote(task_queue)}", *clauses]
    for key, value in (
        (search_attributes.AGENT_ID, agent_id),
        (search_attributes.THREAD_ID, thread_id),
        (search_attributes.RESOURCE_ID, resource_id),
    ):
        if isinstance(value, str):
            parts.append(f"{key.name} = {quote(value)}")
        elif value is not None:  # any of a set of resources; none of an empty one
            kept = ", ".join(quote(one) for one in sorted(value))
            parts.append(f"{key.name} IN ({kept})" if kept else "WorkflowId = ''")
    return " AND ".join(parts)
