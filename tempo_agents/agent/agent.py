"""Agent: instructions, a model and tools. It runs through the App it is registered on."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

from tempo_agents.activity_options import ActivityOptions
from tempo_agents.agent.auto_resume import is_eligible, with_resume_fields
from tempo_agents.agent.delegation import DelegationHooks, sub_agent_tool
from tempo_agents.agent.hooks import ToolHooks
from tempo_agents.agent.modes import AgentMode, check_modes
from tempo_agents.agent.naming import sanitize_tool_names
from tempo_agents.agent.workflow_tools import WorkflowTool, workflow_tool
from tempo_agents.errors import ConfigurationError
from tempo_agents.models.messages import MessageInput
from tempo_agents.models.model import Model, ToolDefinition
from tempo_agents.signals import TaskSignalProvider
from tempo_agents.tools.tool import Tool, checked_approvers
from tempo_agents.tools.transform import ToolTransform, merge_transforms
from tempo_agents.tools.user_code import call_user_function
from tempo_agents.workflows.payloads import ResumeRequest

__all__ = ["Agent", "AgentRuns", "Instructions"]

if TYPE_CHECKING:
    from tempo_agents.streams import AgentStream, GenerateResult

Instructions: TypeAlias = str | Callable[[dict[str, Any]], str | Awaitable[str]]
"""A string, or a function of the run's request context returning one (resolved on the worker)."""


class AgentRuns(Protocol):
    """What an agent runs through: the App it is registered on starts its runs and answers their calls."""

    async def stream(self, agent_id: str, messages: MessageInput, **options: Any) -> AgentStream: ...

    async def answer(
        self,
        run_id: str,
        request: ResumeRequest,
        *,
        agent_id: str,
        idempotency_key: str | None = None,
        method: str | None = None,
    ) -> AgentStream: ...


