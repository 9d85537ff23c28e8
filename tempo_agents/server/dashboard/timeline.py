"""A run's timeline from its workflow history: model steps and tool calls as bars, waits for people as gaps.

Every activity is a bar from the moment a worker started it to the moment it ended (or ``null``: still going);
bars that overlap get their own lanes, so parallel calls stand side by side. A wait for a person is the time
from the last bar's end to the ``resume`` update (or signal) that answered it, or the cancellation that ended it;
a wait still going on (the run is suspended now) is a wait with ``end: null`` and ``live: true``.

A call that runs as a child workflow (``agent-<key>``, ``workflow-<key>``) is one bar of kind ``child``: from its
tool-call activity's start to the end of its last relay, with the child's run id; its activities (the decision and
one relay per segment of the child) still decide where the waits for people are.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from temporalio.api.history.v1 import HistoryEvent

from tempo_agents.client.app import App
from tempo_agents.encryption import TamperedError, UnknownKeyError
from tempo_agents.server.pending_view import iso
from tempo_agents.server.resuming import describe_run
from tempo_agents.workflows import search_attributes
from tempo_agents.workflows.activity_names import CHILD_RELAY, FINISH_RUN, JOURNAL, MODEL_STEP, TOOL_CALL

__all__ = ["run_timeline"]

_KINDS = {MODEL_STEP: "model", TOOL_CALL: "tool", FINISH_RUN: "finish", JOURNAL: "journal", CHILD_RELAY: "relay"}


def _time(event: HistoryEvent) -> datetime:
    return event.event_time.ToDatetime(tzinfo=UTC)


def _input(event: HistoryEvent) -> dict[str, Any]:
    payloads = event.activity_task_scheduled_event_attributes.input.payloads
    if not payloads:
        return {}
    try:
        value = json.loads(payloads[0].data)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _label(kind: str, data: dict[str, Any]) -> tuple[str, str | None]:
    """What a bar says, and the tool call it stands for."""
    if kind == "model":
        fork = (data.get("options") or {}).get("fork") or {}  # a fork's steps go on from its origin's
        return f"model step {int(data.get('step', 0)) + int(fork.get('step', 0))}", None
    if kind == "tool":
        call = data.get("call") or {}
        name = call.get("toolName") or call.get("tool_name") or "tool"
        return str(name), call.get("toolCallId") or call.get("tool_call_id")
    if kind == "relay":
        label, tool_call_id = _label("tool", data.get("call") or {})
        return label, tool_call_id
    return kind, None


@dataclass
class _Bar:
    kind: str
    label: str
    tool_call_id: str | None
    start: datetime
    end: datetime | None = None
    outcome: str = "running"
    lane: int = 0
    child_run_id: str | None = None

    def to_wire(self) -> dict[str, Any]:
        wire = {
            "kind": self.kind,
            "label": self.label,
            "toolCallId": self.tool_call_id,
            "start": iso(self.start),
            "end": iso(self.end),
            "outcome": self.outcome,
            "lane": self.lane,
        }
        if self.child_run_id is not None:
            wire["childRunId"] = self.child_run_id
        return wire


def _lanes(bars: list[_Bar], now: datetime) -> int:
    """Give each bar the first lane free at its start; the number of lanes used."""
    ends: list[datetime] = []
    for bar in sorted(bars, key=lambda b: b.start):
        end = bar.end or now
        for lane, free_at in enumerate(ends):
            if free_at <= bar.start:
                bar.lane, ends[lane] = lane, end
                break
        else:
            bar.lane = len(ends)
            ends.append(end)
    return max(len(ends), 1)


_ENDINGS = {
    "activity_task_completed_event_attributes": "completed",
    "activity_task_failed_event_attributes": "failed",
    "activity_task_timed_out_event_attributes": "timed-out",
    "activity_task_canceled_event_attributes": "cancelled",
}


def _live_wait(bars: list[_Bar], answers: list[datetime], now: datetime) -> dict[str, Any] | None:
    """The wait going on now: from the last bar's end (after the last answer) to now, when nothing runs."""
    if not bars or any(bar.end is None for bar in bars):
        return None
    since = max(bar.end for bar in bars if bar.end is not None)
    if answers and max(answers) >= since:
        return None
    return {"start": iso(since), "end": None, "seconds": (now - since).total_seconds(), "live": True}


