"""The notification events of a run, computed by the activity that records the change they report.

A waiting call's event by the tool-call activity that recorded its suspension (also when a retry answers from
the saved outcome, so a worker lost after the store's write still sends it); an answer or a passed deadline by
the resumed call's activity; a reminder or an escalation by the journal activity the workflow runs for its notes;
the run's end by the activity that writes its last ``finish``. Each event's id comes from the run, the call, its
round and the event's type (``events.event_id``), so retries hand over the same event, which the delivery
workflow takes once. Arguments and payloads go through the display transforms, as every client sees them
(``tools/displayed_call.py``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from tempo_agents.notifications import (
    AnswerView,
    CallKind,
    CallView,
    EventType,
    LinkedCall,
    NotificationEvent,
    RunEnd,
    event_id,
)
from tempo_agents.tools.displayed_call import displayed_call
from tempo_agents.workflows.payloads import CallAlarm, PendingCall, Resolution, ToolCallInput, ToolCallResult

__all__ = ["ASK_USER_TOOL", "notify_alarms", "notify_call", "notify_run_end"]

if TYPE_CHECKING:
    from tempo_agents.activities.registry import Registry

ASK_USER_TOOL = "ask_user"


def _kind(call: PendingCall) -> CallKind:
    if call.requires_approval:
        return "approval"
    return "question" if call.tool_id == ASK_USER_TOOL else "suspension"


def _channels(registry: Registry, agent_id: str, tool_name: str | None) -> list[str] | None:
    agent = registry.agent(agent_id)
    tool = agent.tools.get(tool_name) if tool_name is not None else None
    if tool is not None and tool.notify is not None:
        return tool.notify
    return agent.notify


async def _position(
    registry: Registry, run_id: str, step: int, tool_call_id: str, tool_name: str
) -> tuple[int | None, int | None]:
    """The call's place (from 1) among the calls of its tool the model made in the same step, and how many there
    were; ``(None, None)`` for a lone call. Read from the step's assistant message, so every event of the call (and
    every retry) names it the same way, whichever of the calls ended first."""
    message = (await registry.transcripts.get(run_id)).message(step, "assistant")
    same = [c.tool_call_id for c in message.tool_calls if c.tool_name == tool_name] if message is not None else []
    if len(same) < 2 or tool_call_id not in same:
        return None, None
    return same.index(tool_call_id) + 1, len(same)


async def _call_view(registry: Registry, run_id: str, agent_id: str, call: PendingCall) -> CallView:
    """The call as clients see it: its arguments and payload through the agent's and tool's display transforms."""
    shown = await displayed_call(
        registry.agent(agent_id).transform_for(call.tool_name),
        tool_name=call.tool_name,
        tool_call_id=call.tool_call_id,
        args=call.args,
        suspend_payload=call.suspend_payload,
        approval=call.requires_approval,
    )
    position, together = await _position(registry, run_id, call.step, call.tool_call_id, call.tool_name)
    return CallView(
        tool_call_id=call.tool_call_id,
        tool_name=call.tool_name,
        kind=_kind(call),
        round=call.round,
        position=position,
        calls_together=together,
        args=shown.args,
        suspend_payload=shown.suspend_payload,
        expires_at=call.expires_at,
        approvers=call.approvers,
    )


async def _waiting_event(
    registry: Registry, run_id: str, agent_id: str, call: PendingCall, event_type: str, *parts: object, **fields: object
) -> NotificationEvent:
    notifier = registry.notifier
    assert notifier is not None
    view = await _call_view(registry, run_id, agent_id, call)
    payload = call.suspend_payload
    options = payload.get("options") if isinstance(payload, dict) else None
    linked = LinkedCall(
        call.tool_call_id,
        call.round,
        call.args,
        _kind(call),
        options if isinstance(options, list) else (),
        call.approvers,
        registry.agent(agent_id).answers_need_sign_in(call.tool_name),
    )
    links = notifier.links(run_id, linked)
    return NotificationEvent.model_validate(
        {
            "id": event_id(run_id, event_type, call.tool_call_id, call.round, *parts),
            "type": event_type,
            "timestamp": datetime.now(UTC),
            "run_id": run_id,
            "agent_id": agent_id,
            "call": view,
            "links": links,
            **fields,
        }
    )


async def notify_call(registry: Registry, call_input: ToolCallInput, result: ToolCallResult) -> None:
    """A call's answer (or passed deadline) and its new wait, as the tool-call activity recorded them."""
    notifier = registry.notifier
    if notifier is None:
        return
    run_id, agent_id, call = call_input.run_id, call_input.agent_id, call_input.call
    events: list[NotificationEvent] = []
    resolution = call_input.resolution
    if resolution is not None and result.status != "resume-rejected":
        events.append(await _answered_event(registry, call_input, resolution))
    if result.status == "suspended" and result.suspension is not None:
        pending = PendingCall.of(call_input, result.suspension, datetime.now(UTC), call_input.round)
        events.append(await _waiting_event(registry, run_id, agent_id, pending, "call.waiting"))
    if events:
        await notifier.send(run_id, events, _channels(registry, agent_id, call.tool_name))


