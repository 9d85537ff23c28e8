"""Forks of runs: a new run that starts from another's transcript at a step (its origin), and comparing two runs."""

from tempo_agents.forks.compare import compare_runs
from tempo_agents.forks.origin import (
    TOOL_REUSED_CHUNK,
    check_fork_point,
    copied_steps,
    last_good_step,
    reusable_outcome,
    seed_fork,
)

__all__ = [
    "TOOL_REUSED_CHUNK",
    "check_fork_point",
    "compare_runs",
    "copied_steps",
    "last_good_step",
    "reusable_outcome",
    "seed_fork",
]
