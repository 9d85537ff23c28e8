"""The Temporal plugin: registers tempo-agents' workflow, activities, converter and sandbox rules."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.plugin import SimplePlugin
from temporalio.worker import WorkerConfig
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from tempo_agents.activities.agent_activities import AgentActivities
from tempo_agents.workflows.agent_run import AgentRunWorkflow

if TYPE_CHECKING:
    from tempo_agents.activities.handoff import CallHandoff
    from tempo_agents.agent.registry import Registry

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


def sandbox_runner() -> SandboxedWorkflowRunner:
    """The sandboxed runner with tempo-agents' pure modules passed through."""
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH_MODULES)
    )


class TempoAgentsPlugin(SimplePlugin):
    """Add this to a Temporal ``Worker`` (or ``Client``) to run an App's agents.

    Workers built from a client that has the plugin get it too; a ``Replayer`` needs it passed
    explicitly, and needs no registry.
    """

    def __init__(self, registry: Registry | None = None, *, handoff: CallHandoff | None = None) -> None:
        activities = AgentActivities(registry, handoff).all() if registry is not None else None
        workflow_tools = registry.workflow_classes if registry is not None else []
        super().__init__(
            "tempo_agents.TempoAgentsPlugin",
            data_converter=pydantic_data_converter,
            activities=activities,
            workflows=[AgentRunWorkflow, *workflow_tools],
            workflow_runner=sandbox_runner(),
        )

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        """Unless the worker was given its own values: send activity heartbeats promptly, so a cancelled
        run reaches its running tools within seconds; and give up on a lost worker's sticky queue after
        two seconds, so a run whose worker died goes on elsewhere without waiting ten."""
        config = super().configure_worker(config)
        if config.get("max_heartbeat_throttle_interval") == _SDK_DEFAULT_THROTTLE:
            config["max_heartbeat_throttle_interval"] = HEARTBEAT_THROTTLE
        if config.get("sticky_queue_schedule_to_start_timeout") == _SDK_DEFAULT_STICKY_TIMEOUT:
            config["sticky_queue_schedule_to_start_timeout"] = STICKY_QUEUE_TIMEOUT
        return config
