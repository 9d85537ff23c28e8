"""The end of a model step: its result for the workflow, and its record in the store.

The assistant message, the calls' chunks and the tool errors the step answered, the streamed chunks still
buffered, the saved outcome and the usage charges go to the store in one transaction (so a retry after a lost
worker answers from the store). A step that called no tool ends the run: it then writes the end of its segment
when the workflow asked for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tempo_agents.activities.model_calls import SortedCalls
from tempo_agents.activities.model_stream import ModelAnswer
from tempo_agents.activities.segment_close import close_segment
from tempo_agents.journal import keys
from tempo_agents.journal.outbox import StepFinishNote
from tempo_agents.journal.writer import RunJournal
from tempo_agents.models.messages import Message, Part, TextPart
from tempo_agents.store.base import SavedOutcome, TranscriptEntry, UsageCharge
from tempo_agents.store.transcript_cache import RunTranscript
from tempo_agents.tasks import TaskItem
from tempo_agents.workflows.payloads import ModelStepInput, ModelStepResult

if TYPE_CHECKING:
    from tempo_agents.activities.registry import Registry
    from tempo_agents.agent.agent import Agent

__all__ = ["closed_if_done", "record_step", "step_result"]


def step_result(
    agent: Agent, answer: ModelAnswer, calls: SortedCalls, thread_tasks: list[TaskItem] | None
) -> ModelStepResult:
    """What the workflow learns of the step: why the model stopped, its usage, the calls to run."""
    return ModelStepResult(
        finish_reason=answer.finish.finish_reason,
        usage=answer.finish.usage,
        tool_calls=calls.runnable,
        answered_calls=len(answer.calls) - len(calls.runnable),
        thread_tasks=thread_tasks,
        projects_tasks=agent.projects_tasks,
    )


async def record_step(
    registry: Registry,
    journal: RunJournal,
    step_input: ModelStepInput,
    transcript: RunTranscript,
    answer: ModelAnswer,
    calls: SortedCalls,
    result: ModelStepResult,
    charges: list[UsageCharge],
) -> None:
    """Store the step in one transaction; the cached transcript learns what the step added (no read back)."""
    step = step_input.step
    entries = [_assistant_entry(step, answer.text, calls), *calls.error_entries]
    outcome = SavedOutcome(keys.model_step_outcome(step), result.model_dump(mode="json", by_alias=True))
    await registry.store.record(
        step_input.run_id,
        entries,
        [*answer.buffered, *calls.chunk_writes],
        outcome,
        charges=charges,
        fence=journal.fence,
    )
    transcript.apply(entries, transcript.revision)  # what this step added: no read back to end a run


def _assistant_entry(step: int, text: str, calls: SortedCalls) -> TranscriptEntry:
    """The assistant message, with what the thread's memory keeps of it when that differs."""
    text_parts: list[Part] = [TextPart(text=text)] if text else []
    assistant = Message(role="assistant", content=[*text_parts, *calls.parts]).to_wire()
    kept_message = Message(role="assistant", content=[*text_parts, *calls.kept_parts]).to_wire()
    return TranscriptEntry(step, "assistant", 0, assistant, kept_message if kept_message != assistant else None)


async def closed_if_done(
    registry: Registry,
    journal: RunJournal,
    step_input: ModelStepInput,
    result: ModelStepResult,
    transcript: RunTranscript | None = None,
) -> ModelStepResult:
    """A step that called no tool ends the run: write the end of its segment when the workflow asked."""
    close = step_input.close
    if close is None or result.tool_calls or result.answered_calls:
        return result
    note = StepFinishNote(
        step=step_input.step, reason=result.finish_reason, usage=result.usage, is_continued=False, segment=close.segment
    )
    close = close.model_copy(update={"step_finish": note})
    usage = close.usage + result.usage
    await close_segment(
        registry,
        journal,
        step_input.options,
        close,
        result.finish_reason,
        usage,
        transcript,
        agent_id=step_input.agent_id,
    )
    return result.model_copy(update={"closed_segment": True})
