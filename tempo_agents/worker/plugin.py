"""The Temporal plugin: registers tempo-agents' workflow, activities, converter and sandbox rules."""

from __future__ import annotations

import os
from datetime import timedelta
from typing import TYPE_CHECKING, Protocol

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter
from temporalio.plugin import SimplePlugin
from temporalio.worker import ReplayerConfig, UnsandboxedWorkflowRunner, WorkerConfig
from temporalio.worker.workflow_sandbox import SandboxRestrictions

from tempo_agents.activities.agent_activities import AgentActivities
from tempo_agents.agent.auto_resume import SuspendedCallHandoff, SuspendedRunFinder
from tempo_agents.notifications import NotificationDeliveries, NotificationDeliveryWorkflow
from tempo_agents.retention import Retention, RetentionSweeper, sweeping
from tempo_agents.store.base import Store
from tempo_agents.worker.uninterrupted_runners import UninterruptedSandboxedRunner, UninterruptedUnsandboxedRunner
from tempo_agents.workflows.agent_run import AgentRunWorkflow
from tempo_agents.workflows.thread import ThreadWorkflow

__all__ = [
    "HEARTBEAT_THROTTLE",
    "PASSTHROUGH_MODULES",
    "SANDBOXED_RUNS_VARIABLE",
    "STICKY_QUEUE_TIMEOUT",
    "ServedApp",
    "TempoAgentsPlugin",
    "sandbox_runner",
]

if TYPE_CHECKING:
    from tempo_agents.activities.handoff import CallHandoff
    from tempo_agents.activities.registry import Registry

HEARTBEAT_THROTTLE = timedelta(seconds=1)
_SDK_DEFAULT_THROTTLE = timedelta(seconds=60)
STICKY_QUEUE_TIMEOUT = timedelta(seconds=2)
_SDK_DEFAULT_STICKY_TIMEOUT = timedelta(seconds=10)

PASSTHROUGH_MODULES = (
    "tempo_agents",
    "pydantic",
    "pydantic_core",
    "annotated_types",
    "typing_extensions",
    "jsonschema",
    "jsonschema_specifications",
    "referencing",
    "rpds",
    "attrs",
    "attr",
    "opentelemetry",
)
"""Imported once, outside the sandbox. Runtime restrictions on workflow code still apply. The
``jsonschema`` family validates resume data in the ``resume`` update's validator; ``opentelemetry`` is
used by Temporal's tracing interceptor in workflows (``tempo_agents.telemetry``)."""


SANDBOXED_RUNS_VARIABLE = "TEMPO_AGENTS_SANDBOXED_RUNS"
"""Set to ``1`` to run agent runs inside Temporal's sandbox (``TempoAgentsPlugin(sandboxed_runs=...)``)."""


class ServedApp(SuspendedRunFinder, Protocol):
    """What a worker needs of an App: the registry it looks things up in, its client (for hand-overs), and for its
    retention sweeper its store, task queue and retention."""

    @property
    def registry(self) -> Registry: ...

    @property
    def store(self) -> Store: ...

    @property
    def task_queue(self) -> str: ...

    @property
    def retention(self) -> Retention | None: ...

    @property
    def data_converter(self) -> DataConverter: ...


def sandbox_runner() -> UninterruptedSandboxedRunner:
    """The sandboxed runner with tempo-agents' pure modules passed through (tempo-agents' own workflows run
    uninterrupted: ``uninterrupted_runners``)."""
    return UninterruptedSandboxedRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH_MODULES)
    )


