"""The task list as workflow state: the task tools run here, inside the workflow, with no activity.

Pure and deterministic: validation, the mutation, the ``data-task-updated`` chunk, the tool result,
and what the next activity must store (the result in the transcript, the list in thread state).
"""

from __future__ import annotations

from typing import Any

from tempo_agents.journal import constructors, keys
from tempo_agents.journal.outbox import JournalOutbox, JournalRecord, ThreadStateRecord, TranscriptRecord
from tempo_agents.models.messages import Message, ToolResultPart
from tempo_agents.tasks import (
    TASK_CHECK,
    TASK_COMPLETE,
    TASK_TOOL_INPUT_MODELS,
    TASK_UPDATE,
    TASK_WRITE,
    TASKS_STATE_TYPE,
    TaskItem,
    TaskMutation,
    TaskSignalState,
    check_tasks,
    complete_task,
    compute_task_signal,
    no_memory_result,
    update_task,
    write_tasks,
)
from tempo_agents.tools.validation import Schema, validate_input
from tempo_agents.workflows.payloads import MemoryRef, ToolCallRequest

__all__ = ["TaskState"]

_SCHEMAS = {name: Schema(model) for name, model in TASK_TOOL_INPUT_MODELS.items()}


class TaskState:
    """The run's task list, the signals that show it to the model, and the writes it still owes the store."""

    def __init__(
        self,
        tasks: list[TaskItem],
        signal_state: TaskSignalState | None = None,
        signals: list[str] | None = None,
    ) -> None:
        self.tasks = tasks
        self.signal_state = signal_state
        self.signals = list(signals or [])

    def load(self, tasks: list[TaskItem]) -> None:
        """Start from the thread's list; the first model step already showed its snapshot."""
        self.tasks = tasks
        signal, self.signal_state = compute_task_signal(None, tasks)
        self.signals = [signal.render()] if signal is not None else []

    def refresh_signals(self) -> list[str]:
        """The signals the next model step shows: a new snapshot replaces all, a delta is added."""
        signal, self.signal_state = compute_task_signal(self.signal_state, self.tasks)
        if signal is not None:
            self.signals = [signal.render()] if signal.mode == "snapshot" else [*self.signals, signal.render()]
        return list(self.signals)

    def run_tool(
        self,
        run_id: str,
        step: int,
        call: ToolCallRequest,
        memory: MemoryRef | None,
        outbox: JournalOutbox,
    ) -> None:
        """Run one task tool call: its result and any list change go to the ``outbox``."""
        operation = call.operation or ""
        before = self.tasks
        result = self._result(operation, call.args, memory, outbox)
        if self.tasks is not before and memory is not None:
            data = {"threadId": memory.thread, "tasks": [task.to_wire() for task in self.tasks]}
            outbox.records.append(
                JournalRecord(
                    chunk=constructors.data_chunk(run_id, "data-task-updated", data),
                    key=keys.task_update(step, call.tool_call_id),
                )
            )
        payload = {"toolCallId": call.tool_call_id, "toolName": call.tool_name, "args": call.args, "result": result}
        outbox.records.append(
            JournalRecord(
                chunk=constructors.chunk(run_id, "tool-result", payload),
                key=keys.call_outcome(step, call.tool_call_id, "tool-result"),
            )
        )
        part = ToolResultPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, result=result)
        outbox.transcript.append(
            TranscriptRecord(
                step=step,
                part=f"tool-{call.index:04d}",
                position=1 + call.index,
                message=Message(role="tool", content=[part]).to_wire(),
            )
        )

    def _result(
        self,
        operation: str,
        args: Any,
        memory: MemoryRef | None,
        outbox: JournalOutbox,
    ) -> dict[str, Any]:
        if memory is None:
            return no_memory_result(operation)
        validated, failure = validate_input(operation, _SCHEMAS[operation], args)
        if failure is not None:
            return failure.to_result()
        if operation == TASK_CHECK:
            return check_tasks(self.tasks)
        mutation: TaskMutation
        if operation == TASK_WRITE:
            mutation = write_tasks(self.tasks, validated)
        elif operation == TASK_UPDATE:
            mutation = update_task(self.tasks, validated)
        elif operation == TASK_COMPLETE:
            mutation = complete_task(self.tasks, validated)
        else:
            raise ValueError(f"unknown task operation {operation!r}")
        if mutation.tasks is not None:
            self.tasks = mutation.tasks
            wire = [task.to_wire() for task in self.tasks]
            outbox.thread_state[:] = [
                *(r for r in outbox.thread_state if r.type != TASKS_STATE_TYPE),
                ThreadStateRecord(thread_id=memory.thread, type=TASKS_STATE_TYPE, value=wire),
            ]
        return mutation.result
