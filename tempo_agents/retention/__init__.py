"""Retention: how long a closed run's records are kept (:class:`Retention`), and the worker's sweeper that deletes
them once they expire (:class:`RetentionSweeper`)."""

from tempo_agents.retention.executions import delete_execution
from tempo_agents.retention.policy import Retention
from tempo_agents.retention.sweeper import VISIBILITY_LAG_SECONDS, RetentionSweeper, SweepResult, sweeping

__all__ = ["VISIBILITY_LAG_SECONDS", "Retention", "RetentionSweeper", "SweepResult", "delete_execution", "sweeping"]
