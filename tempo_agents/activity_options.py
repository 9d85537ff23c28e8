"""Timeouts and retries of the run's activities, as data so they travel in workflow inputs.

An agent sets its model steps' options (``Agent(model_step_activity=...)``), a tool its calls' options
(``create_tool(..., activity=...)``); the defaults below serve everything else. Heartbeats run every
second, so a worker that dies is noticed after ``heartbeat_timeout`` and its activity is retried on
another worker within seconds.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import RetryPolicy

from tempo_agents._wire import WireModel

__all__ = [
    "FINISH_DEFAULTS",
    "LOCAL_TASK_TIMEOUT",
    "MODEL_STEP_DEFAULTS",
    "PROVIDER_ATTEMPTS",
    "TOOL_CALL_DEFAULTS",
    "ActivityOptions",
]


class ActivityOptions(WireModel):
    """How long one attempt may take, how soon a lost worker is noticed, and how often to retry.

    For tool calls, an exception raised by the tool is its result (a ``tool-error`` the model sees), so
    ``maximum_attempts`` counts only lost attempts: workers that died or stopped heartbeating. When they
    are used up, the call ends with a tool error that says so and the run goes on.
    """

    start_to_close_timeout: timedelta = timedelta(minutes=10)
    heartbeat_timeout: timedelta = timedelta(seconds=5)
    retry_initial_interval: timedelta = timedelta(milliseconds=500)
    retry_backoff: float = 1.0
    """Each retry waits ``retry_backoff`` times longer than the one before. A lost worker is noticed after
    ``heartbeat_timeout`` already, so the default retries at once; errors that need room to pass
    (a provider's 429 or 5xx) set their own delay."""
    retry_maximum_interval: timedelta = timedelta(seconds=30)
    maximum_attempts: int = 20
    local: bool = False
    """Run as a Temporal *local activity*: in the worker that runs the workflow, inside its workflow task,
    with no round trip through the server (several times faster for short work). For short calls only
    (say, under a few seconds): a local activity sends no heartbeats, so a lost worker is noticed only when
    the workflow task times out (``LOCAL_TASK_TIMEOUT`` for runs of agents that have local activities),
    and ``heartbeat_timeout`` does not apply. Crash safety is the same as for activities: an outcome saved
    in the store is never executed again, and only a kill before it was saved runs the call again
    (at-least-once). A worker lost during a local activity does not use up ``maximum_attempts``."""

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            initial_interval=self.retry_initial_interval,
            backoff_coefficient=self.retry_backoff,
            maximum_interval=self.retry_maximum_interval,
            maximum_attempts=self.maximum_attempts,
        )


LOCAL_TASK_TIMEOUT = timedelta(seconds=4)
"""The workflow task timeout of runs whose agent runs anything as a local activity (Temporal's default is
10 s): a worker lost in the middle of a local activity is noticed after it. The worker keeps a longer local
activity's workflow task alive on its own, so this bounds recovery, not how long a call may take."""

MODEL_STEP_DEFAULTS = ActivityOptions()
"""Model steps: lost workers are retried at once; provider errors that may pass (429, 5xx, dropped streams)
after the provider's ``retry-after``, else after 1, 2, 4 … 30 seconds, and at most until the step's
``PROVIDER_ATTEMPTS``-th attempt."""

PROVIDER_ATTEMPTS = 10
"""A provider error on this attempt of a model step (or later) is final: the run fails with it."""

TOOL_CALL_DEFAULTS = ActivityOptions()
"""Tool calls: only lost attempts are retried (a tool's exception is its result)."""

FINISH_DEFAULTS = ActivityOptions(start_to_close_timeout=timedelta(minutes=1), maximum_attempts=200)
"""The finish activity: store writes only. While the store is unreachable an attempt waits for most of its minute
(``store/patience.py``), so 200 attempts wait out an outage of about three hours, as long as tool calls and model
steps do (10 minutes times 20); an error that is not an outage fails in well under two minutes (200 times 0.5 s)."""
