"""The patch ids of :class:`AgentRunWorkflow` (``workflow.patched``): each guards a change of what the run does, so
that histories recorded before it replay on the path they took. Most are asked only when the change applies, so
histories that never met it carry no marker.

The steering patch lives with steering (``steering.STEERING_PATCH``), the local-activities one with the activity calls
(``activity_calls.LOCAL_ACTIVITIES``).
"""

from __future__ import annotations

__all__ = [
    "APPROVED_ARGUMENTS",
    "BUDGET_WAITS",
    "CALL_ALARMS",
    "CANCELLATION_OUTLIVES_ACTIVITIES",
    "REFUSED_RESUMES_RUN_ANEW",
    "RESUMED_CALLS_KEEP_OPTIONS",
    "RUNS_YIELD_THREADS",
    "SEGMENTS_CLOSED_BY_ACTIVITIES",
]

SEGMENTS_CLOSED_BY_ACTIVITIES = "segments-closed-by-activities"
"""Patch id: runs started before it end every segment with the finish activity and journal a resume's
``start`` with a local activity; their histories replay on that path."""

RESUMED_CALLS_KEEP_OPTIONS = "resumed-calls-keep-options"
"""Patch id: runs started before it resumed a suspended call with the default activity options, whatever its tool
declared. Asked only when the tool declared options."""

APPROVED_ARGUMENTS = "approved-arguments"
"""Patch id: a call approved with arguments an approver changed runs again with those arguments. Asked only for
such an answer (which no run before the patch could be given), so other histories carry no marker."""

REFUSED_RESUMES_RUN_ANEW = "refused-resumes-run-anew"
"""Patch id: runs started before it ran the answer that followed a refused one (``resume-rejected``) with the default
activity options (the refused resume had taken the tool's) and under the refused answer's keys (so a local or
retried activity could find the refused outcome and answer with it). Asked when a tool refuses an answer."""

BUDGET_WAITS = "budget-waits"
"""Patch id: a run whose budget policy is ``wait`` waits for a person when a model step finds a limit reached,
then runs the step again (or ends). Asked only when that happens, so other histories carry no marker."""

RUNS_YIELD_THREADS = "runs-yield-threads"
"""Patch id: a thread's run that waits only for people yields its thread and, once answered, waits for the thread's
go-ahead before it goes on (reading what was said meanwhile). Asked only when such a run begins to wait, so other
histories carry no marker."""

CALL_ALARMS = "call-reminders-and-escalation"
"""Patch id: a waiting call with ``remind_every``/``escalate_after`` wakes the run for its reminders and its
escalation. Asked only when a waiting call has one, so other histories carry no marker."""

CANCELLATION_OUTLIVES_ACTIVITIES = "cancellation-outlives-activities"
"""Patch id: a run cancelled while an activity ran, whose activity completed anyway (it finished before it was told
to stop), ends cancelled once that activity's result is in; runs before it went on with the result (and could
complete). Asked only when that happens, so other histories carry no marker."""
