"""tempo-agents: typed tools and durable agent runs, every run a Temporal workflow.

Everything an application uses is importable from here; the subpackages are the layout of the code (see
ARCHITECTURE.md), and names imported from them keep working. The MCP and telemetry names load their
subpackage on first use, so ``import tempo_agents`` stays cheap and needs no extra.
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from tempo_agents import deprecations
from tempo_agents.activity_options import ActivityOptions
from tempo_agents.agent import Agent, AgentMode, ToolCallHookContext, ToolHooks
from tempo_agents.agent.delegation import DelegationComplete, DelegationHooks, DelegationStart
from tempo_agents.agent.suspended_runs import SuspendedRun, SuspendedRuns, SuspendedToolCall
from tempo_agents.agent.workflow_tools import WorkflowTool
from tempo_agents.approvals import (
    AnswerLinks,
    ApprovalRequest,
    ApproverPolicy,
    Choice,
    approval_choices,
    option_choices,
)
from tempo_agents.budgets import Budget, BudgetLimits, ModelPrice, PeriodLimits, PriceTable
from tempo_agents.client import App
from tempo_agents.client.budget_usage import BudgetRefusedError, BudgetUsage
from tempo_agents.client.run_control import RollbackResult
from tempo_agents.client.run_queries import RunQueries
from tempo_agents.errors import (
    ConfigurationError,
    IdTooLongError,
    MessageTooLargeError,
    ModelError,
    ResumeError,
    ResumeValidationError,
    RunFinishedError,
    RunNotFoundError,
    StoreBusyError,
    StoreUnavailableError,
    SupersededStartError,
    TempoAgentsError,
    ThreadBusyError,
    ToolNameCollisionError,
    ToolNotFoundError,
)
from tempo_agents.file_agents import FileAgentError
from tempo_agents.ingress import (
    EventRun,
    WebhookRefusedError,
    WebhookSource,
    load_webhook_sources,
    sign_webhook,
    verify_webhook,
)
from tempo_agents.models import Model, ScriptedModel, ScriptedResponse, ScriptedToolCall, Usage
from tempo_agents.models.anthropic import anthropic
from tempo_agents.models.openai_compatible import local_model, openai_compatible
from tempo_agents.notifications import EmailChannel, NotificationSettings, SlackChannel, WebhookChannel
from tempo_agents.schedules import AgentSchedule, ScheduledRun, ScheduleView, TriggeredRun
from tempo_agents.signals import TaskSignalProvider
from tempo_agents.streams import AgentStream, GenerateResult, ToolInputPreview
from tempo_agents.threads import ThreadSnapshot
from tempo_agents.tools import (
    Tool,
    ToolContext,
    ask_user_tool,
    create_tool,
    submit_plan_tool,
    web_fetch_tool,
    web_search_tool,
)
from tempo_agents.worker import TempoAgentsPlugin
from tempo_agents.workflows.payloads import PendingCall, ResumeRequest
from tempo_agents.workflows.steering import InterruptRequest, SteerAccepted, SteerRequest
from tempo_agents.workflows.thread_payloads import ThreadOutcome
from tempo_agents.workflows.tool_suspension import wait_for_resume

if TYPE_CHECKING:
    from tempo_agents.mcp import McpServerUnavailableError, McpToolError, mcp_tools
    from tempo_agents.telemetry import configure_logging, instrument, otlp_tracer_provider

try:
    __version__ = version("tempo-agents")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

deprecations.install()  # the module paths the feature-folder layout moved still import, with a warning

# Names whose subpackage loads on first use: MCP needs the ``mcp`` extra, telemetry is not needed to run agents.
_LAZY = {
    "McpServerUnavailableError": "tempo_agents.mcp",
    "McpToolError": "tempo_agents.mcp",
    "mcp_tools": "tempo_agents.mcp",
    "configure_logging": "tempo_agents.telemetry",
    "instrument": "tempo_agents.telemetry",
    "otlp_tracer_provider": "tempo_agents.telemetry",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tempo_agents' has no attribute {name!r}")
    return getattr(import_module(module), name)


__all__ = [
    "ActivityOptions",
    "Agent",
    "AgentMode",
    "AgentSchedule",
    "AgentStream",
    "AnswerLinks",
    "App",
    "ApprovalRequest",
    "ApproverPolicy",
    "Budget",
    "BudgetLimits",
    "BudgetRefusedError",
    "BudgetUsage",
    "Choice",
    "ConfigurationError",
    "DelegationComplete",
    "DelegationHooks",
    "DelegationStart",
    "EmailChannel",
    "EventRun",
    "FileAgentError",
    "GenerateResult",
    "IdTooLongError",
    "InterruptRequest",
    "McpServerUnavailableError",
    "McpToolError",
    "MessageTooLargeError",
    "Model",
    "ModelError",
    "ModelPrice",
    "NotificationSettings",
    "PendingCall",
    "PeriodLimits",
    "PriceTable",
    "ResumeError",
    "ResumeRequest",
    "ResumeValidationError",
    "RollbackResult",
    "RunFinishedError",
    "RunNotFoundError",
    "RunQueries",
    "ScheduleView",
    "ScheduledRun",
    "ScriptedModel",
    "ScriptedResponse",
    "ScriptedToolCall",
    "SlackChannel",
    "SteerAccepted",
    "SteerRequest",
    "StoreBusyError",
    "StoreUnavailableError",
    "SupersededStartError",
    "SuspendedRun",
    "SuspendedRuns",
    "SuspendedToolCall",
    "TaskSignalProvider",
    "TempoAgentsError",
    "TempoAgentsPlugin",
    "ThreadBusyError",
    "ThreadOutcome",
    "ThreadSnapshot",
    "Tool",
    "ToolCallHookContext",
    "ToolContext",
    "ToolHooks",
    "ToolInputPreview",
    "ToolNameCollisionError",
    "ToolNotFoundError",
    "TriggeredRun",
    "Usage",
    "WebhookChannel",
    "WebhookRefusedError",
    "WebhookSource",
    "WorkflowTool",
    "__version__",
    "anthropic",
    "approval_choices",
    "ask_user_tool",
    "configure_logging",
    "create_tool",
    "instrument",
    "load_webhook_sources",
    "local_model",
    "mcp_tools",
    "openai_compatible",
    "option_choices",
    "otlp_tracer_provider",
    "sign_webhook",
    "submit_plan_tool",
    "verify_webhook",
    "wait_for_resume",
    "web_fetch_tool",
    "web_search_tool",
]
