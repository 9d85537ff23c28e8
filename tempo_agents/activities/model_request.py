"""The request a model step sends: the agent's instructions, the run's transcript, what the run's state tells the
model (the task list), the tools the step may call and the run's choice and settings; refused before it is sent
when it asks a provider without a native web search to search."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tempo_agents.models.messages import Message, TextPart
from tempo_agents.models.model import Model, ModelRequest
from tempo_agents.store.base import Store
from tempo_agents.store.transcript_cache import RunTranscript
from tempo_agents.tasks import TASK_STATE_SYSTEM_MESSAGE, TASKS_STATE_TYPE, TaskItem, compute_task_signal
from tempo_agents.tools.builtin.web_search import SUPPORTED_PROVIDERS, base_provider, web_search_unsupported
from tempo_agents.workflows.payloads import ModelStepInput

if TYPE_CHECKING:
    from tempo_agents.agent.agent import Agent

__all__ = ["StepRequest", "build_request", "check_web_search"]


@dataclass(frozen=True)
class StepRequest:
    """The request of one step, the messages it was built from, and the task list the run's thread carried."""

    request: ModelRequest
    messages: list[Message]
    """The conversation as sent (the tools' input lifecycle hooks are given it)."""
    thread_tasks: list[TaskItem] | None
    """On a run's first step with a memory thread and task tools: the thread's task list from earlier runs."""


async def build_request(
    store: Store, agent: Agent, step_input: ModelStepInput, transcript: RunTranscript
) -> StepRequest:
    """The system message first, then the transcript, then a user message of the run's state signals."""
    options = step_input.options
    instructions = await _instructions(agent, step_input)
    messages = transcript.messages()
    if instructions:
        messages.insert(0, Message(role="system", content=[TextPart(text=instructions)]))
    state_signals, thread_tasks = await _state_signals(store, agent, step_input)
    if state_signals:
        messages.append(Message(role="user", content=[TextPart(text="\n".join(state_signals))]))
    request = ModelRequest(
        run_id=step_input.run_id,
        step=step_input.step,
        messages=messages,
        tools=agent.tool_definitions(
            options.active_tools, auto_resume=options.auto_resume_suspended_tools, mode_id=step_input.mode
        ),
        tool_choice=options.tool_choice,
        settings=options.model_settings,
    )
    return StepRequest(request, messages, thread_tasks)


async def _instructions(agent: Agent, step_input: ModelStepInput) -> str:
    """The agent's instructions for the run's mode, the run's extra instructions, and how to read the task list."""
    options = step_input.options
    instructions = await agent.resolve_instructions(options.request_context, step_input.mode)
    if options.extra_instructions:
        instructions = "\n\n".join(part for part in (instructions, options.extra_instructions) if part)
    if agent.projects_tasks:
        instructions = "\n\n".join(part for part in (instructions, TASK_STATE_SYSTEM_MESSAGE) if part)
    return instructions


async def _state_signals(
    store: Store, agent: Agent, step_input: ModelStepInput
) -> tuple[list[str], list[TaskItem] | None]:
    """The workflow's state signals, with the thread's task list on a run's first step (and that task list)."""
    state_signals = list(step_input.state_signals)
    memory = step_input.options.memory
    if not (step_input.new_messages and memory is not None and agent.uses_task_tools):
        return state_signals, None
    stored = await store.get_thread_state(memory.thread, TASKS_STATE_TYPE)
    thread_tasks = [TaskItem.model_validate(item) for item in stored or []]
    signal, _ = compute_task_signal(None, thread_tasks)
    if agent.projects_tasks and signal is not None:
        state_signals.append(signal.render())
    return state_signals, thread_tasks


def check_web_search(model: Model, request: ModelRequest) -> None:
    """Refuse a request that offers web search to a provider without a native one."""
    provider = base_provider(model.provider)
    wants_search = any(tool.kind == "web_search" for tool in request.tools)
    if wants_search and provider not in SUPPORTED_PROVIDERS and provider != "openai-compatible":
        raise web_search_unsupported(model.provider)
