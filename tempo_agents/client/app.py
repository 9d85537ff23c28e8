"""App: the registry of agents, tools and hooks, and the way clients start and follow runs."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowQueryFailedError
from temporalio.common import SearchAttributePair, TypedSearchAttributes
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode, TLSConfig
from temporalio.worker import Worker

from tempo_agents.activities.registry import Registry
from tempo_agents.agent.agent import Agent
from tempo_agents.agent.hooks import ToolHooks
from tempo_agents.agent.local_activities import workflow_task_timeout
from tempo_agents.agent.suspended_runs import SuspendedRun, SuspendedRuns, SuspendedToolCall
from tempo_agents.approvals.approvers import ApproverPolicy
from tempo_agents.approvals.policy import ApprovalPolicy
from tempo_agents.budgets.limits import Budget, merge_budgets
from tempo_agents.budgets.prices import ModelPrice, PriceTable
from tempo_agents.client.budget_usage import BudgetUsage, read_usage, run_usage, send_budget_answer
from tempo_agents.client.forking import FORK_MEMO, Reuse, forks_query, plan_fork
from tempo_agents.client.resume import ANSWER_METHODS, send_resume, stream_after
from tempo_agents.client.run_control import RollbackResult, interrupt_run, rollback_run, steer_run
from tempo_agents.client.run_queries import RunQueries
from tempo_agents.client.waiting_runs import waiting_page
from tempo_agents.errors import ConfigurationError, RunNotFoundError, ThreadBusyError
from tempo_agents.file_agents import load_agents
from tempo_agents.forks.compare import compare_runs
from tempo_agents.ingress.events import EventRun, EventTemplate, receive_event, receive_source_event
from tempo_agents.ingress.webhook_sources import WebhookSource
from tempo_agents.journal.start_chunk import journal_start
from tempo_agents.models.messages import Message, MessageInput, normalize_messages
from tempo_agents.models.model import Model
from tempo_agents.notifications.channels import NotificationSettings
from tempo_agents.schedules.handles import AgentSchedule, ScheduleView, create_schedule, list_schedules
from tempo_agents.store.base import Store
from tempo_agents.streams.stream import AgentStream, Follow, GenerateResult, RunClosedProbe
from tempo_agents.threads.operations import ThreadSnapshot, cancel_queued, read_thread, send_to_thread, thread_view
from tempo_agents.tools.tool import Tool
from tempo_agents.worker.plugin import TempoAgentsPlugin
from tempo_agents.workflows import search_attributes
from tempo_agents.workflows.activity_names import AGENT_RUN_WORKFLOW
from tempo_agents.workflows.agent_run import AgentRunWorkflow
from tempo_agents.workflows.payloads import BudgetAnswer, PendingCall, ResumeRequest, RunInput, RunOptions
from tempo_agents.workflows.steering import SteerAccepted
from tempo_agents.workflows.thread_payloads import (
    DEFAULT_THREAD_STRATEGY,
    THREAD_STRATEGIES,
    ThreadRun,
    ThreadStrategy,
)

if TYPE_CHECKING:
    from tempo_agents.approvals.answer_links import AnswerLinks

DEFAULT_TASK_QUEUE = "tempo-agents"
THREAD_STRATEGY_OPTION = "thread_strategy"
"""The run option naming what a message does when its thread has an active run (``ThreadStrategy``)."""
PENDING_SETTLE_SECONDS = 5.0
"""How long :meth:`App.pending` waits for running calls to settle when nothing is pending yet."""
EAGER_STARTS_IN_FLIGHT = 2
"""Starts from one App ask for eager execution while fewer than this many are in flight. An eager start hands the
run's first workflow task back in the start's own answer, to a worker of this process: the fastest start when
starts are few (one round trip, no dispatch through the task queue). When many overlap, each eager answer is
slower to come back (start RPC p95 89 ms against 58 ms at 20 clients, ``bench/vs_reference.py``), so the rest
go through the task queue: the first chunk of a run under load comes about a third sooner."""


def _seconds(timeout: timedelta | None) -> float | None:
    return None if timeout is None else timeout.total_seconds()


class App:
    """The client façade: a :class:`Registry` (what workers look up) and a Temporal client (how runs
    are started, resumed and followed).

    Run options that carry code cannot travel from a client to a worker, so hooks and approval
    policies are registered here by name (``App(hooks={"audit": ToolHooks(...)})``) and a run names
    them (``hooks="audit"``, ``require_tool_approval="risky-only"``).

    ``event_secrets`` (agent id or ``"*"`` → Standard Webhooks secret) and ``event_templates`` (name → function of
    the payload) let other systems start runs with webhooks (:meth:`receive_event`, ``POST /api/agents/:id/events``).

    ``approver_policies`` (name → function of an :class:`ApprovalRequest` returning principals and ``group:<name>``s)
    assign waiting calls of tools and agents whose ``approvers=`` names them; ``groups`` (principal → group names)
    says who belongs to which group; ``answer_links`` signs one-click answer URLs (:class:`AnswerLinks`).

    ``budget`` limits tokens and cost of every run (:class:`Budget`; an agent's ``default_options["budget"]`` and a
    run's ``budget`` option win over it, limit by limit); ``prices`` are the price table's (:class:`PriceTable`, or
    model id → :class:`ModelPrice`; default: the published prices, with ``$TEMPO_AGENTS_PRICES``'s file over them).

    ``waiting_holds_thread=True`` keeps a thread's run that waits only for people its thread's active run (later
    messages queue behind it or are refused, as their strategy says); by default it yields the thread and goes on as
    the thread's next run once answered (README, "Threads"). An agent's ``default_options`` and a run's option win.

    ``webhook_sources`` are senders configured by name, each with its route ``POST /api/events/{name}``, its
    agent, its verification (Standard Webhooks secrets or a shared token in a header) and its template
    (:class:`WebhookSource`, :meth:`receive_source_event`).

    ``notifications`` (channels: webhooks, Slack-compatible incoming webhooks, email) sends the runs' events
    durably (README, "Notifications"); ``answer_links`` makes the one-click answer URLs a waiting event carries.

    ``store`` is a URL (``sqlite:///path.db``, ``postgresql://user:password@host/db``) or a :class:`Store`;
    without one, ``$TEMPO_AGENTS_STORE`` or ``sqlite:///.tempo-agents/store.db``.
    """

    def __init__(
        self,
        *,
        agents: Sequence[Agent] = (),
        tools: Mapping[str, Tool] | Sequence[Tool] = (),
        hooks: Mapping[str, ToolHooks | Mapping[str, Any]] | None = None,
        approval_policies: Mapping[str, ApprovalPolicy] | None = None,
        store: str | Store | None = None,
        task_queue: str = DEFAULT_TASK_QUEUE,
        client: Client | None = None,
        event_templates: Mapping[str, EventTemplate] | None = None,
        event_secrets: Mapping[str, str | list[str]] | None = None,
        webhook_sources: Sequence[WebhookSource] = (),
        budget: Budget | Mapping[str, Any] | None = None,
        prices: PriceTable | Mapping[str, ModelPrice | Mapping[str, Any]] | None = None,
        notifications: NotificationSettings | None = None,
        approver_policies: Mapping[str, ApproverPolicy] | None = None,
        groups: Mapping[str, Sequence[str]] | None = None,
        answer_links: AnswerLinks | None = None,
        waiting_holds_thread: bool = False,
    ) -> None:
        self.registry = Registry(
            agents=agents,
            tools=tools,
            hooks=hooks,
            approval_policies=approval_policies,
            store=store,
            prices=prices,
            notifications=notifications,
            answer_links=answer_links,
            approver_policies=approver_policies,
        )
        self.budget = None if budget is None else Budget.model_validate(budget)
        """The budget of every run of this App, under the agent's ``default_options["budget"]`` and the run's."""
        self.waiting_holds_thread = waiting_holds_thread
        """Whether a thread's run that waits only for people keeps its thread (under the agent's and the run's
        ``waiting_holds_thread``)."""
        self.groups: dict[str, list[str]] = {name: list(names) for name, names in (groups or {}).items()}
        """The groups each principal belongs to (principal → group names): answers under a principal carry its
        groups, and calls assigned to ``group:<name>`` accept them. The HTTP server adds its tokens file's."""
        self.answer_links = answer_links
        """Signs and checks one-click answer links (``None``: no links)."""
        for agent in self.registry.agents:
            agent._bind(self)
        self.task_queue = task_queue
        self.event_templates: Mapping[str, EventTemplate] = dict(event_templates or {})
        """Event templates by name: each renders a webhook's JSON payload into a run's message."""
        self.event_secrets: Mapping[str, str | list[str]] = dict(event_secrets or {})
        """Webhook secrets by agent id (``"*"``: every agent's; a delivery signed only with it names its agent in its
        body, ``"agentId"``); an agent with none takes no events."""
        self.webhook_sources: dict[str, WebhookSource] = {}
        """The configured webhook sources by name (:meth:`add_webhook_sources`)."""
        self.add_webhook_sources(webhook_sources)
        self._client: Client | None = None
        self._starting = 0  # starts in flight from this App, see EAGER_STARTS_IN_FLIGHT
        if client is not None:
            self.use_client(client)

    @classmethod
    def from_directory(
        cls,
        path: str | os.PathLike[str],
        *,
        default_model: Model | str | None = None,
        on_warn: Callable[[str], None] | None = None,
        **options: Any,
    ) -> App:
        """An App of the file-based agents under ``path/agents/`` (``config.py``, ``instructions.md``, ``tools/``,
        ``subagents/``); ``options`` are the other arguments of ``App(...)``. Warnings go to ``on_warn``, else to
        the ``tempo_agents.file_agents`` logger. Files are read once: a change needs a restart of the worker."""
        agents = load_agents(path, default_model=default_model, on_warn=on_warn)
        return cls(agents=[*agents, *options.pop("agents", ())], **options)

    # Registry lookups -----------------------------------------------------------------------

    def agent(self, agent_id: str) -> Agent:
        """The registered agent with this id."""
        return self.registry.agent(agent_id)

    @property
    def agents(self) -> list[Agent]:
        return self.registry.agents

    def tool(self, tool_id: str) -> Tool:
        """A tool by its id, from the App's tools and its agents' tools."""
        return self.registry.tool(tool_id)

    @property
    def tools(self) -> dict[str, Tool]:
        return self.registry.tools

    @property
    def store(self) -> Store:
        """The store (opened on first use)."""
        return self.registry.store

    # Temporal -------------------------------------------------------------------------------

    def use_client(self, client: Client) -> None:
        """Use this Temporal client; it is given the pydantic data converter the runs need."""
        if client.data_converter is not pydantic_data_converter:
            config = client.config()
            config["data_converter"] = pydantic_data_converter
            client = Client(**config)
        self._client = client

    async def connect(
        self,
        address: str = "localhost:7233",
        *,
        namespace: str = "default",
        tls: bool | TLSConfig | None = None,
        api_key: str | None = None,
    ) -> Client:
        """Connect to a Temporal server and use that client. ``tls``: ``True`` (system roots), a ``TLSConfig``
        (mTLS client certificate, private CA), or ``None``: TLS exactly when an ``api_key`` is given (Temporal
        Cloud)."""
        client = await Client.connect(
            address, namespace=namespace, tls=tls, api_key=api_key, data_converter=pydantic_data_converter
        )
        self.use_client(client)
        return self.client

    @property
    def client(self) -> Client:
        if self._client is None:
            raise ConfigurationError(
                "this App has no Temporal client: call await app.connect(address) or app.use_client(client) first"
            )
        return self._client

    def plugin(self, *, sandboxed_runs: bool | None = None) -> TempoAgentsPlugin:
        """The Temporal plugin that registers this App's workflow and activities on a worker
        (``sandboxed_runs``: see :class:`TempoAgentsPlugin`)."""
        return TempoAgentsPlugin.for_app(self, sandboxed_runs=sandboxed_runs)

    def worker(
        self, client: Client | None = None, *, sandboxed_runs: bool | None = None, **worker_options: Any
    ) -> Worker:
        """A Temporal worker for this App's task queue (run it with ``async with`` or ``await worker.run()``).

        ``sandboxed_runs=True`` runs agent runs inside Temporal's sandbox (slower; :class:`TempoAgentsPlugin`).
        """
        worker_options.setdefault("task_queue", self.task_queue)
        plugins = [self.plugin(sandboxed_runs=sandboxed_runs), *worker_options.pop("plugins", [])]
        return Worker(client or self.client, plugins=plugins, **worker_options)

    # Runs -----------------------------------------------------------------------------------

    def build_options(self, agent: Agent, options: Mapping[str, Any]) -> tuple[RunOptions, str]:
        """Merge the agent's default options under the call's options and check them."""
        merged: dict[str, Any] = dict(agent.default_options)
        if self.waiting_holds_thread:
            merged.setdefault("waiting_holds_thread", True)
        for key, value in options.items():
            if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
        run_id = merged.pop("run_id", None) or str(uuid.uuid4())
        budget = merge_budgets(self.budget, agent.default_options.get("budget"), options.get("budget"))
        if budget is not None:
            merged["budget"] = budget
        hooks = merged.get("hooks")
        if hooks is not None and not isinstance(hooks, str):
            raise ConfigurationError(
                "run option hooks must be the name of hooks registered on the App "
                "(App(hooks={'name': ToolHooks(...)}), then hooks='name'): code cannot travel from a client "
                f"to a worker, got {type(hooks).__name__}"
            )
        if hooks is not None:
            self.registry.run_hooks(hooks)
        approval = merged.get("require_tool_approval")
        if approval is not None and not isinstance(approval, (bool, str)):
            raise ConfigurationError(
                "run option require_tool_approval must be True/False or the name of an approval policy registered "
                "on the App (App(approval_policies={'name': predicate})): code cannot travel from a client to a "
                f"worker, got {type(approval).__name__}"
            )
        if isinstance(approval, str):
            self.registry.approval_policy(approval)
        if agent.modes:
            merged["mode"] = merged.get("mode") or agent.default_mode
            agent.mode(merged["mode"])
        elif merged.get("mode") is not None:
            raise ConfigurationError(
                f'agent "{agent.id}" declares no modes, so a run cannot start in mode "{merged["mode"]}"'
            )
        strategy = merged.pop(THREAD_STRATEGY_OPTION, None)
        if strategy is not None and strategy not in THREAD_STRATEGIES:
            raise ConfigurationError(
                f'run option thread_strategy must be one of {", ".join(THREAD_STRATEGIES)}, got "{strategy}"'
            )
        if merged.get("auto_resume_suspended_tools") and merged.get("memory") is None:
            raise ConfigurationError(
                'auto_resume_suspended_tools needs memory: pass memory={"thread": ..., "resource": ...}'
            )

        unknown = set(merged) - set(RunOptions.model_fields)
        if unknown:
            raise ConfigurationError(f"unknown run option(s): {', '.join(sorted(unknown))}")
        return RunOptions.model_validate(merged), str(run_id)

    def prepare_run(
        self, agent: Agent, messages: MessageInput, options: Mapping[str, Any]
    ) -> tuple[RunInput, list[SearchAttributePair[str]]]:
        """The input of a run of ``agent`` and the search attributes it starts with (options merged and checked)."""
        run_options, run_id = self.build_options(agent, options)
        run_input = RunInput(
            run_id=run_id,
            agent_id=agent.id,
            messages=normalize_messages(messages),
            options=run_options,
            model_step_activity=agent.model_step_activity,
        )
        attributes = [
            SearchAttributePair(search_attributes.STATUS, "running"),
            SearchAttributePair(search_attributes.AGENT_ID, agent.id),
        ]
        if run_options.memory is not None:
            attributes += [
                SearchAttributePair(search_attributes.THREAD_ID, run_options.memory.thread),
                SearchAttributePair(search_attributes.RESOURCE_ID, run_options.memory.resource),
            ]
        if run_options.fork is not None:
            attributes.append(SearchAttributePair(search_attributes.FORK_OF, run_options.fork.run_id))
        return run_input, attributes

    async def stream(
        self, agent_id: str, messages: MessageInput, *, sent_by: str | None = None, **options: Any
    ) -> AgentStream:
        """Start a run of an agent as a workflow and return its stream.

        A run with ``memory`` goes through its thread's workflow, which keeps one run active per thread:
        ``thread_strategy`` (``enqueue`` by default, ``reject``, ``interrupt``, ``rollback``, ``steer``) says what
        the message does when another run holds the thread (README, "Threads"); ``stream.thread_outcome`` tells what
        happened, and ``reject`` raises :class:`ThreadBusyError` naming the active run. ``sent_by`` names the sender
        of a steered message.
        """
        return await self._start_run(self.agent(agent_id), messages, options, sent_by)

    async def fork(
        self,
        run_id: str,
        /,
        *,
        at_step: int | None = None,
        messages: MessageInput | None = None,
        replace_input: MessageInput | None = None,
        agent_id: str | None = None,
        reuse: Reuse = "none",
        rerun: Sequence[str] = (),
        **options: Any,
    ) -> AgentStream:
        """Start a new run from ``run_id``'s transcript before model step ``at_step`` (default: the last step whose
        calls all ended) and return its stream. The original run is only read, never changed.

        ``messages`` are added after the copied steps, ``replace_input`` stands for the messages the original
        started with; ``agent_id`` runs the fork on another registered agent (another model, instructions, tools);
        ``options`` replace the original's run options (its memory thread is not used unless ``memory`` is given;
        ``run_id=`` names the fork).
        ``reuse="tools"`` answers a call whose tool and exact arguments match a call of the original from that
        call's outcome, without running the tool (``data-tool-reused`` in the journal); ``rerun`` names tools that
        run anyway. The fork names its origin in its ``start`` chunk (``forkOf``), its memo and the
        ``TempoAgentForkOf`` search attribute.
        """
        plan = await plan_fork(
            self.client,
            self.store,
            run_id,
            at_step=at_step,
            messages=messages,
            replace_input=replace_input,
            agent_id=agent_id,
            reuse=reuse,
            rerun=rerun,
            options=options,
        )
        return await self._start_run(self.agent(plan.agent_id), plan.messages, plan.options)

    async def retry(self, run_id: str, /, **options: Any) -> AgentStream:
        """Run ``run_id`` again from its last good step (the last step whose calls all ended) with the same inputs:
        a fork (:meth:`fork`, whose other arguments apply), linked to it. For a run that failed before a fix."""
        return await self.fork(run_id, at_step=None, **options)

    async def list_forks(self, run_id: str) -> list[str]:
        """The ids of the runs forked from ``run_id`` (visibility: ``TempoAgentForkOf``), newest first."""
        return [execution.id async for execution in self.client.list_workflows(forks_query(self.task_queue, run_id))]

    async def fork_origin(self, run_id: str) -> dict[str, Any] | None:
        """Where ``run_id`` was forked from (``{"runId", "step"}``, from its memo), or ``None``."""
        description = await self.client.get_workflow_handle(run_id).describe()
        origin = (await description.memo()).get(FORK_MEMO)
        return origin if isinstance(origin, dict) else None

    async def compare(self, a: str, b: str) -> dict[str, Any]:
        """Runs ``a`` and ``b`` side by side: their conversations aligned by model step (``steps``, each ``same`` or
        not, with its tool calls and arguments diffed), ``firstDifferentStep``, and per run its usage, steps,
        duration (``durationMs``, ``None`` while it runs) and origin (``forkOf``)."""
        compared = await compare_runs(self.store, a, b)
        for side, run_id in (("a", a), ("b", b)):
            try:
                description = await self.client.get_workflow_handle(run_id).describe()
            except RPCError as error:
                if error.status == RPCStatusCode.NOT_FOUND:
                    raise RunNotFoundError(f'no run "{run_id}" exists') from error
                raise
            started, closed = description.start_time, description.close_time
            origin = (await description.memo()).get(FORK_MEMO)
            compared[side].update(
                startedAt=started.isoformat() if started else None,
                closedAt=closed.isoformat() if closed else None,
                durationMs=round((closed - started).total_seconds() * 1000) if started and closed else None,
                forkOf=origin if isinstance(origin, dict) else None,
            )
        return compared

    async def _start_run(
        self, agent: Agent, messages: MessageInput, options: Mapping[str, Any], sent_by: str | None = None
    ) -> AgentStream:
        run_input, attributes = self.prepare_run(agent, messages, options)
        run_id = run_input.run_id
        fork = run_input.options.fork
        fork_of = None if fork is None else (fork.run_id, fork.step)
        memo = {} if fork is None else {FORK_MEMO: {"runId": fork.run_id, "step": fork.step}}
        if run_input.options.memory is not None:
            strategy = options.get(THREAD_STRATEGY_OPTION) or agent.default_options.get(THREAD_STRATEGY_OPTION)
            run = ThreadRun(
                run_input=run_input,
                task_queue=self.task_queue,
                search_attributes={pair.key.name: pair.value for pair in attributes},
                task_timeout_seconds=_seconds(workflow_task_timeout(agent)),
                memo=memo,
            )
            return await self._send_to_thread(run, strategy or DEFAULT_THREAD_STRATEGY, sent_by, fork_of)
        start_run = self._start_workflow(run_input, attributes, workflow_task_timeout(agent), memo)
        if options.get("run_id") or agent.default_options.get("run_id"):
            # A run id chosen by the caller may be taken: journal nothing until the run exists.
            await start_run
            start = await journal_start(self.store, run_id, agent.id, fork_of)
        else:
            # A fresh id is nobody else's: the start chunk is written while the run starts (if it fails to start,
            # the chunk stays unseen: no one has the id), and the first chunk need not wait for both in turn.
            _, start = await asyncio.gather(start_run, journal_start(self.store, run_id, agent.id, fork_of))
        known = start if start is not None and start.offset == 0 else None  # the stream need not read it back
        return AgentStream(self.store, run_id, probe=self._run_closed_probe(run_id), known=known)

    async def _send_to_thread(
        self, run: ThreadRun, strategy: ThreadStrategy, sent_by: str | None, fork_of: tuple[str, int] | None
    ) -> AgentStream:
        """A run on a memory thread: its thread's workflow decides what the message does (ARCHITECTURE.md)."""
        outcome = await send_to_thread(self.client, self.task_queue, run, strategy, sent_by)
        memory = run.run_input.options.memory
        assert memory is not None
        if outcome.outcome == "rejected":
            raise ThreadBusyError(
                f'thread "{memory.thread}" has an active run "{outcome.active_run_id}"; nothing was started '
                "(thread_strategy reject)",
                active_run_id=outcome.active_run_id,
            )
        if outcome.outcome == "duplicate":
            raise WorkflowAlreadyStartedError(run.run_id, AGENT_RUN_WORKFLOW)
        known = None
        if outcome.outcome == "started":
            start = await journal_start(self.store, run.run_id, run.run_input.agent_id, fork_of)
            known = start if start is not None and start.offset == 0 else None
        offset = 0
        if outcome.outcome == "steered":
            offset = await self._journal_end(outcome.run_id)
        probe = self._thread_run_probe(outcome.run_id, memory.thread, memory.resource)
        stream = AgentStream(self.store, outcome.run_id, offset=offset, probe=probe, known=known)
        stream.thread_outcome = outcome
        return stream

    async def _journal_end(self, run_id: str) -> int:
        offset = 0
        while batch := await self.store.read_chunks(run_id, offset, 1000):
            offset = batch[-1].offset + 1
        return offset

    def _thread_run_probe(self, run_id: str, thread_id: str, resource_id: str) -> RunClosedProbe:
        """As :meth:`_run_closed_probe`, for a run its thread may still hold in its queue (no workflow yet)."""
        closed = self._run_closed_probe(run_id)

        async def probe() -> str | None:
            try:
                return await closed()
            except RunNotFoundError:
                view = await thread_view(self.client, self.task_queue, thread_id, resource_id)
                ended = [entry.status for entry in view.done if entry.run_id == run_id]
                return ended[-1] if ended else None

        return probe

    async def thread(self, thread_id: str, *, resource_id: str) -> ThreadSnapshot:
        """A memory thread as it stands: its runs (active, queued in the order they will run, done) and its messages
        in the order its runs wrote them."""
        return await read_thread(self.client, self.task_queue, self.store, thread_id, resource_id)

    async def cancel_queued_run(self, thread_id: str, run_id: str, *, resource_id: str) -> bool:
        """Take a queued run out of its thread's queue before it starts (its stream then ends); ``False`` when it is
        not queued there."""
        return await cancel_queued(self.client, self.task_queue, thread_id, resource_id, run_id)

    async def _start_workflow(
        self,
        run_input: RunInput,
        attributes: list[SearchAttributePair[str]],
        task_timeout: timedelta | None,
        memo: Mapping[str, Any] | None = None,
    ) -> None:
        eager = self._starting < EAGER_STARTS_IN_FLIGHT
        self._starting += 1
        try:
            await self.client.start_workflow(
                AgentRunWorkflow.run,
                run_input,
                id=run_input.run_id,
                task_queue=self.task_queue,
                search_attributes=TypedSearchAttributes(attributes),
                task_timeout=task_timeout,
                memo=dict(memo) if memo else None,
                request_eager_start=eager,
            )
        except RPCError as error:
            if error.status == RPCStatusCode.INVALID_ARGUMENT and "search attribute" in error.message.lower():
                names = ", ".join(key.name for key in search_attributes.ALL)
                raise ConfigurationError(
                    f"the Temporal namespace lacks tempo-agents' search attributes ({names}, all Keyword). "
                    "The embedded dev server registers them; on a cluster run for each: "
                    "temporal operator search-attribute create --name <name> --type Keyword"
                ) from error
            raise
        finally:
            self._starting -= 1

    async def generate(self, agent_id: str, messages: MessageInput, **options: Any) -> GenerateResult:
        """Start a run and wait for its result."""
        stream = await self.stream(agent_id, messages, **options)
        return await stream.result()

    async def answer(
        self,
        run_id: str,
        request: ResumeRequest,
        *,
        agent_id: str,
        idempotency_key: str | None = None,
        method: str | None = None,
    ) -> AgentStream:
        """Answer a waiting call of a run (resume, approve or decline, as ``request.action`` says); returns the
        resumed stream. Every way to answer goes through here: the methods below, ``Agent``'s, HTTP, the dashboard.

        The run must belong to ``agent_id``. Pass the same ``idempotency_key`` when retrying a request whose
        answer was lost: the run is resumed once and the retry gets the same answer. ``method`` names the caller
        in the texts of refused answers (by default the method of the action: ``resume_stream()`` ...).
        """
        agent = self.agent(agent_id)
        if request.answered_by is not None:
            groups = [*request.answered_by_groups]
            groups += [group for group in self.groups.get(request.answered_by, []) if group not in groups]
            request = request.model_copy(update={"answered_by_groups": groups})
        return await send_resume(
            self,
            run_id,
            request,
            agent_id=agent.id,
            agent_name=agent.name,
            method=method or ANSWER_METHODS.get(request.action, request.action),
            idempotency_key=idempotency_key,
        )

    async def resume_stream(
        self,
        agent_id: str,
        resume_data: Any,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        idempotency_key: str | None = None,
        answered_by: str | None = None,
    ) -> AgentStream:
        """Resume a suspended call of a run (the only one, or ``tool_call_id``); returns the resumed stream.

        Pass the same ``idempotency_key`` when retrying a request whose answer was lost: the run is
        resumed once and the retry gets the same answer. ``answered_by`` names who answers: it is kept
        in the run's history and shown as ``answeredBy`` on the chunk that ends the call.
        """
        request = ResumeRequest(action="resume", data=resume_data, tool_call_id=tool_call_id, answered_by=answered_by)
        return await self.answer(run_id, request, agent_id=agent_id, idempotency_key=idempotency_key)

    async def resume_generate(
        self,
        agent_id: str,
        resume_data: Any,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        idempotency_key: str | None = None,
        answered_by: str | None = None,
    ) -> GenerateResult:
        """Resume and wait until the run finishes or suspends again."""
        request = ResumeRequest(action="resume", data=resume_data, tool_call_id=tool_call_id, answered_by=answered_by)
        stream = await self.answer(
            run_id, request, agent_id=agent_id, idempotency_key=idempotency_key, method="resume_generate"
        )
        return await stream.result()

    async def approve_tool_call(
        self,
        agent_id: str,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        idempotency_key: str | None = None,
        answered_by: str | None = None,
        args: Any = None,
    ) -> AgentStream:
        """Approve a call waiting for approval: the tool runs with its original arguments, or with ``args`` (an
        approver's change, checked by the workflow against the tool's input schema; the journal records it)."""
        request = ResumeRequest(action="approve", tool_call_id=tool_call_id, answered_by=answered_by, args=args)
        return await self.answer(run_id, request, agent_id=agent_id, idempotency_key=idempotency_key)

    async def decline_tool_call(
        self,
        agent_id: str,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        reason: str | None = None,
        idempotency_key: str | None = None,
        answered_by: str | None = None,
    ) -> AgentStream:
        """Decline a call waiting for approval: it never runs; the model is told it was not approved."""
        request = ResumeRequest(action="decline", tool_call_id=tool_call_id, reason=reason, answered_by=answered_by)
        return await self.answer(run_id, request, agent_id=agent_id, idempotency_key=idempotency_key)

    async def signal_resume(
        self, run_id: str, resume_data: Any, *, tool_call_id: str | None = None, answered_by: str | None = None
    ) -> None:
        """Resume through a signal: fire-and-forget, for webhooks and other workflows.

        Nothing is reported back; a refused or invalid resume (one from someone the call is not assigned to too)
        is journaled as a ``data-error`` chunk and the run keeps waiting.
        """
        request = ResumeRequest(action="resume", data=resume_data, tool_call_id=tool_call_id, answered_by=answered_by)
        if answered_by is not None:
            request = request.model_copy(update={"answered_by_groups": self.groups.get(answered_by, [])})
        await self.client.get_workflow_handle(run_id).signal("resume", request)

    # Schedules ------------------------------------------------------------------------------

    async def schedule(
        self,
        agent_id: str,
        message: MessageInput,
        *,
        cron: str | None = None,
        every: str | timedelta | None = None,
        schedule_id: str | None = None,
        time_zone: str | None = None,
        jitter: str | timedelta | None = None,
        overlap: str = "skip",
        catchup_window: str | timedelta | None = None,
        paused: bool = False,
        note: str | None = None,
        **options: Any,
    ) -> AgentSchedule:
        """Run ``agent_id`` with ``message`` on a Temporal Schedule: ``cron="0 9 * * 1-5"`` or ``every="1h"``
        (``"30s"``, ``"1h30m"``, a ``timedelta``). Each run is an ordinary run with ``options`` (``memory``,
        ``max_steps``, ``budget`` ...) whose run id is ``<schedule id>-<scheduled time>`` (a trigger's:
        ``<schedule id>-<time>-<8 hex>``).

        ``time_zone`` (IANA name) is the cron's; ``jitter`` delays each run by up to that much; ``overlap``
        says what happens when a run is due while the last one has not closed (``skip``, ``buffer_one``,
        ``buffer_all``, ``cancel_other``, ``terminate_other``, ``allow_all``); ``catchup_window`` is how late
        a run missed while the Temporal server was down may still start. The schedule lives on the Temporal
        server: it survives restarts of workers, clients and the server itself."""
        return await create_schedule(
            self,
            agent_id,
            message,
            cron=cron,
            every=every,
            schedule_id=schedule_id,
            time_zone=time_zone,
            jitter=jitter,
            overlap=overlap,
            catchup_window=catchup_window,
            paused=paused,
            note=note,
            options=options,
        )

    def get_schedule(self, schedule_id: str) -> AgentSchedule:
        """A handle on an existing schedule (describe, update, pause, unpause, trigger, backfill, delete)."""
        return AgentSchedule(self, self.client.get_schedule_handle(schedule_id))

    async def update_schedule(self, schedule_id: str, **changes: Any) -> ScheduleView:
        """Change a schedule in place, keeping its recent runs (:meth:`AgentSchedule.update`: ``message``, ``cron``
        or ``every``, ``time_zone``, ``jitter``, ``overlap``, ``catchup_window``, ``note``, ``paused``, and run
        options such as ``memory``, ``max_steps`` or ``budget``)."""
        return await self.get_schedule(schedule_id).update(**changes)

    async def list_schedules(self) -> list[ScheduleView]:
        """This App's schedules (on its task queue), with their next and recent runs."""
        return await list_schedules(self)

    # Events ---------------------------------------------------------------------------------

    async def receive_event(
        self,
        agent_id: str,
        headers: Mapping[str, str],
        body: bytes,
        *,
        template: str | None = None,
        now: datetime | None = None,
        **options: Any,
    ) -> EventRun:
        """Start a run of ``agent_id`` from a webhook delivery signed the Standard Webhooks way (``headers``
        ``webhook-id``, ``webhook-timestamp``, ``webhook-signature``, by lower-case name) with one of the agent's
        ``event_secrets``. The JSON ``body`` is rendered into the message by the event template ``template`` (by
        default the one named like the agent; without one, the JSON text). The same ``webhook-id`` delivered again
        starts nothing and answers the first run (``duplicate=True``). ``options`` are run options; the run's
        thread and resource are the ones the signed body names (``"memory": {"thread": ..., "resource": ...}``),
        which a ``memory`` option may only repeat.

        Raises :class:`WebhookRefusedError` (``status`` 400 or 401) for a forged, too old or malformed delivery or
        one sent to another thread than it names, 422 for a payload the template cannot render."""
        return await receive_event(
            self,
            agent_id,
            {name.lower(): value for name, value in headers.items()},
            body,
            now=now or datetime.now(UTC),
            template=template,
            **options,
        )

    async def budget_usage(
        self,
        run_id: str | None = None,
        *,
        thread: str | None = None,
        resource: str | None = None,
        budget: Budget | Mapping[str, Any] | None = None,
        at: datetime | None = None,
    ) -> BudgetUsage:
        """Usage and remaining budget: of a run (its run, thread and resource counters, against its budget as
        raised so far), or of a ``thread``/``resource`` (against ``budget``, default the App's), for the UTC day
        and month of ``at`` (default now)."""
        if run_id is not None:
            return await run_usage(self.client, self.store, run_id)
        limits = self.budget if budget is None else Budget.model_validate(budget)
        return await read_usage(self.store, limits, run_id=None, thread=thread, resource=resource, at=at)

    async def answer_budget(
        self,
        run_id: str,
        *,
        budget: Budget | Mapping[str, Any] | None = None,
        end: bool = False,
        answered_by: str | None = None,
    ) -> AgentStream:
        """Answer a run that waits for its budget: ``budget`` becomes its budget and the step runs again, or
        ``end=True`` ends it (finish reason ``budget-exceeded``). Returns the stream from the answer on; raises
        :class:`BudgetRefusedError` when the run does not wait for its budget."""
        if end == (budget is not None):
            raise ConfigurationError("answer_budget needs either budget=... (raise it) or end=True")
        answer = BudgetAnswer(
            action="end" if end else "raise",
            budget=None if budget is None else Budget.model_validate(budget),
            answered_by=answered_by,
        )
        accepted = await send_budget_answer(self.client, run_id, answer)
        stream = await stream_after(self, run_id, accepted)
        assert stream is not None  # no limit on the attempts
        return stream

    def add_webhook_sources(self, sources: Sequence[WebhookSource]) -> None:
        """Configure more webhook sources (``serve --webhook-sources FILE`` calls this); each names an agent of
        the App and, if any, a registered event template. A name given twice is a ConfigurationError."""
        for source in sources:
            self.agent(source.agent)
            if source.template is not None and source.template not in self.event_templates:
                known = ", ".join(sorted(self.event_templates)) or "none"
                raise ConfigurationError(
                    f'webhook source "{source.name}" names the event template "{source.template}", which is not '
                    f"registered on the App (registered: {known})"
                )
            if source.name in self.webhook_sources:
                raise ConfigurationError(f'webhook source "{source.name}" is configured twice')
            self.webhook_sources[source.name] = source

    async def receive_source_event(
        self, source: str, headers: Mapping[str, str], body: bytes, *, now: datetime | None = None, **options: Any
    ) -> EventRun:
        """Start a run of the source's agent from one of its deliveries, verified as the source says, once per
        event id (``webhook-id``, else the source's ``event_id_field``): the same event again starts nothing and
        answers the first run (``duplicate=True``). Raises :class:`WebhookRefusedError` for a refused delivery
        and ConfigurationError for an unknown source."""
        configured = self.webhook_sources.get(source)
        if configured is None:
            raise ConfigurationError(f'no webhook source "{source}" is configured')
        return await receive_source_event(
            self,
            configured,
            {name.lower(): value for name, value in headers.items()},
            body,
            now=now or datetime.now(UTC),
            **options,
        )

    def queries(self, run_id: str) -> RunQueries:
        """The run's queries, typed (``await app.queries(run_id).pending()``)."""
        return RunQueries(self.client.get_workflow_handle(run_id))

    async def cancel_run(self, run_id: str) -> None:
        """Cancel a run: its running tools see ``ctx.cancelled``, the journal gets ``abort`` and a ``finish``
        with reason ``aborted``, and the workflow ends as cancelled."""
        await self.client.get_workflow_handle(run_id).cancel()

    async def steer(
        self, run_id: str, message: str | Message | dict[str, Any], *, sent_by: str | None = None
    ) -> SteerAccepted:
        """Deliver a user message into a running run, without starting a new one: the model sees it at the run's next
        model step (``status="delivered"``, ``step``), or, while the run waits for a person, at the step after the
        answer (``status="kept"``). The journal shows it as a ``data-user-message`` chunk naming ``sent_by``.

        Raises :class:`~tempo_agents.errors.RunFinishedError` when the run ends (or ended) without another model
        step: nothing was delivered; start a new run on the thread with the message instead."""
        (steered,) = normalize_messages(message)
        return await steer_run(self.client, run_id, steered, sent_by=sent_by)

    async def interrupt(self, run_id: str, *, by_run_id: str = "", requested_by: str | None = None) -> None:
        """Stop a run at its next step boundary, keeping what it did: it finishes with reason ``interrupted`` and
        saves its messages to its thread. A run waiting for a person stops at once (its waiting calls end with a
        tool error). ``by_run_id``: the run that asked (a thread's next run); ``requested_by``: the person. Raises
        :class:`~tempo_agents.errors.RunFinishedError` when the run has closed."""
        await interrupt_run(self.client, run_id, by_run_id=by_run_id, requested_by=requested_by)

    async def rollback(self, run_id: str) -> RollbackResult:
        """Cancel a run, wait until it has closed, and remove its messages from its memory thread: the next run on the
        thread does not see them. The journal is kept and ends with a ``data-rolled-back`` chunk."""
        return await rollback_run(self.client, self.store, run_id)

    async def pending(self, run_id: str, *, settle_seconds: float = PENDING_SETTLE_SECONDS) -> list[PendingCall]:
        """The calls a run waits on (its ``pending`` query).

        A call's suspension reaches the journal a moment before the workflow hears of it, so a caller who
        just saw it (``generate()`` returned ``suspended``) could find nothing pending yet: while the run
        reports calls still running and nothing pending, this asks again for up to ``settle_seconds``.
        """
        queries = self.queries(run_id)
        deadline = asyncio.get_running_loop().time() + settle_seconds
        while True:
            pending = await queries.pending()
            if pending or asyncio.get_running_loop().time() >= deadline:
                return pending
            try:
                running = await queries.calls_running()
            except WorkflowQueryFailedError:  # a run started before the query existed
                return pending
            if not running:  # the calls may have ended between the two queries: ask once more
                return await queries.pending()
            await asyncio.sleep(0.02)

    async def list_suspended_runs(
        self,
        *,
        thread_id: str | None = None,
        resource_id: str | None = None,
        agent_id: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> SuspendedRuns:
        """Runs of this App waiting for a person, the most recent suspension first, read from the store, which
        records a wait with the chunk that journals it (``waiting_runs.py``): a run is listed as soon as its
        suspension can be read. ``limit`` and ``offset`` page through them (the store reads only the page:
        with thousands waiting, a page costs what a page of a few does); ``total`` counts every one.

        Sub-agents' runs are left out: their waiting calls are listed on their top run, which is answered."""
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        if offset < 0:
            raise ValueError(f"offset must not be negative, not {offset}")
        page = await waiting_page(
            self.store,
            self.client,
            self.task_queue,
            agent_id=agent_id,
            thread_id=thread_id,
            resource_id=resource_id,
            limit=limit,
            skip=offset,
        )
        runs = [
            SuspendedRun(
                run_id=run.run_id,
                agent_id=run.agent_id,
                thread_id=run.thread_id,
                resource_id=run.resource_id,
                suspended_at=run.suspended_at,
                tool_calls=[
                    SuspendedToolCall(
                        tool_call_id=p.tool_call_id,
                        tool_name=p.tool_name,
                        args=p.args,
                        requires_approval=p.requires_approval,
                        suspend_payload=p.suspend_payload,
                    )
                    for p in run.calls
                ],
            )
            for run in page.runs
        ]
        return SuspendedRuns(runs=runs, total=page.total)

    def attach(self, run_id: str, *, offset: int = 0, follow: Follow = "segment") -> AgentStream:
        """Follow any run's journal from ``offset``; works from any process that can read the store.

        ``follow="segment"`` ends the stream at the next ``finish`` chunk (the run finished or now waits
        for a person); ``follow="run"`` follows the run across every suspension and resume until it ends.
        """
        probe = self._run_closed_probe(run_id) if self._client is not None else None
        return AgentStream(self.store, run_id, offset=offset, probe=probe, follow=follow)

    def _run_closed_probe(self, run_id: str) -> RunClosedProbe:
        async def probe() -> str | None:
            try:
                description = await self.client.get_workflow_handle(run_id).describe()
            except RPCError as error:
                if error.status == RPCStatusCode.NOT_FOUND:
                    raise RunNotFoundError(f'no run "{run_id}" exists') from error
                raise
            status = description.status
            if status in (None, WorkflowExecutionStatus.RUNNING, WorkflowExecutionStatus.CONTINUED_AS_NEW):
                return None
            return status.name

        return probe
