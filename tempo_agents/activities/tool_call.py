"""The tool-call activity: hooks, validation, execute and ``to_model_output`` for one call."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from temporalio import activity

from tempo_agents.activities._journal import JournalToolWriter, RunJournal, to_jsonable
from tempo_agents.agent.hooks import merge_hooks, run_with_hooks
from tempo_agents.models.messages import Message, ToolResultPart
from tempo_agents.store.base import ChunkWrite, TranscriptEntry
from tempo_agents.tools._validation import is_validation_result
from tempo_agents.tools.context import ToolContext
from tempo_agents.tools.tool import call_user_function
from tempo_agents.workflows.payloads import ToolCallInput, ToolCallResult

if TYPE_CHECKING:
    from tempo_agents.agent.app import App


async def run_tool_call(app: App, call_input: ToolCallInput) -> ToolCallResult:
    """Run one tool call and record its result (or error) in the journal and the transcript."""
    agent = app.agent(call_input.agent_id)
    store = app.store
    call = call_input.call
    options = call_input.options
    tool = agent.tools[call.tool_name]
    journal = RunJournal(store, call_input.run_id)
    transcript = await store.get_transcript(call_input.run_id)
    index = _call_index(transcript, call_input.step, call.tool_call_id)
    context = ToolContext(
        tool_call_id=call.tool_call_id,
        agent_id=agent.id,
        run_id=call_input.run_id,
        thread_id=options.memory.thread if options.memory else None,
        resource_id=options.memory.resource if options.memory else None,
        request_context=dict(options.request_context),
        writer=JournalToolWriter(journal, call_input.step, call.tool_call_id, call.tool_name),
        messages=[Message.model_validate(e.message) for e in transcript],
    )
    hooks = merge_hooks(agent.hooks, app.run_hooks(options.hooks))
    metadata = {"agent_id": agent.id, "agent_name": agent.name}
    base = {"toolCallId": call.tool_call_id, "toolName": call.tool_name}
    key = f"{call_input.step}:{call.tool_call_id}"
    try:
        output = await _watch_cancellation(
            run_with_hooks(tool, call.tool_name, call.args, context, hooks, metadata), context
        )
        try:
            result = to_jsonable(output)
        except ValueError as error:
            raise ValueError(
                f'Tool "{call.tool_name}" returned a value that cannot be stored as JSON: {error}'
            ) from error
        model_output: Any = result
        if tool.to_model_output is not None and not is_validation_result(result):
            model_output = to_jsonable(await call_user_function(tool.to_model_output, output))
    except Exception as error:
        message = str(error) or type(error).__name__
        chunk = journal.chunk("tool-error", {**base, "args": call.args, "error": message})
        part = ToolResultPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, result=message, is_error=True)
        await _record(store, journal, call_input, index, part, ChunkWrite(chunk, f"{key}:tool-error"))
        return ToolCallResult(status="error")
    chunk = journal.chunk("tool-result", {**base, "args": call.args, "result": result})
    part = ToolResultPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, result=model_output)
    await _record(store, journal, call_input, index, part, ChunkWrite(chunk, f"{key}:tool-result"))
    return ToolCallResult(status="result")


async def _record(
    store: Any,
    journal: RunJournal,
    call_input: ToolCallInput,
    index: int,
    part: ToolResultPart,
    write: ChunkWrite,
) -> None:
    entry = TranscriptEntry(
        call_input.step, f"tool-{index:04d}", 1 + index, Message(role="tool", content=[part]).to_wire()
    )
    await store.put_transcript(call_input.run_id, [entry])
    await journal.write([write])


def _call_index(transcript: list[TranscriptEntry], step: int, tool_call_id: str) -> int:
    for entry in transcript:
        if entry.step == step and entry.part == "assistant":
            calls = Message.model_validate(entry.message).tool_calls
            for index, call in enumerate(calls):
                if call.tool_call_id == tool_call_id:
                    return index
    return 0


async def _watch_cancellation(work: Any, context: ToolContext) -> Any:
    """Await the tool while setting ``context.cancelled`` as soon as the activity is cancelled."""
    if not activity.in_activity():
        return await work

    async def watch() -> None:
        await activity.wait_for_cancelled()
        context.cancelled.set()

    watcher = asyncio.create_task(watch())
    try:
        return await work
    finally:
        watcher.cancel()
