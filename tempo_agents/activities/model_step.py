"""The model-step activity: one call to the model, streamed into the journal."""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

from temporalio.exceptions import ApplicationError

from tempo_agents.activities._running import (
    attempt,
    is_local,
    may_have_run_before,
    saved_or_counted_start,
    start_fence,
)
from tempo_agents.activities.budget_gate import (
    StepCounters,
    check_budget,
    check_priced,
    spends_tokens,
    step_cost,
    stop_step,
)
from tempo_agents.activities.segment_close import close_segment
from tempo_agents.activities.waiting_transcript import catch_up
from tempo_agents.activity_options import MODEL_STEP_DEFAULTS
from tempo_agents.errors import SupersededStartError
from tempo_agents.forks.origin import seed_fork
from tempo_agents.journal import constructors, keys
from tempo_agents.journal.outbox import StepFinishNote
from tempo_agents.journal.outbox_flush import store_outbox
from tempo_agents.journal.writer import RunJournal
from tempo_agents.models.messages import Message, TextPart, ToolCallPart, ToolResultPart
from tempo_agents.models.model import (
    FinishEvent,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ToolCallEvent,
    ToolInputDelta,
    ToolInputEnd,
    ToolInputStart,
    ToolResultEvent,
)
from tempo_agents.models.resolve import resolve_model
from tempo_agents.models.usage import Usage
from tempo_agents.store.base import HISTORY_STEP, INPUT_STEP, ChunkWrite, SavedOutcome, TranscriptEntry
from tempo_agents.store.transcript_cache import RunTranscript
from tempo_agents.tasks import TASKS_STATE_TYPE, TaskItem
from tempo_agents.tasks.signals import TASK_STATE_SYSTEM_MESSAGE, compute_task_signal
from tempo_agents.tools.builtin.web_search import SUPPORTED_PROVIDERS, base_provider, web_search_unsupported
from tempo_agents.tools.lifecycle import ToolLifecycleEvent, run_lifecycle_hook
from tempo_agents.tools.transform import project
from tempo_agents.workflows.payloads import ModelStepInput, ModelStepResult, ToolCallRequest

if TYPE_CHECKING:
    from tempo_agents.activities.registry import Registry
    from tempo_agents.agent.agent import Agent


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


