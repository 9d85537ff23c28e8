"""tempo-agents' own Prometheus metrics and the run they are counted for.

Counted by the process that does the work (activities on workers, deliveries, the HTTP API); served by the
endpoints of ``tempo_agents.telemetry``. This folder imports nothing of the package, so counting a metric never
loads the client or the telemetry plugin.
"""

from tempo_agents.metrics.run_metrics import (
    BUDGET_STOPS,
    COST,
    NOTIFICATION_DELIVERIES,
    RUN_METRICS,
    RUNS_FINISHED,
    RUNS_STARTED,
    SUSPENDED_AT_FIELD,
    TOKENS,
    TOOL_CALLS,
    WAIT_SECONDS,
    record_segment_end,
)
from tempo_agents.metrics.scope import RunScope, current_scope, run_scope

__all__ = [
    "BUDGET_STOPS",
    "COST",
    "NOTIFICATION_DELIVERIES",
    "RUNS_FINISHED",
    "RUNS_STARTED",
    "RUN_METRICS",
    "SUSPENDED_AT_FIELD",
    "TOKENS",
    "TOOL_CALLS",
    "WAIT_SECONDS",
    "RunScope",
    "current_scope",
    "record_segment_end",
    "run_scope",
]
