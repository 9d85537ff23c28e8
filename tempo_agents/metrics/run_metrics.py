"""tempo-agents' own Prometheus metrics: runs, tool calls, people's answers, tokens.

They live in :data:`RUN_METRICS`, one registry per process, and are counted by the process that does the
work (activities run on workers), so a fleet's totals are the sum over its workers. Every endpoint
(``tempo-agents worker --metrics-port``, the HTTP API's ``/metrics``) serves them.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

from tempo_agents.metrics.scope import current_scope

__all__ = [
    "BUDGET_STOPS",
    "COST",
    "NOTIFICATION_DELIVERIES",
    "RUNS_FINISHED",
    "RUNS_STARTED",
    "RUN_METRICS",
    "TOKENS",
    "TOOL_CALLS",
    "WAIT_SECONDS",
    "record_segment_end",
]

RUN_METRICS = CollectorRegistry(auto_describe=True)

RUNS_STARTED = Counter(
    "tempo_agents_runs_started",
    "Runs whose first model step started on this worker",
    ["agent"],
    registry=RUN_METRICS,
)
RUNS_FINISHED = Counter(
    "tempo_agents_runs_finished",
    "Runs that ended on this worker, by finish reason (stop, error, cancelled, max-steps ...)",
    ["agent", "reason"],
    registry=RUN_METRICS,
)
TOOL_CALLS = Counter(
    "tempo_agents_tool_calls",
    "Tool calls that ended on this worker, by outcome "
    "(result, error, suspended, approval, declined, expired, resume-rejected)",
    ["agent", "tool", "outcome"],
    registry=RUN_METRICS,
)
WAIT_SECONDS = Histogram(
    "tempo_agents_wait_seconds",
    "How long a suspended tool call waited for its answer (suspension to resumed call)",
    ["agent", "tool"],
    buckets=(1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, 7 * 24 * 3600, float("inf")),
    registry=RUN_METRICS,
)
NOTIFICATION_DELIVERIES = Counter(
    "tempo_agents_notification_deliveries",
    "Attempts to deliver a run's notification events, by channel, event type and outcome (delivered, failed-attempt)",
    ["channel", "type", "outcome"],
    registry=RUN_METRICS,
)
SUSPENDED_AT_FIELD = "suspendedAt"
"""The field of a suspended call's saved outcome that holds when it suspended (Unix seconds): the tool-call
activity writes it, and the resumed call's wait (:data:`WAIT_SECONDS`) is measured from it."""
TOKENS = Counter(
    "tempo_agents_tokens",
    "Tokens reported by models, by model and direction (input, output)",
    ["model", "direction"],
    registry=RUN_METRICS,
)


COST = Counter(
    "tempo_agents_cost_usd",
    "What model steps cost in US dollars (the price table's prices), by agent and model",
    ["agent", "model"],
    registry=RUN_METRICS,
)
BUDGET_STOPS = Counter(
    "tempo_agents_budget_stops",
    "Model steps not sent to the model because a budget limit was reached, by scope, period and policy",
    ["agent", "scope", "period", "policy"],
    registry=RUN_METRICS,
)


def record_segment_end(reason: str) -> None:
    """Count a run that ended (a segment that ended for any reason but ``suspended``).

    Called where a segment's end is written; two calls of one batch that end at the same instant can
    both write it (the journal keeps it once), and then the run is counted twice.
    """
    if reason == "suspended":
        return
    scope = current_scope()
    RUNS_FINISHED.labels(agent=scope.agent_id if scope is not None else "", reason=reason).inc()