async def run_model_step(registry: Registry, step_input: ModelStepInput) -> ModelStepResult:
    """Run one model step: write the outbox, call the model, journal what it says, store its message.

    A step whose result is saved (its worker died before Temporal heard of it) is answered from the
    store; a step retried after a failure mid-stream first journals ``step-reset``.
    """
    agent = registry.agent(step_input.agent_id)
    store = registry.store
    run_id = step_input.run_id
    step = step_input.step
    this_attempt = attempt()
    rerun = may_have_run_before()
    local = is_local()
    fence = None
    if local:  # a lost worker's local step starts again at attempt 1: its starts are counted in the store
        saved, this_attempt = await saved_or_counted_start(store, run_id, keys.model_step_outcome(step))
        if saved is None:  # a start whose workflow task timed out may still run beside the next: the newest writes
            fence = start_fence(keys.model_step_outcome(step), this_attempt)
    else:
        saved = await store.saved_outcome(run_id, keys.model_step_outcome(step)) if rerun else None
    journal = RunJournal(store, run_id, fence)
    if saved is not None:
        return await _closed_if_done(registry, journal, step_input, ModelStepResult.model_validate(saved))
    if local:
        limit = (agent.model_step_activity or MODEL_STEP_DEFAULTS).maximum_attempts
        if this_attempt > limit:
            raise ApplicationError(
                f"The model step was lost with its worker {limit} times in a row "
                "(it ran as a local activity and never finished).",
                type="WorkerLost",
                non_retryable=True,
            )

    fork = step_input.options.fork
    if fork is not None and step == 0:  # a fork starts from its origin's transcript (copied from the store)
        await seed_fork(store, run_id, fork)
    if step_input.new_messages:
        entries = [
            TranscriptEntry(INPUT_STEP, f"input-{i:04d}", i, message.to_wire())
            for i, message in enumerate(step_input.new_messages)
        ]
        memory = step_input.options.memory
        if memory is not None and fork is None:  # a fork's copy holds its origin's thread history
            history = await store.get_thread_messages(memory.thread, memory.resource)
            entries += [TranscriptEntry(HISTORY_STEP, f"history-{i:06d}", i, m) for i, m in enumerate(history)]
        await store.put_transcript(run_id, entries)
    memory = step_input.options.memory
    if step_input.catch_up is not None and memory is not None:  # it yielded its thread while it waited
        await catch_up(store, run_id, memory.thread, memory.resource, step, step_input.catch_up)
    writes, transcript = await store_outbox(store, registry.transcripts, run_id, step_input.outbox)
    if this_attempt > 1:
        started = await store.offset_of(run_id, keys.step_start(step))
        discard_from = None if started is None else started + 1
        writes.append(ChunkWrite(constructors.step_reset(run_id, step, this_attempt, discard_from)))
    writes.append(ChunkWrite(journal.chunk("step-start", {"stepNumber": step, "warnings": []}), keys.step_start(step)))

    options = step_input.options
    model = resolve_model(agent.model, agent_id=agent.id)
    check_priced(registry, options.budget, model, agent.id)
    if step_input.budget_answered is not None:  # a person answered the budget wait: it no longer waits
        await store.forget_waiting(run_id, step_input.budget_answered, 0)
    step_counters = StepCounters.of(step_input)
    stop = await check_budget(registry, step_input, step_counters)
    if stop is not None:
        return await stop_step(registry, journal, step_input, stop, writes)
    instructions = await agent.resolve_instructions(options.request_context, step_input.mode)
    if options.extra_instructions:
        instructions = "\n\n".join(part for part in (instructions, options.extra_instructions) if part)
    messages = transcript.messages()
    if agent.projects_tasks:
        instructions = "\n\n".join(part for part in (instructions, TASK_STATE_SYSTEM_MESSAGE) if part)
    if instructions:
        messages.insert(0, Message(role="system", content=[TextPart(text=instructions)]))
    state_signals = list(step_input.state_signals)
    thread_tasks = None
    if step_input.new_messages and options.memory is not None and agent.uses_task_tools:
        stored = await store.get_thread_state(options.memory.thread, TASKS_STATE_TYPE)
        thread_tasks = [TaskItem.model_validate(item) for item in stored or []]
        signal, _ = compute_task_signal(None, thread_tasks)
        if agent.projects_tasks and signal is not None:
            state_signals.append(signal.render())
    if state_signals:
        messages.append(Message(role="user", content=[TextPart(text="\n".join(state_signals))]))
    request = ModelRequest(
        run_id=run_id,
        step=step,
        messages=messages,
        tools=agent.tool_definitions(
            options.active_tools, auto_resume=options.auto_resume_suspended_tools, mode_id=step_input.mode
        ),
        tool_choice=options.tool_choice,
        settings=options.model_settings,
    )
    provider = base_provider(model.provider)
    wants_search = any(tool.kind == "web_search" for tool in request.tools)
    if wants_search and provider not in SUPPORTED_PROVIDERS and provider != "openai-compatible":
        raise web_search_unsupported(model.provider)

    streamed = _StreamedStep(agent, journal, step, this_attempt, messages)
    journal.write_soon(writes)  # the outbox, a reset and step-start go with the first tokens
    try:
        async for event in model.stream(request):
            await streamed.handle(event)
        await streamed.close_inputs()
    except BaseException:
        # What the failed attempt streamed, for the reset to discard; a superseded start (its workflow task timed
        # out and the worker cancels it) may not write it, and ends with its own error.
        with contextlib.suppress(SupersededStartError):
            await journal.flush_text()
        raise
    buffered = await journal.take_buffered()  # written with the step's last write
    text_parts, calls, finish = streamed.text_parts, streamed.calls, streamed.finish

    available = agent.active_tool_names(options.active_tools, step_input.mode)

    parts: list[TextPart | ToolCallPart | ToolResultPart] = []
    memory_parts: list[TextPart | ToolCallPart | ToolResultPart] = []
    text = "".join(text_parts)
    if text:
        parts.append(TextPart(text=text))
        memory_parts.append(TextPart(text=text))
    runnable: list[ToolCallRequest] = []
    chunk_writes: list[ChunkWrite] = []
    error_entries: list[TranscriptEntry] = []
    for index, call in enumerate(calls):
        parsed, args = _parse_args(call.args_text)
        tool = agent.tools.get(call.tool_name)
        parts.append(ToolCallPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, args=args))
        transform = agent.transform_for(call.tool_name) if tool is not None else None
        ids = {"tool_name": call.tool_name, "tool_call_id": call.tool_call_id}
        shown = await project(transform, "display", "input", args, input=args, **ids)
        kept = await project(transform, "transcript", "input", args, input=args, **ids)
        memory_parts.append(ToolCallPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, args=kept))
        call_payload = {"toolCallId": call.tool_call_id, "toolName": call.tool_name, "args": shown}
        chunk_writes.append(
            ChunkWrite(journal.chunk("tool-call", call_payload), keys.tool_call(step, call.tool_call_id))
        )
        if call.tool_name not in available:
            error = tool_not_found_message(call.tool_name, available)
        elif not parsed:
            error = invalid_arguments_message(call.tool_name)
        else:
            operation = tool.workflow_operation if tool is not None else None
            runnable.append(
                ToolCallRequest(
                    tool_call_id=call.tool_call_id,
                    tool_name=call.tool_name,
                    args=args,
                    index=index,
                    operation=operation,
                    activity=tool.activity if tool is not None else None,
                )
            )
            continue
        chunk_writes.append(
            ChunkWrite(
                journal.chunk("tool-error", {**call_payload, "error": error}),
                keys.call_outcome(step, call.tool_call_id, "tool-error"),
            )
        )
        result = ToolResultPart(tool_call_id=call.tool_call_id, tool_name=call.tool_name, result=error, is_error=True)
        error_entries.append(
            TranscriptEntry(step, f"tool-{index:04d}", 1 + index, Message(role="tool", content=[result]).to_wire())
        )

    assistant = Message(role="assistant", content=parts).to_wire()
    kept_message = Message(role="assistant", content=memory_parts).to_wire()
    entry = TranscriptEntry(step, "assistant", 0, assistant, kept_message if kept_message != assistant else None)
    step_result = ModelStepResult(
        finish_reason=finish.finish_reason,
        usage=finish.usage,
        tool_calls=runnable,
        answered_calls=len(calls) - len(runnable),
        thread_tasks=thread_tasks,
        projects_tasks=agent.projects_tasks,
    )
    outcome = SavedOutcome(keys.model_step_outcome(step), step_result.model_dump(mode="json", by_alias=True))
    cost = step_cost(registry, model, finish, agent.id)
    charges = step_counters.charges(spends_tokens(finish.usage), cost)
    await store.record(
        run_id, [entry, *error_entries], [*buffered, *chunk_writes], outcome, charges=charges, fence=journal.fence
    )
    transcript.apply([entry, *error_entries], transcript.revision)  # what this step added: no read back to end a run
    return await _closed_if_done(registry, journal, step_input, step_result, transcript)


