"""The model-step activity: one call to the model, streamed into the journal."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from temporalio import activity

from tempo_agents.activities._journal import RunJournal, pending_writes, transcript_messages
from tempo_agents.models.messages import Message, TextPart, ToolCallPart, ToolResultPart
from tempo_agents.models.model import (
    FinishEvent,
    ModelRequest,
    TextDelta,
    ToolCallEvent,
)
from tempo_agents.models.resolve import resolve_model
from tempo_agents.models.usage import Usage
from tempo_agents.store.base import ChunkWrite, TranscriptEntry
from tempo_agents.workflows.payloads import ModelStepInput, ModelStepResult, ToolCallRequest

if TYPE_CHECKING:
    from tempo_agents.agent.app import App

INPUT_STEP = -1
"""Transcript step of the messages a run was started with."""
HISTORY_STEP = -2
"""Transcript step of the memory-thread messages of earlier runs."""


def tool_not_found_message(tool_name: str, available: list[str]) -> str:
    available_text = f" Available tools: {', '.join(available)}." if available else ""
    return (
        f'Tool "{tool_name}" not found.{available_text}'
        " Call tools by their exact name only — never add prefixes, namespaces, or colons."
    )


def invalid_arguments_message(tool_name: str) -> str:
    return (
        f'Tool "{tool_name}" received invalid arguments — the provided JSON could not be parsed. '
        "Please provide valid JSON arguments."
    )


def _parse_args(args_text: str) -> tuple[bool, Any]:
    if not args_text.strip():
        return True, {}
    try:
        return True, json.loads(args_text)
    except ValueError:
        return False, None


async def run_model_step(app: App, step_input: ModelStepInput) -> ModelStepResult:
    """Run one model step: save new input, call the model, journal what it says, store its message."""
    agent = app.agent(step_input.agent_id)
    store = app.store
    run_id = step_input.run_id
    step = step_input.step
    journal = RunJournal(store, run_id)

    if step_input.new_messages:
        entries = [
            TranscriptEntry(INPUT_STEP, f"input-{i:04d}", i, message.to_wire())
            for i, message in enumerate(step_input.new_messages)
        ]
        memory = step_input.options.memory
        if memory is not None:
            history = await store.get_thread_messages(memory.thread, memory.resource)
            entries += [TranscriptEntry(HISTORY_STEP, f"history-{i:06d}", i, m) for i, m in enumerate(history)]
        await store.put_transcript(run_id, entries)
    transcript = await store.get_transcript(run_id)

    writes = pending_writes(run_id, step_input.pending, step_input.previous_step, transcript)
    attempt = activity.info().attempt if activity.in_activity() else 1
    if attempt > 1:
        writes.append(ChunkWrite(journal.chunk("step-reset", {"stepNumber": step, "attempt": attempt})))
    writes.append(ChunkWrite(journal.chunk("step-start", {"stepNumber": step, "warnings": []}), f"{step}:step-start"))
    await journal.write(writes)

    options = step_input.options
    instructions = await agent.resolve_instructions(options.request_context)
    messages = transcript_messages(transcript)
    if instructions:
        messages.insert(0, Message(role="system", content=[TextPart(text=instructions)]))
    request = ModelRequest(
        run_id=run_id,
        step=step,
        messages=messages,
        tools=agent.tool_definitions(options.active_tools, auto_resume=options.auto_resume_suspended_tools),
        tool_choice=options.tool_choice,
        settings=options.model_settings,
    )
    model = resolve_model(agent.model, agent_id=agent.id)

    text_parts: list[str] = []
    calls: list[ToolCallEvent] = []
    finish = FinishEvent(finish_reason="stop", usage=Usage())
    try:
        async for event in model.stream(request):
            if isinstance(event, TextDelta):
                text_parts.append(event.text)
                await journal.text_delta(step, event.text)
            elif isinstance(event, ToolCallEvent):
                calls.append(event)
            elif isinstance(event, FinishEvent):
                finish = event
            if activity.in_activity():
                activity.heartbeat()
    finally:
        await journal.flush_text()

    available = agent.active_tool_names(options.active_tools)
    parts: list[TextPart | ToolCallPart | ToolResultPart] = []
    text = "".join(text_parts)
    if text:
        parts.append(TextPart(text=text))
    runnable: list[ToolCallRequest] = []
    chunk_writes: list[ChunkWrite] = []
    error_entries: list[TranscriptEntry] = []
    for index, call in enumerate(calls):
        parsed, args = _parse_args(call.args_text)
        parts.append(ToolCallPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, args=args))
        call_payload = {"toolCallId": call.tool_call_id, "toolName": call.tool_name, "args": args}
        chunk_writes.append(
            ChunkWrite(journal.chunk("tool-call", call_payload), f"{step}:{call.tool_call_id}:tool-call")
        )
        if call.tool_name not in available:
            error = tool_not_found_message(call.tool_name, available)
        elif not parsed:
            error = invalid_arguments_message(call.tool_name)
        else:
            runnable.append(ToolCallRequest(tool_call_id=call.tool_call_id, tool_name=call.tool_name, args=args))
            continue
        chunk_writes.append(
            ChunkWrite(
                journal.chunk("tool-error", {**call_payload, "error": error}),
                f"{step}:{call.tool_call_id}:tool-error",
            )
        )
        result = ToolResultPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, result=error, is_error=True)
        error_entries.append(
            TranscriptEntry(step, f"tool-{index:04d}", 1 + index, Message(role="tool", content=[result]).to_wire())
        )

    assistant = Message(role="assistant", content=parts)
    await store.put_transcript(run_id, [TranscriptEntry(step, "assistant", 0, assistant.to_wire()), *error_entries])
    await journal.write(chunk_writes)
    return ModelStepResult(
        finish_reason=finish.finish_reason,
        usage=finish.usage,
        tool_calls=runnable,
        answered_calls=len(calls) - len(runnable),
    )
