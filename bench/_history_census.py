"""What a workflow's history says it cost Temporal: events and bytes, tasks by kind, and two estimates made from the
events by type (``bench/capacity.py``).

- **actions**, Temporal Cloud's billing unit as its documentation lists them: the start, each activity attempt,
  the local activities of one workflow task together, timers, signals, accepted updates, child workflow starts,
  search attribute and memo upserts, signals and cancellations sent to other workflows. Queries leave no event
  and are not counted.
- **state transitions**, what a history shard writes one at a time: the start, each workflow task started and
  completed, each activity attempt started and closed, each signal and accepted update, each timer fired, each
  child workflow started and closed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent

__all__ = ["HistoryCensus", "census"]

_E = EventType
_ONE_ACTION_EACH = (
    _E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
    _E.EVENT_TYPE_TIMER_STARTED,
    _E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
    _E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
    _E.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED,
    _E.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
    _E.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED,
    _E.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED,
    _E.EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED,
)
_ONE_TRANSITION_EACH = (
    _E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
    _E.EVENT_TYPE_WORKFLOW_TASK_STARTED,
    _E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
    _E.EVENT_TYPE_WORKFLOW_TASK_FAILED,
    _E.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
    _E.EVENT_TYPE_ACTIVITY_TASK_STARTED,
    _E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
    _E.EVENT_TYPE_ACTIVITY_TASK_FAILED,
    _E.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
    _E.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
    _E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
    _E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
    _E.EVENT_TYPE_TIMER_FIRED,
    _E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED,
    _E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED,
    _E.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED,
)
_LOCAL_ACTIVITY_MARKERS = ("core_local_activity", "LocalActivity")


@dataclass
class HistoryCensus:
    """Totals over one or more histories."""

    events: int = 0
    bytes: int = 0
    workflow_tasks: int = 0
    activity_tasks: int = 0
    activity_retries: int = 0
    local_activity_tasks: int = 0
    """Workflow tasks that recorded at least one local activity: one action each."""
    timers: int = 0
    signals: int = 0
    updates: int = 0
    upserts: int = 0
    """Search attribute and memo upserts."""
    actions: int = 0
    state_transitions: int = 0

    def add(self, events: Iterable[HistoryEvent]) -> None:
        """Count one history."""
        kinds: Counter[int] = Counter()
        local_groups: set[int] = set()
        retries = 0
        for event in events:
            kinds[event.event_type] += 1
            self.events += 1
            self.bytes += event.ByteSize()
            if event.event_type == _E.EVENT_TYPE_ACTIVITY_TASK_STARTED:
                retries += max(0, event.activity_task_started_event_attributes.attempt - 1)
            elif event.event_type == _E.EVENT_TYPE_MARKER_RECORDED:
                marker = event.marker_recorded_event_attributes
                if marker.marker_name in _LOCAL_ACTIVITY_MARKERS:
                    local_groups.add(marker.workflow_task_completed_event_id)
        self.activity_retries += retries
        self.workflow_tasks += kinds[_E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED]
        self.activity_tasks += kinds[_E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]
        self.local_activity_tasks += len(local_groups)
        self.timers += kinds[_E.EVENT_TYPE_TIMER_STARTED]
        self.signals += kinds[_E.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED]
        self.updates += kinds[_E.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED]
        self.upserts += kinds[_E.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES]
        self.upserts += kinds[_E.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED]
        self.actions += sum(kinds[kind] for kind in _ONE_ACTION_EACH)
        self.actions += kinds[_E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED] + retries + len(local_groups)
        self.state_transitions += sum(kinds[kind] for kind in _ONE_TRANSITION_EACH)


def census(histories: Iterable[Iterable[HistoryEvent]]) -> HistoryCensus:
    """The census of several histories together."""
    total = HistoryCensus()
    for events in histories:
        total.add(events)
    return total
