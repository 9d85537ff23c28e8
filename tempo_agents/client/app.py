"""App: the registry of agents, tools and hooks, and the way clients start and follow runs.

App is a front: its methods keep the names, signatures and docstrings the README documents and hand the work to the
focused modules beside it (starting runs: ``run_options``, ``run_starts``; following them: ``run_probes``;
answering: ``answers``, ``resume``; reading: ``run_queries``, ``waiting_runs``; forks: ``forking``, ``fork_reads``;
Temporal: ``temporal_setup``). Its schedule and event methods are those of :class:`ScheduleMethods` and
:class:`EventMethods`, which it inherits.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from temporalio.client import Client
from temporalio.common import SearchAttributePair
from temporalio.converter import DataConverter
from temporalio.service import TLSConfig
from temporalio.worker import Worker

from tempo_agents.activities.registry import Registry
from tempo_agents.agent.agent import Agent
from tempo_agents.agent.hooks import ToolHooks
from tempo_agents.agent.suspended_runs import SuspendedRuns
from tempo_agents.approvals import ApprovalPolicy, ApproverPolicy
from tempo_agents.budgets import Budget, ModelPrice, PriceTable
from tempo_agents.client.answers import answer_budget, answer_call, signal_answer
from tempo_agents.client.budget_usage import BudgetUsage, read_usage, run_usage
from tempo_agents.client.event_methods import EventMethods
from tempo_agents.client.fork_reads import compared_runs, fork_origin, forks_of
from tempo_agents.client.forking import Reuse, plan_fork
from tempo_agents.client.run_control import RollbackResult, interrupt_run, rollback_run, steer_run
from tempo_agents.client.run_options import THREAD_STRATEGY_OPTION, merged_run_options, run_start
from tempo_agents.client.run_probes import attached_run_probe
from tempo_agents.client.run_queries import RunQueries
from tempo_agents.client.run_starts import EAGER_STARTS_IN_FLIGHT, RunStarter
from tempo_agents.client.schedule_methods import ScheduleMethods
from tempo_agents.client.temporal_setup import app_worker, connect_runs_client, runs_client
from tempo_agents.client.waiting_runs import suspended_runs
from tempo_agents.encryption import Keyring, KeyringSource, configured_keys, runs_data_converter
from tempo_agents.erasure import ErasureReport, ErasureScope, erase_scope
from tempo_agents.errors import ConfigurationError
from tempo_agents.file_agents import load_agents
from tempo_agents.ingress import EventTemplate, WebhookSource
from tempo_agents.models.messages import Message, MessageInput, normalize_messages
from tempo_agents.models.model import Model
from tempo_agents.notifications import NotificationSettings
from tempo_agents.retention import Retention
from tempo_agents.store.base import Resources, Store
from tempo_agents.streams import AgentStream, Follow, GenerateResult
from tempo_agents.threads import QueuedRun, ThreadSnapshot, cancel_queued, expire_removed_run, queued_run, read_thread
from tempo_agents.tools.tool import Tool
from tempo_agents.worker.plugin import TempoAgentsPlugin
from tempo_agents.workflows.payloads import PendingCall, ResumeRequest, RunInput, RunOptions
from tempo_agents.workflows.steering import SteerAccepted

if TYPE_CHECKING:
    from tempo_agents.approvals import AnswerLinks

__all__ = ["DEFAULT_TASK_QUEUE", "EAGER_STARTS_IN_FLIGHT", "PENDING_SETTLE_SECONDS", "THREAD_STRATEGY_OPTION", "App"]

DEFAULT_TASK_QUEUE = "tempo-agents"
PENDING_SETTLE_SECONDS = 5.0
"""How long :meth:`App.pending` waits for running calls to settle when nothing is pending yet."""


class App(ScheduleMethods, EventMethods):
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

    ``retention`` says how long a closed run's journal, transcript, answers, notification records and thread
    messages are kept, for every run, per agent or per resource (:class:`Retention`); the App's workers sweep what
    expired (docs/data-protection.md). :meth:`erase` deletes everything of a resource, a thread or a run at once.

    ``store`` is a URL (``sqlite:///path.db``, ``postgresql://user:password@host/db``) or a :class:`Store`;
    without one, ``$TEMPO_AGENTS_STORE`` or ``sqlite:///.tempo-agents/store.db``.

    ``encryption_keys`` (a :class:`Keyring`, or a callable returning one, e.g. from a KMS) seal every payload the
    runs send through Temporal (docs/data-protection.md) and what a store opened from a URL keeps of runs
    (docs/store-encryption.md); without them, the keys of ``$TEMPO_AGENTS_ENCRYPTION_KEYS``, and none when that is
    unset.
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
        retention: Retention | None = None,
        encryption_keys: Keyring | KeyringSource | None = None,
    ) -> None:
        encryption_keys = configured_keys(encryption_keys)
        self.data_converter: DataConverter = runs_data_converter(encryption_keys)
        """The converter of the runs' payloads: pydantic's, sealing them when the App has encryption keys."""
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
            encryption_keys=encryption_keys,
            groups=groups,
        )
        self.budget = None if budget is None else Budget.model_validate(budget)
        """The budget of every run of this App, under the agent's ``default_options["budget"]`` and the run's."""
        self.waiting_holds_thread = waiting_holds_thread
        """Whether a thread's run that waits only for people keeps its thread (under the agent's and the run's
        ``waiting_holds_thread``)."""
        self.retention = retention
        """How long closed runs' records are kept (:class:`Retention`); the App's workers delete them once expired."""
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
        self._runs = RunStarter(self)
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
        """Use this Temporal client; it is given the data converter the runs need (:attr:`data_converter`)."""
        self._client = runs_client(client, self.data_converter)

    def use_encryption(self, keys: Keyring | KeyringSource | None) -> None:
        """Seal the runs' payloads under ``keys`` from now on (``None``: send them in clear); the client in use, if
        any, is given the new converter. Workers built afterwards use it too."""
        self.data_converter = runs_data_converter(keys)
        if self._client is not None:
            self._client = runs_client(self._client, self.data_converter)

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
        self.use_client(
            await connect_runs_client(
                address, namespace=namespace, tls=tls, api_key=api_key, data_converter=self.data_converter
            )
        )
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

        ``sandboxed_runs=True`` runs agent runs inside Temporal's sandbox (slower; :class:`TempoAgentsPlugin`). A
        ``client`` given is used with this App's data converter, so the worker seals what the App seals.
        """
        worker_client = runs_client(client, self.data_converter) if client is not None else self.client
        return app_worker(self.plugin(sandboxed_runs=sandboxed_runs), worker_client, self.task_queue, worker_options)

    # Runs -----------------------------------------------------------------------------------

    def build_options(self, agent: Agent, options: Mapping[str, Any]) -> tuple[RunOptions, str]:
        """Merge the agent's default options under the call's options and check them."""
        return merged_run_options(
            self.registry, agent, options, budget=self.budget, waiting_holds_thread=self.waiting_holds_thread
        )

    def prepare_run(
        self, agent: Agent, messages: MessageInput, options: Mapping[str, Any]
    ) -> tuple[RunInput, list[SearchAttributePair[str]]]:
        """The input of a run of ``agent`` and the search attributes it starts with (options merged and checked)."""
        run_options, run_id = self.build_options(agent, options)
        return run_start(agent, messages, run_options, run_id)

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
        return await self._runs.start(self.agent(agent_id), messages, options, sent_by)

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
        return await self._runs.start(self.agent(plan.agent_id), plan.messages, plan.options)

    async def retry(self, run_id: str, /, **options: Any) -> AgentStream:
        """Run ``run_id`` again from its last good step (the last step whose calls all ended) with the same inputs:
        a fork (:meth:`fork`, whose other arguments apply), linked to it. For a run that failed before a fix."""
        return await self.fork(run_id, at_step=None, **options)

    async def list_forks(self, run_id: str) -> list[str]:
        """The ids of the runs forked from ``run_id`` (visibility: ``TempoAgentForkOf``), newest first."""
        return await forks_of(self.client, self.task_queue, run_id)

    async def fork_origin(self, run_id: str) -> dict[str, Any] | None:
        """Where ``run_id`` was forked from (``{"runId", "step"}``, from its memo), or ``None``."""
        return await fork_origin(self.client, run_id)

    async def compare(self, a: str, b: str) -> dict[str, Any]:
        """Runs ``a`` and ``b`` side by side: their conversations aligned by model step (``steps``, each ``same`` or
        not, with its tool calls and arguments diffed), ``firstDifferentStep``, and per run its usage, steps,
        duration (``durationMs``, ``None`` while it runs) and origin (``forkOf``)."""
        return await compared_runs(self, a, b)

    async def thread(self, thread_id: str, *, resource_id: str) -> ThreadSnapshot:
        """A memory thread as it stands: its runs (active, queued in the order they will run, done) and its messages
        in the order its runs wrote them."""
        return await read_thread(self.client, self.task_queue, self.store, thread_id, resource_id)

    async def erase(
        self, *, resource: str | None = None, thread: str | None = None, run: str | None = None
    ) -> ErasureReport:
        """Erase everything of a ``resource``, of one ``thread`` (with its ``resource``) or of one ``run`` (with the
        sub-agent runs it started and its forks): its schedules are deleted, what still runs is terminated (the
        report names it), its rows leave the store and its executions leave Temporal. The report names what was done
        by id only; erasing again is harmless."""
        scope = ErasureScope(resource=resource, thread=thread, run=run)
        schedules = [] if run is not None else await self.list_schedules()

        async def delete_schedule(schedule_id: str) -> None:
            await self.get_schedule(schedule_id).delete()

        return await erase_scope(
            self.client, self.store, self.task_queue, scope, schedules=schedules, delete_schedule=delete_schedule
        )

    async def cancel_queued_run(self, thread_id: str, run_id: str, *, resource_id: str) -> bool:
        """Take a queued run out of its thread's queue before it starts (its stream then ends); ``False`` when it is
        not queued there. Under a :class:`Retention`, what the store keeps of it expires from now
        (:func:`expire_removed_run`)."""
        removed = await cancel_queued(self.client, self.task_queue, thread_id, resource_id, run_id)
        if removed and self.retention is not None:
            await expire_removed_run(self.client, self.store, self.retention, run_id, resource_id)
        return removed

    async def queued_run(self, run_id: str) -> QueuedRun | None:
        """A run that was queued on a thread, as its thread knows it now (it may have started since), ``None`` for a
        run that never was: how a run that has no workflow yet is found from its id alone."""
        return await queued_run(self.client, self.store, run_id)

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
        resumed stream. Every way to answer ends in the same function (``client/answers.py``, ``answer_call``): the
        methods below and ``Agent``'s through here, HTTP, the dashboard and answer links directly, with the call they
        already read.

        The run must belong to ``agent_id``. Pass the same ``idempotency_key`` when retrying a request whose
        answer was lost: the run is resumed once and the retry gets the same answer. ``method`` names the caller
        in the texts of refused answers (by default the method of the action: ``resume_stream()`` ...).
        """
        return await answer_call(
            self, run_id, request, agent_id=agent_id, idempotency_key=idempotency_key, method=method
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
        await signal_answer(self, run_id, resume_data, tool_call_id=tool_call_id, answered_by=answered_by)

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
        return await answer_budget(self, run_id, budget=budget, end=end, answered_by=answered_by)

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
        return await self.queries(run_id).settled_pending(settle_seconds)

    async def list_suspended_runs(
        self,
        *,
        thread_id: str | None = None,
        resource_id: Resources = None,
        agent_id: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> SuspendedRuns:
        """Runs of this App waiting for a person, the most recent suspension first, read from the store, which
        records a wait with the chunk that journals it (``waiting_runs.py``): a run is listed as soon as its
        suspension can be read. ``limit`` and ``offset`` page through them (the store reads only the page:
        with thousands waiting, a page costs what a page of a few does); ``total`` counts every one.

        Sub-agents' runs are left out: their waiting calls are listed on their top run, which is answered."""
        return await suspended_runs(
            self, agent_id=agent_id, thread_id=thread_id, resource_id=resource_id, limit=limit, offset=offset
        )

    def attach(self, run_id: str, *, offset: int = 0, follow: Follow = "segment") -> AgentStream:
        """Follow any run's journal from ``offset``; works from any process that can read the store.

        ``follow="segment"`` ends the stream at the next ``finish`` chunk (the run finished or now waits
        for a person); ``follow="run"`` follows the run across every suspension and resume until it ends. A run its
        thread still queues is followed too: the stream waits for its turn.
        """
        probe = attached_run_probe(self._client, self.store, run_id) if self._client is not None else None
        return AgentStream(self.store, run_id, offset=offset, probe=probe, follow=follow)
