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
    from tempo_agents.agent.app import App

HEARTBEAT_THROTTLE = timedelta(seconds=1)
_SDK_DEFAULT_THROTTLE = timedelta(seconds=60)

PASSTHROUGH_MODULES = ("tempo_agents", "pydantic", "pydantic_core", "annotated_types", "typing_extensions")
"""Imported once, outside the sandbox. Runtime restrictions on workflow code still apply."""


def sandbox_runner() -> SandboxedWorkflowRunner:
    """The sandboxed runner with tempo-agents' pure modules passed through."""
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*PASSTHROUGH_MODULES)
    )


class TempoAgentsPlugin(SimplePlugin):
    """Add this to a Temporal ``Worker`` (or ``Client``) to run an App's agents.

    Workers built from a client that has the plugin get it too; a ``Replayer`` needs it passed
    explicitly.
    """

    def __init__(self, app: App | None = None) -> None:
        activities = AgentActivities(app).all() if app is not None else None
        super().__init__(
            "tempo_agents.TempoAgentsPlugin",
            data_converter=pydantic_data_converter,
            activities=activities,
            workflows=[AgentRunWorkflow],
            workflow_runner=sandbox_runner(),
        )

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        """Also send activity heartbeats promptly (unless the worker was given its own throttle), so a
        cancelled run reaches its running tools within seconds."""
        config = super().configure_worker(config)
        if config.get("max_heartbeat_throttle_interval") == _SDK_DEFAULT_THROTTLE:
            config["max_heartbeat_throttle_interval"] = HEARTBEAT_THROTTLE
        return config