async def _closed_if_done(
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


class _StreamedStep:
    """Journals what the model streams, as it streams, and keeps what the step needs afterwards."""

    def __init__(self, agent: Agent, journal: RunJournal, step: int, attempt: int, messages: list[Message]) -> None:
        self._agent = agent
        self._journal = journal
        self._step = step
        self._attempt = attempt
        self._messages = messages
        self._names: dict[str, str] = {}
        """Tool calls whose arguments streamed, in the order they started."""
        self.text_parts: list[str] = []
        self.calls: list[ToolCallEvent] = []
        self.finish = FinishEvent(finish_reason="stop", usage=Usage())

    async def handle(self, event: ModelEvent) -> None:
        payload: dict[str, Any]

        if isinstance(event, TextDelta):
            self.text_parts.append(event.text)
            await self._journal.text_delta(self._step, event.text)
        elif isinstance(event, ToolInputStart):
            self._names[event.tool_call_id] = event.tool_name
            payload = {"toolCallId": event.tool_call_id, "toolName": event.tool_name}
            await self._journal.streamed(self._journal.chunk("tool-call-input-streaming-start", payload))
            await self._hook(event.tool_call_id, "on_input_start")
        elif isinstance(event, ToolInputDelta):
            name = self._names.get(event.tool_call_id, "")
            shown = await self._display_delta(name, event.tool_call_id, event.args_text_delta)
            if shown is not None:
                payload = {"toolCallId": event.tool_call_id, "toolName": name, "argsTextDelta": shown}
                await self._journal.streamed(self._journal.chunk("tool-call-delta", payload))
            await self._hook(event.tool_call_id, "on_input_delta", event.args_text_delta)
        elif isinstance(event, ToolInputEnd):
            pass  # journaled for every call together in close_inputs(): providers end arguments at different times
        elif isinstance(event, ToolCallEvent) and event.provider_executed:
            _, args = _parse_args(event.args_text)
            payload = {
                "toolCallId": event.tool_call_id,
                "toolName": event.tool_name,
                "args": args,
                "providerExecuted": True,
            }
            key = keys.provider_chunk(self._step, self._attempt, event.tool_call_id, "tool-call")
            await self._journal.write([ChunkWrite(self._journal.chunk("tool-call", payload), key)])
        elif isinstance(event, ToolCallEvent):
            self.calls.append(event)
        elif isinstance(event, ToolResultEvent):
            payload = {
                "toolCallId": event.tool_call_id,
                "toolName": event.tool_name,
                "result": event.result,
                "providerExecuted": event.provider_executed,
            }
            key = keys.provider_chunk(self._step, self._attempt, event.tool_call_id, "tool-result")
            await self._journal.write([ChunkWrite(self._journal.chunk("tool-result", payload), key)])
        elif isinstance(event, FinishEvent):
            self.finish = event

    async def _display_delta(self, tool_name: str, tool_call_id: str, delta: str) -> str | None:
        """The delta clients may see: projected, or nothing when the input is hidden and no safe projection exists."""
        transform = self._agent.transform_for(tool_name) if tool_name in self._agent.tools else None
        if transform is None:
            return delta
        if transform.drops_input_deltas():
            return None
        shown = await project(
            transform,
            "display",
            "input_delta",
            delta,
            tool_name=tool_name,
            tool_call_id=tool_call_id,
            input_text_delta=delta,
        )
        return shown if isinstance(shown, str) else None

    async def close_inputs(self) -> None:
        """End every streamed argument input once the model is done: the same journal shape for every
        provider (some end a call's arguments when the next begins, some interleave them, some at the end)."""
        for tool_call_id in self._names:
            payload = {"toolCallId": tool_call_id}
            await self._journal.streamed(self._journal.chunk("tool-call-input-streaming-end", payload))

    async def _hook(self, tool_call_id: str, name: str, delta: str | None = None) -> None:
        tool = self._agent.tools.get(self._names.get(tool_call_id, ""))
        if tool is None:
            return
        hook = tool.on_input_start if name == "on_input_start" else tool.on_input_delta
        event = ToolLifecycleEvent(
            tool_call_id=tool_call_id,
            tool_name=self._names[tool_call_id],
            messages=self._messages,
            input_text_delta=delta,
        )
        await run_lifecycle_hook(hook, name, event)