class TempoAgentsPlugin(SimplePlugin):
    """Add this to a Temporal ``Worker`` (or ``Client``) to run an App's agents.

    Workers built from a client that has the plugin get it too; a ``Replayer`` needs it passed
    explicitly, and needs no registry.

    ``sandboxed_runs``: run ``AgentRunWorkflow`` inside Temporal's sandbox, whose runtime restrictions turn a
    non-deterministic call in workflow code into an error; slower (about 15 % more worker CPU per step), and
    by default off, since the workflow is this package's code, replayed inside the sandbox by its tests.
    ``None`` reads ``TEMPO_AGENTS_SANDBOXED_RUNS`` (``1`` turns it on). Workflows of your own (workflow tools)
    keep the sandbox unless they were defined with ``sandboxed=False``; with ``sandboxed_runs`` those run in
    it too.

    ``data_converter``: the converter of the runs' payloads (the App's: pydantic's, with its encryption codec when
    it has keys); a ``Client`` or ``Replayer`` given the plugin uses it.
    """

    def __init__(
        self,
        registry: Registry | None = None,
        *,
        handoff: CallHandoff | None = None,
        sandboxed_runs: bool | None = None,
        sweeper: RetentionSweeper | None = None,
        data_converter: DataConverter = pydantic_data_converter,
    ) -> None:
        self.sandboxed_runs = (
            os.environ.get(SANDBOXED_RUNS_VARIABLE) == "1" if sandboxed_runs is None else sandboxed_runs
        )
        activities = AgentActivities(registry, handoff).all() if registry is not None else None
        workflow_tools = registry.workflow_classes if registry is not None else []
        notifier = registry.notifier if registry is not None else None
        if activities is not None and notifier is not None:  # the runs' events, delivered by a workflow of each run
            activities.append(NotificationDeliveries(notifier.settings).deliver)
            workflow_tools = [*workflow_tools, NotificationDeliveryWorkflow]
        super().__init__(
            "tempo_agents.TempoAgentsPlugin",
            data_converter=data_converter,
            activities=activities,
            workflows=[AgentRunWorkflow, ThreadWorkflow, *workflow_tools],
            workflow_runner=sandbox_runner(),
            run_context=None if sweeper is None else lambda: sweeping(sweeper),
        )

    @classmethod
    def for_app(cls, app: ServedApp, *, sandboxed_runs: bool | None = None) -> TempoAgentsPlugin:
        """The plugin that runs an App's agents: its registry, and hand-overs of suspended calls through its
        client (``app.plugin()`` is this), with the App's data converter and, when the App has a
        :class:`Retention`, its retention sweeper."""
        retention = app.retention
        sweeper = (
            RetentionSweeper(app.client, app.store, app.task_queue, retention)
            if retention is not None and retention.applies
            else None
        )
        return cls(
            app.registry,
            handoff=SuspendedCallHandoff(app),
            sandboxed_runs=sandboxed_runs,
            data_converter=app.data_converter,
            sweeper=sweeper,
        )

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        """Unless the worker was given its own values: send activity heartbeats promptly, so a cancelled
        run reaches its running tools within seconds; give up on a lost worker's sticky queue after
        two seconds, so a run whose worker died goes on elsewhere without waiting ten; and run the workflows defined
        outside the sandbox with ``unsandboxed_runner()``."""
        config = super().configure_worker(config)
        if config.get("max_heartbeat_throttle_interval") == _SDK_DEFAULT_THROTTLE:
            config["max_heartbeat_throttle_interval"] = HEARTBEAT_THROTTLE
        if config.get("sticky_queue_schedule_to_start_timeout") == _SDK_DEFAULT_STICKY_TIMEOUT:
            config["sticky_queue_schedule_to_start_timeout"] = STICKY_QUEUE_TIMEOUT
        if _is_stock_unsandboxed(config.get("unsandboxed_workflow_runner")):
            config["unsandboxed_workflow_runner"] = self.unsandboxed_runner()
        return config

    def configure_replayer(self, config: ReplayerConfig) -> ReplayerConfig:
        """As for a worker: with ``sandboxed_runs``, histories replay inside the sandbox."""
        config = super().configure_replayer(config)
        if _is_stock_unsandboxed(config.get("unsandboxed_workflow_runner")):
            config["unsandboxed_workflow_runner"] = self.unsandboxed_runner()
        return config

    def unsandboxed_runner(self) -> UninterruptedSandboxedRunner | UninterruptedUnsandboxedRunner:
        """The runner of workflows defined with ``sandboxed=False`` (agent runs among them): the sandbox with
        ``sandboxed_runs``, else none; either way tempo-agents' own workflows run uninterrupted
        (``uninterrupted_runners``)."""
        return sandbox_runner() if self.sandboxed_runs else UninterruptedUnsandboxedRunner()


def _is_stock_unsandboxed(runner: object) -> bool:
    """The SDK's default runner for workflows defined with ``sandboxed=False`` (absent or not replaced)."""
    return runner is None or type(runner) is UnsandboxedWorkflowRunner
