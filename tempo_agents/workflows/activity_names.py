"""Stable names: the workflow refers to activities by these, never by import; clients find runs by the
workflow's own name (visibility queries, descriptions, child starts by name)."""

__all__ = [
    "AGENT_RUN_WORKFLOW",
    "CHILD_RELAY",
    "FINISH_RUN",
    "JOURNAL",
    "MODEL_STEP",
    "THREAD_ROLLBACK",
    "THREAD_RUNS_WAITING",
    "THREAD_WORKFLOW",
    "TOOL_CALL",
]

AGENT_RUN_WORKFLOW = "AgentRunWorkflow"

MODEL_STEP = "tempo_agents.model_step"
TOOL_CALL = "tempo_agents.tool_call"
FINISH_RUN = "tempo_agents.finish_run"
JOURNAL = "tempo_agents.journal"
CHILD_RELAY = "tempo_agents.child_relay"

THREAD_WORKFLOW = "tempo_agents.thread"
THREAD_RUNS_WAITING = "tempo_agents.thread_runs_waiting"
THREAD_ROLLBACK = "tempo_agents.thread_rollback"