async def _answered_event(registry: Registry, call_input: ToolCallInput, resolution: Resolution) -> NotificationEvent:
    notifier = registry.notifier
    assert notifier is not None
    call, run_id = call_input.call, call_input.run_id
    position, together = await _position(registry, run_id, call_input.step, call.tool_call_id, call.tool_name)
    event_type: EventType = "call.expired" if resolution.expired else "call.answered"
    answered_round = max(call_input.round - 1, 0)
    return NotificationEvent(
        id=event_id(run_id, event_type, call.tool_call_id, answered_round),
        type=event_type,
        timestamp=datetime.now(UTC),
        run_id=run_id,
        agent_id=call_input.agent_id,
        call=CallView(
            tool_call_id=call.tool_call_id,
            tool_name=call.tool_name,
            kind=_answered_kind(registry, call_input, resolution),
            round=answered_round,
            position=position,
            calls_together=together,
        ),
        answer=AnswerView(action=resolution.action, answered_by=resolution.answered_by, expired=resolution.expired),
        links=notifier.links(run_id),
    )


def _answered_kind(registry: Registry, call_input: ToolCallInput, resolution: Resolution) -> CallKind:
    """The answered (or expired) call's kind, as its waiting events named it."""
    if resolution.action in ("approve", "decline"):
        return "approval"
    tool = registry.agent(call_input.agent_id).tools.get(call_input.call.tool_name)
    return "question" if tool is not None and tool.id == ASK_USER_TOOL else "suspension"


async def notify_alarms(registry: Registry, run_id: str, agent_id: str, alarms: list[CallAlarm]) -> None:
    """Reminders and escalations the workflow rang (the journal activity's alarms)."""
    notifier = registry.notifier
    if notifier is None or not alarms:
        return
    for alarm in alarms:
        call = alarm.call
        if alarm.kind == "reminder":
            event = await _waiting_event(
                registry, run_id, agent_id, call, "call.reminder", alarm.reminder, reminder=alarm.reminder
            )
        else:
            event = await _waiting_event(
                registry, run_id, agent_id, call, "call.escalated", escalated_to=list(call.approvers)
            )
        await notifier.send(run_id, [event], _channels(registry, agent_id, call.tool_name))


async def notify_run_end(registry: Registry, run_id: str, agent_id: str, reason: str, error: str | None) -> None:
    """The run ended (its last segment's ``finish`` is written): finished, failed or cancelled."""
    notifier = registry.notifier
    if notifier is None or reason == "suspended":
        return
    event_type: EventType = (
        "run.cancelled" if reason == "aborted" else "run.failed" if reason == "error" else "run.finished"
    )
    event = NotificationEvent(
        id=event_id(run_id, event_type),
        type=event_type,
        timestamp=datetime.now(UTC),
        run_id=run_id,
        agent_id=agent_id,
        run=RunEnd(finish_reason=reason, error=error),
        links=notifier.links(run_id),
    )
    await notifier.send(run_id, [event], _channels(registry, agent_id, None))