class Agent:
    """An agent definition, which workers read. Register it on an :class:`App` to run it: the App starts its runs
    and answers their calls (the methods here name the agent and go through the App).

    ``tools`` maps the model-visible name (the key, sanitised to ``[a-zA-Z0-9_-]``) to a tool.
    ``default_options`` are run options merged under every call's options. ``suspend_expires_in``
    is the default deadline of suspensions and approvals of tools that set none; ``remind_every``,
    ``escalate_after`` and ``escalate_to`` the default reminders and escalation of their waits, and ``notify``
    the notification channels (by name) of its runs (README, "Notifications"). ``modes`` (with
    ``default_mode``, else the first) let a run move between instruction and tool sets.
    ``model_step_activity`` sets the timeouts and retries of its model steps.
    ``agents`` (sub-agents) and ``workflows`` (Temporal workflows) become the tools ``agent-<key>`` and
    ``workflow-<key>``, merged after ``tools`` (a later one overrides an earlier one of the same key);
    ``delegation`` holds the hooks around sub-agent calls. ``approvers`` assigns the waiting calls of tools that
    name none (principals, ``group:<name>``, or an approver policy's name registered on the App).
    """

    def __init__(
        self,
        *,
        id: str,
        model: Model | str,
        instructions: Instructions = "",
        name: str | None = None,
        description: str = "",
        tools: Mapping[str, Tool] | None = None,
        hooks: ToolHooks | Mapping[str, Any] | None = None,
        default_options: Mapping[str, Any] | None = None,
        suspend_expires_in: timedelta | None = None,
        notify: Sequence[str] | None = None,
        remind_every: timedelta | None = None,
        escalate_after: timedelta | None = None,
        escalate_to: Sequence[str] = (),
        modes: Sequence[AgentMode] = (),
        default_mode: str | None = None,
        signals: Sequence[TaskSignalProvider] = (),
        transform: ToolTransform | Mapping[str, Any] | None = None,
        model_step_activity: ActivityOptions | None = None,
        agents: Mapping[str, Agent] | None = None,
        workflows: Mapping[str, Any] | None = None,
        delegation: DelegationHooks | Mapping[str, Any] | None = None,
        approvers: Sequence[str] | str | None = None,
        answer_requires_sign_in: bool = False,
    ) -> None:
        if not isinstance(id, str) or not id:
            raise ConfigurationError("Agent() needs a non-empty string id")
        for key, tool in (tools or {}).items():
            if not isinstance(tool, Tool):
                raise ConfigurationError(
                    f'agent "{id}": tools["{key}"] is a {type(tool).__name__}, not a Tool; create it with create_tool()'
                )
        self.id = id
        self.name = name or id
        self.description = description
        self.instructions = instructions
        self.model = model
        signal_tools: dict[str, Tool] = {}
        for provider in signals:
            signal_tools.update(provider.tools())
        self.agents: dict[str, Agent] = dict(agents or {})
        """Sub-agents by key: the model sees each as the tool ``agent-<key>``."""
        self.workflows: dict[str, WorkflowTool] = {
            key: WorkflowTool.coerce(value, where=f'agent "{id}": workflows["{key}"]')
            for key, value in (workflows or {}).items()
        }
        """Workflows by key: the model sees each as the tool ``workflow-<key>``."""
        self.delegation = DelegationHooks.coerce(delegation, where=f'agent "{id}"')
        """Hooks around this agent's sub-agent calls."""
        self.tools: dict[str, Tool] = sanitize_tool_names({**signal_tools, **(tools or {}), **_child_tools(self)})
        self.projects_tasks = any(isinstance(provider, TaskSignalProvider) for provider in signals)
        """Whether the task list is shown to the model (a :class:`TaskSignalProvider` is attached)."""
        self.uses_task_tools = any(tool.workflow_operation is not None for tool in self.tools.values())
        self.transform = ToolTransform.coerce(transform, f'agent "{id}"')
        """The agent's transform policy: applies to every tool, each tool's own projections win."""
        self.model_step_activity = model_step_activity
        """Timeouts and retries of this agent's model steps (``None``: the defaults)."""

        self.hooks = ToolHooks.coerce(hooks, where=f'agent "{id}"')
        self.default_options: dict[str, Any] = dict(default_options or {})
        self.suspend_expires_in = suspend_expires_in
        self.notify = None if notify is None else list(notify)
        """The notification channels (by name) of this agent's runs (``None``: the App's default)."""
        self.remind_every = remind_every
        """The default interval of reminders of a waiting call of tools that set none."""
        self.escalate_after = escalate_after
        self.escalate_to = list(escalate_to)
        """The default escalation of a waiting call of tools that set none: after ``escalate_after`` it is
        re-addressed to ``escalate_to`` (principals or ``group:<name>``)."""
        self.approvers = checked_approvers(approvers, f'agent "{id}"')
        """Who may answer the waiting calls of tools that name no approvers (``None``: anyone), or the name of
        an approver policy registered on the App."""
        self.answer_requires_sign_in = answer_requires_sign_in
        """Whether waiting calls of tools that do not say are answered only by a signed-in person on the dashboard
        (their notifications' links open the dashboard instead of answering)."""
        check_modes(id, modes, default_mode, set(self.tools))
        self.modes: dict[str, AgentMode] = {mode.id: mode for mode in modes}
        self.default_mode = default_mode or (modes[0].id if modes else None)
        self._runs: AgentRuns | None = None

    def __repr__(self) -> str:
        return f"Agent(id={self.id!r})"

    def _bind(self, runs: AgentRuns) -> None:
        if self._runs is not None and self._runs is not runs:
            raise ConfigurationError(f'Agent "{self.id}" is already registered on another App')
        self._runs = runs

    def _runner(self) -> AgentRuns:
        if self._runs is None:
            raise ConfigurationError(
                f'Agent "{self.id}" is not registered on an App, so it cannot run: '
                f"create App(agents=[...]) with it and call app.agent({self.id!r}).stream(...)"
            )
        return self._runs

    # Conveniences: the App runs and answers; these name this agent. -------------------------

    async def stream(self, messages: MessageInput, **options: Any) -> AgentStream:
        """Start a run and return its stream at once; the run itself is a Temporal workflow."""
        return await self._runner().stream(self.id, messages, **options)

    async def generate(self, messages: MessageInput, **options: Any) -> GenerateResult:
        """Start a run and wait for its result."""
        return await (await self.stream(messages, **options)).result()

    async def answer(
        self, run_id: str, request: ResumeRequest, *, idempotency_key: str | None = None, method: str | None = None
    ) -> AgentStream:
        """Answer a waiting call of one of this agent's runs (``App.answer``)."""
        return await self._runner().answer(
            run_id, request, agent_id=self.id, idempotency_key=idempotency_key, method=method
        )

    async def resume_stream(
        self, resume_data: Any, *, run_id: str, tool_call_id: str | None = None, idempotency_key: str | None = None
    ) -> AgentStream:
        """Resume a suspended call of one of this agent's runs; returns the resumed stream.

        A retry of the same request passes the same ``idempotency_key`` and gets the first answer.
        """
        request = ResumeRequest(action="resume", data=resume_data, tool_call_id=tool_call_id)
        return await self.answer(run_id, request, idempotency_key=idempotency_key)

    async def resume_generate(
        self, resume_data: Any, *, run_id: str, tool_call_id: str | None = None
    ) -> GenerateResult:
        """Resume and wait until the run finishes or suspends again."""
        request = ResumeRequest(action="resume", data=resume_data, tool_call_id=tool_call_id)
        return await (await self.answer(run_id, request, method="resume_generate")).result()

    async def approve_tool_call(
        self, *, run_id: str, tool_call_id: str | None = None, args: Any = None, answered_by: str | None = None
    ) -> AgentStream:
        """Approve a call waiting for approval (``args``: run it with these arguments instead, checked against the
        tool's input schema)."""
        request = ResumeRequest(action="approve", tool_call_id=tool_call_id, args=args, answered_by=answered_by)
        return await self.answer(run_id, request)

    async def decline_tool_call(
        self, *, run_id: str, tool_call_id: str | None = None, reason: str | None = None
    ) -> AgentStream:
        """Decline a call waiting for approval."""
        return await self.answer(run_id, ResumeRequest(action="decline", tool_call_id=tool_call_id, reason=reason))

    async def approve_tool_call_generate(self, *, run_id: str, tool_call_id: str | None = None) -> GenerateResult:
        """Approve and wait until the run finishes or suspends again."""
        return await (await self.approve_tool_call(run_id=run_id, tool_call_id=tool_call_id)).result()

    async def decline_tool_call_generate(
        self, *, run_id: str, tool_call_id: str | None = None, reason: str | None = None
    ) -> GenerateResult:
        """Decline and wait until the run finishes or suspends again."""
        return await (await self.decline_tool_call(run_id=run_id, tool_call_id=tool_call_id, reason=reason)).result()

    def transform_for(self, tool_name: str) -> ToolTransform | None:
        """The projections that apply to a tool of this agent (the tool's, over the agent's policy)."""
        tool = self.tools.get(tool_name)
        return merge_transforms(self.transform, tool.transform if tool is not None else None)

    def answers_need_sign_in(self, tool_name: str) -> bool:
        """Whether a waiting call of this tool is answered only by a signed-in person (the tool's choice, over the
        agent's)."""
        tool = self.tools.get(tool_name)
        own = tool.answer_requires_sign_in if tool is not None else None
        return self.answer_requires_sign_in if own is None else own

    def mode(self, mode_id: str | None) -> AgentMode | None:
        """The mode with this id (``None`` for none); an unknown id raises."""
        if mode_id is None:
            return None
        try:
            return self.modes[mode_id]
        except KeyError:
            known = ", ".join(self.modes) or "none"
            raise ConfigurationError(f'agent "{self.id}" has no mode "{mode_id}" (modes: {known})') from None

    def next_mode(self, mode_id: str | None) -> str | None:
        """Where approving a plan leads from ``mode_id``: its ``transitions_to``, else the default mode."""
        mode = self.mode(mode_id)
        return (mode.transitions_to if mode else None) or self.default_mode

    async def resolve_instructions(self, request_context: dict[str, Any], mode_id: str | None = None) -> str:
        """The instructions for this run and mode (functions are called with the request context)."""
        parts = [await self._resolve(self.instructions, request_context)]
        mode = self.mode(mode_id)
        if mode is not None and mode.instructions is not None:
            parts.append(await self._resolve(mode.instructions, request_context))
        return "\n\n".join(part for part in parts if part)

    async def _resolve(self, instructions: Instructions, request_context: dict[str, Any]) -> str:
        if isinstance(instructions, str):
            return instructions
        resolved = await call_user_function(instructions, request_context)
        if not isinstance(resolved, str):
            raise ConfigurationError(
                f'agent "{self.id}": the instructions function returned {type(resolved).__name__}, not str'
            )
        return resolved

    def active_tool_names(self, active_tools: list[str] | None, mode_id: str | None = None) -> list[str]:
        """The tool names a run may use: all, limited by the mode's and the run's ``active_tools``."""
        mode = self.mode(mode_id)
        allowed = set(mode.active_tools) if mode is not None and mode.active_tools is not None else None
        return [
            name
            for name in self.tools
            if (active_tools is None or name in active_tools) and (allowed is None or name in allowed)
        ]

    def tool_definitions(
        self, active_tools: list[str] | None, *, auto_resume: bool = False, mode_id: str | None = None
    ) -> list[ToolDefinition]:
        """What the model is offered for this run (with the auto-resume fields when asked)."""
        definitions = []
        for name in self.active_tool_names(active_tools, mode_id):
            tool = self.tools[name]
            schema = tool.model_input_schema()
            if auto_resume and is_eligible(tool):
                schema = with_resume_fields(tool, schema)
            kind: Literal["function", "web_search"] = "web_search" if tool.provider_tool == "web_search" else "function"
            definitions.append(ToolDefinition(name=name, description=tool.description, input_schema=schema, kind=kind))
        return definitions


def _child_tools(parent: Agent) -> dict[str, Tool]:
    """``agent-<key>`` for every sub-agent, then ``workflow-<key>`` for every workflow (later keys win)."""
    tools: dict[str, Tool] = {
        f"agent-{key}": sub_agent_tool(key, agent, parent) for key, agent in parent.agents.items()
    }
    tools.update({f"workflow-{key}": workflow_tool(key, spec) for key, spec in parent.workflows.items()})
    return tools
