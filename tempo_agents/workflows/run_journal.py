"""What readers see of a run beyond its activities' own writes: the journal's segments, what the workflow still owes
the journal, and the run's status.

Every chunk and store write only the workflow knows of waits in the *outbox* for the next activity to write it
(ARCHITECTURE.md, "The journal"); a run that waits for people has no activity about to run, so what it must show at
once (a refused signal, a reminder, an escalation) are *notes*, journaled by a local activity. The finish activity
ends a segment when no other activity could. The status is the ``TempoAgentStatus`` search attribute; a suspended
run's memo lists the calls it waits on.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from tempo_agents.activity_options import FINISH_DEFAULTS
from tempo_agents.journal import constructors
from tempo_agents.journal.outbox import JournalOutbox, JournalRecord, TranscriptRecord
from tempo_agents.models.messages import Message, ToolResultPart
from tempo_agents.workflows import search_attributes
from tempo_agents.workflows.activity_names import FINISH_RUN, JOURNAL
from tempo_agents.workflows.payloads import (
    CallAlarm,
    FinishInput,
    JournalInput,
    ResumeRequest,
    SegmentClose,
)
from tempo_agents.workflows.resume_errors import NOT_SUSPENDED
from tempo_agents.workflows.run_state import RunState
from tempo_agents.workflows.search_attributes import RunStatus
from tempo_agents.workflows.segments import Segments

__all__ = ["JournalKeeper"]


class JournalKeeper:
    """The run's segments, its outbox, its notes and alarms, and its status."""

    def __init__(self, state: RunState) -> None:
        carried = state.carried
        self._state = state
        self.segments = Segments(carried.segment)
        self.outbox = carried.outbox
        """What the next activity writes first: chunks, the step before's ``step-finish``, transcript entries and
        thread state only the workflow knows of."""
        self.notes: list[JournalRecord] = []
        """Refused signals, reminders and escalations, journaled at once by a local activity while the run waits."""
        self._alarms: list[CallAlarm] = []
        """Reminders and escalations to notify about, handed to the journal activity with their notes."""
        self._refused_signals = 0
        self.status: RunStatus = "running"

    def take_outbox(self) -> JournalOutbox:
        """The outbox, for the activity about to run; the run starts a new one."""
        outbox, self.outbox = self.outbox, JournalOutbox()
        return outbox

    def start_next_segment(self) -> None:
        """A resume (or the end of a run that waited): open the next segment with its ``start`` chunk, unless the
        current one is still open."""
        if self.segments.open_next():
            self.outbox.records.append(
                constructors.start(self._state.run_id, self._state.agent_id, self.segments.current)
            )

    def end_call_with_error(
        self, step: int, tool_call_id: str, tool_name: str, args: Any, index: int, message: str
    ) -> None:
        """End a call with a tool error the model reads: its chunk and its transcript entry, in the outbox."""
        run_id = self._state.run_id
        self.outbox.records.append(constructors.tool_error(run_id, step, tool_call_id, tool_name, args, message))
        part = ToolResultPart(tool_call_id=tool_call_id, tool_name=tool_name, result=message, is_error=True)
        self.outbox.transcript.append(
            TranscriptRecord(
                step=step,
                part=f"tool-{index:04d}",
                position=1 + index,
                message=Message(role="tool", content=[part]).to_wire(),
            )
        )

    def note_refused_signal(self, request: ResumeRequest, refusal: ApplicationError | None) -> None:
        """A ``resume`` signal the run refused (``None``: it was not) is journaled as a ``data-error`` chunk."""
        if refusal is None:
            return
        self._refused_signals += 1
        chunk = constructors.resume_rejected(
            self._state.run_id, refusal.type or NOT_SUSPENDED, refusal.message, request.tool_call_id
        )
        self.notes.append(JournalRecord(chunk=chunk, key=f"resume-signal-refused:{self._refused_signals}"))

    def ring(self, alarms: list[CallAlarm]) -> None:
        """Reminders and escalations came due: the journal says so (the notes), the journal activity notifies,
        and an escalation shows in the memo the inbox reads."""
        run_id = self._state.run_id
        for alarm in alarms:
            call = alarm.call
            base = {"toolCallId": call.tool_call_id, "toolName": call.tool_name}
            if alarm.kind == "escalated":
                chunk = constructors.data_chunk(run_id, "data-call-escalated", {**base, "approvers": call.approvers})
                key = f"call-escalated:{call.tool_call_id}:{call.round}"
            else:
                chunk = constructors.data_chunk(run_id, "data-call-reminder", {**base, "reminder": alarm.reminder})
                key = f"call-reminder:{call.tool_call_id}:{call.round}:{alarm.reminder}"
            self.notes.append(JournalRecord(chunk=chunk, key=key))
            self._alarms.append(alarm)
        if any(alarm.kind == "escalated" for alarm in alarms):
            workflow.upsert_memo({"pending": [call.to_wire() for call in self._state.calls.pending()]})

    async def write_notes(self) -> None:
        """Journal the notes now."""
        records, self.notes = self.notes, []
        await self.write_now(records)

    async def write_resume_start(self) -> None:
        """Pre-patch path: a resume's ``start`` chunk (and what came with it) is journaled at once, not carried by the
        next activity."""
        if self.segments.journals_resume_start:
            records, self.outbox.records = self.outbox.records, []
            await self.write_now(records)

    async def write_now(self, records: list[JournalRecord]) -> None:
        """Write chunks a waiting run must show at once (no activity of the run is about to run)."""
        alarms, self._alarms = self._alarms, []
        if records:
            await workflow.execute_local_activity(
                JOURNAL,
                JournalInput(run_id=self._state.run_id, records=records, agent_id=self._state.agent_id, alarms=alarms),
                start_to_close_timeout=FINISH_DEFAULTS.start_to_close_timeout,
                retry_policy=FINISH_DEFAULTS.retry_policy(),
            )

    async def finish_segment(self, reason: str, *, error: str | None = None, abandoned_step: int | None = None) -> None:
        """End the segment with the finish activity (when no other activity could)."""
        state = self._state
        outbox = self.take_outbox()
        outbox.records.extend(self.notes)
        self.notes = []
        await workflow.execute_activity(
            FINISH_RUN,
            FinishInput(
                run_id=state.run_id,
                agent_id=state.agent_id,
                options=state.options,
                close=SegmentClose(
                    segment=self.segments.current,
                    steps=state.step,
                    usage=state.usage,
                    reason=reason,
                    error=error,
                    abandoned_step=abandoned_step,
                ),
                outbox=outbox,
            ),
            start_to_close_timeout=FINISH_DEFAULTS.start_to_close_timeout,
            heartbeat_timeout=FINISH_DEFAULTS.heartbeat_timeout,
            retry_policy=FINISH_DEFAULTS.retry_policy(),
            summary=f"finish ({reason})",
        )
        self.segments.close()

    def set_status(self, status: RunStatus) -> None:
        """The ``TempoAgentStatus`` search attribute; a suspended run's memo lists what it waits on (read
        only while the status says ``suspended``, so later changes of status leave it as it is)."""
        if status != self.status:
            self.status = status
            workflow.upsert_search_attributes([search_attributes.STATUS.value_set(status)])
            if status == "suspended" or self.segments.memo_on_every_status:
                workflow.upsert_memo({"pending": [call.to_wire() for call in self._state.calls.pending()]})