def _waits(bars: list[_Bar], answers: list[datetime]) -> list[dict[str, Any]]:
    """The gaps that ended with an answer: from the last bar's end before it, when nothing ran meanwhile."""
    waits = []
    for answered in answers:
        if any(bar.start <= answered and (bar.end is None or bar.end > answered) for bar in bars):
            continue  # answered while calls still ran: no one waited
        ended = [bar.end for bar in bars if bar.end is not None and bar.end <= answered]
        if ended:
            since = max(ended)
            waits.append({"start": iso(since), "end": iso(answered), "seconds": (answered - since).total_seconds()})
    return waits


def _child_bars(bars: list[_Bar], children: dict[str, str]) -> list[_Bar]:
    """The bars shown: a child call's activities (and its relays) folded into one bar of kind ``child``."""
    shown: list[_Bar] = []
    folded: dict[str, _Bar] = {}
    for bar in bars:
        call = bar.tool_call_id
        if call is None or call not in children or bar.kind not in ("tool", "relay"):
            if bar.kind != "relay":
                shown.append(bar)
            continue
        child = folded.get(call)
        if child is None:
            child = folded[call] = _Bar("child", bar.label, call, bar.start, child_run_id=children[call])
            shown.append(child)
        child.end, child.outcome = bar.end, bar.outcome  # the latest activity of the call says how it stands
    return shown


async def _open_inputs(app: App, events: Sequence[HistoryEvent]) -> None:
    """The activities' inputs decoded in place when the App encrypts payloads; one it cannot open (its key gone)
    stays sealed, and its bar keeps the generic label."""
    codec = app.client.data_converter.payload_codec
    if codec is None:
        return
    for event in events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            with contextlib.suppress(UnknownKeyError, TamperedError):
                await codec.decode_wrapper(event.activity_task_scheduled_event_attributes.input)


async def run_timeline(app: App, run_id: str) -> dict[str, Any]:
    """The run's bars and waits, with the times the axis spans."""
    description = await describe_run(app, run_id)
    history = await app.client.get_workflow_handle(run_id).fetch_history()
    await _open_inputs(app, history.events)
    now = datetime.now(UTC)
    by_scheduled: dict[int, _Bar] = {}
    bars: list[_Bar] = []
    answers: list[datetime] = []
    children: dict[str, str] = {}  # tool call id -> child run id
    for event in history.events:
        which = event.WhichOneof("attributes")
        if which == "activity_task_scheduled_event_attributes":
            kind = _KINDS.get(event.activity_task_scheduled_event_attributes.activity_type.name, "activity")
            label, tool_call_id = _label(kind, _input(event))
            bar = _Bar(kind, label, tool_call_id, _time(event))
            by_scheduled[event.event_id] = bar
            bars.append(bar)
        elif which == "activity_task_started_event_attributes":
            started = by_scheduled.get(event.activity_task_started_event_attributes.scheduled_event_id)
            if started is not None:
                started.start = _time(event)
        elif which in _ENDINGS:
            ended = by_scheduled.get(getattr(event, which).scheduled_event_id)
            if ended is not None:
                ended.end, ended.outcome = _time(event), _ENDINGS[which]
        elif which == "workflow_execution_update_accepted_event_attributes" or (
            which == "workflow_execution_signaled_event_attributes"
            and event.workflow_execution_signaled_event_attributes.signal_name == "resume"
        ):
            answers.append(_time(event))
        elif which == "workflow_execution_cancel_requested_event_attributes":
            answers.append(_time(event))  # a cancellation ends a wait too
        elif which == "start_child_workflow_execution_initiated_event_attributes":
            child_id = event.start_child_workflow_execution_initiated_event_attributes.workflow_id
            if child_id.startswith(f"{run_id}-"):
                children[child_id[len(run_id) + 1 :]] = child_id
    shown = _child_bars(bars, children)
    lanes = _lanes(shown, now)
    waits = _waits(bars, answers)
    suspended = description.typed_search_attributes.get(search_attributes.STATUS) == "suspended"
    live = _live_wait(bars, answers, now) if description.close_time is None and suspended else None
    if live is not None:
        waits.append(live)
    return {
        "runId": run_id,
        "startedAt": iso(description.start_time),
        "endedAt": iso(description.close_time),
        "now": iso(now),
        "lanes": lanes,
        "bars": [bar.to_wire() for bar in shown if bar.kind != "journal"],
        "waits": waits,
    }
