"""tempo-agents: typed tools and durable agent runs, every run a Temporal workflow.

Everything an application uses is importable from here; the subpackages are the layout of the code (see
ARCHITECTURE.md), and names imported from them keep working. Each name loads its subpackage on first use, so
``import tempo_agents`` stays cheap and the MCP names need their extra only when used.
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from tempo_agents import deprecations

if TYPE_CHECKING:
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
    from tempo_agents.encryption import Keyring, keyring_from_file
    from tempo_agents.errors import (
        ConfigurationError,
        ErasedRunError,
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
    from tempo_agents.identity import OidcSettings
    from tempo_agents.ingress import (
        EventRun,
        WebhookRefusedError,
        WebhookSource,
        load_webhook_sources,
        sign_webhook,
        verify_webhook,
    )
    from tempo_agents.mcp import McpServerUnavailableError, McpToolError, mcp_tools
    from tempo_agents.models import Model, ScriptedModel, ScriptedResponse, ScriptedToolCall, Usage
    from tempo_agents.models.anthropic import anthropic
    from tempo_agents.models.openai_compatible import local_model, openai_compatible
    from tempo_agents.notifications import EmailChannel, NotificationSettings, SlackChannel, WebhookChannel
    from tempo_agents.programs import run_program
    from tempo_agents.retention import Retention
    from tempo_agents.schedules import AgentSchedule, ScheduledRun, ScheduleView, TriggeredRun
    from tempo_agents.server import create_server
    from tempo_agents.server.access import AccessTarget, Decision, Filter
    from tempo_agents.signals import TaskSignalProvider
    from tempo_agents.streams import AgentStream, GenerateResult, ToolInputPreview
    from tempo_agents.telemetry import configure_logging, instrument, otlp_tracer_provider
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

try:
    __version__ = version("tempo-agents")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

deprecations.install()  # the module paths the feature-folder layout moved still import, with a warning

# Every public name loads its subpackage on first use: ``import tempo_agents`` (and the ``tempo-agents`` command,
# whose ``api`` commands need none of them) stays cheap, MCP needs its extra only when used, and a program pays only
# for what it imports.
_EXPORTS = {
    "Retention": "tempo_agents.retention",
    "OidcSettings": "tempo_agents.identity",
    "Keyring": "tempo_agents.encryption",
    "keyring_from_file": "tempo_agents.encryption",
    "AccessTarget": "tempo_agents.server.access",
    "Decision": "tempo_agents.server.access",
    "Filter": "tempo_agents.server.access",
    "create_server": "tempo_agents.server",
    "run_program": "tempo_agents.programs",
    "ActivityOptions": "tempo_agents.activity_options",
    "Agent": "tempo_agents.agent",
    "AgentMode": "tempo_agents.agent",
    "AgentSchedule": "tempo_agents.schedules",
    "AgentStream": "tempo_agents.streams",
    "AnswerLinks": "tempo_agents.approvals",
    "App": "tempo_agents.client",
    "ApprovalRequest": "tempo_agents.approvals",
    "ApproverPolicy": "tempo_agents.approvals",
    "Budget": "tempo_agents.budgets",
    "BudgetLimits": "tempo_agents.budgets",
    "BudgetRefusedError": "tempo_agents.client.budget_usage",
    "BudgetUsage": "tempo_agents.client.budget_usage",
    "Choice": "tempo_agents.approvals",
    "ConfigurationError": "tempo_agents.errors",
    "DelegationComplete": "tempo_agents.agent.delegation",
    "DelegationHooks": "tempo_agents.agent.delegation",
    "DelegationStart": "tempo_agents.agent.delegation",
    "EmailChannel": "tempo_agents.notifications",
    "ErasedRunError": "tempo_agents.errors",
    "EventRun": "tempo_agents.ingress",
    "FileAgentError": "tempo_agents.file_agents",
    "GenerateResult": "tempo_agents.streams",
    "IdTooLongError": "tempo_agents.errors",
    "InterruptRequest": "tempo_agents.workflows.steering",
    "McpServerUnavailableError": "tempo_agents.mcp",
    "McpToolError": "tempo_agents.mcp",
    "MessageTooLargeError": "tempo_agents.errors",
    "Model": "tempo_agents.models",
    "ModelError": "tempo_agents.errors",
    "ModelPrice": "tempo_agents.budgets",
    "NotificationSettings": "tempo_agents.notifications",
    "PendingCall": "tempo_agents.workflows.payloads",
    "PeriodLimits": "tempo_agents.budgets",
    "PriceTable": "tempo_agents.budgets",
    "ResumeError": "tempo_agents.errors",
    "ResumeRequest": "tempo_agents.workflows.payloads",
    "ResumeValidationError": "tempo_agents.errors",
    "RollbackResult": "tempo_agents.client.run_control",
    "RunFinishedError": "tempo_agents.errors",
    "RunNotFoundError": "tempo_agents.errors",
    "RunQueries": "tempo_agents.client.run_queries",
    "ScheduleView": "tempo_agents.schedules",
    "ScheduledRun": "tempo_agents.schedules",
    "ScriptedModel": "tempo_agents.models",
    "ScriptedResponse": "tempo_agents.models",
    "ScriptedToolCall": "tempo_agents.models",
    "SlackChannel": "tempo_agents.notifications",
    "SteerAccepted": "tempo_agents.workflows.steering",
    "SteerRequest": "tempo_agents.workflows.steering",
    "StoreBusyError": "tempo_agents.errors",
    "StoreUnavailableError": "tempo_agents.errors",
    "SupersededStartError": "tempo_agents.errors",
    "SuspendedRun": "tempo_agents.agent.suspended_runs",
    "SuspendedRuns": "tempo_agents.agent.suspended_runs",
    "SuspendedToolCall": "tempo_agents.agent.suspended_runs",
    "TaskSignalProvider": "tempo_agents.signals",
    "TempoAgentsError": "tempo_agents.errors",
    "TempoAgentsPlugin": "tempo_agents.worker",
    "ThreadBusyError": "tempo_agents.errors",
    "ThreadOutcome": "tempo_agents.workflows.thread_payloads",
    "ThreadSnapshot": "tempo_agents.threads",
    "Tool": "tempo_agents.tools",
    "ToolCallHookContext": "tempo_agents.agent",
    "ToolContext": "tempo_agents.tools",
    "ToolHooks": "tempo_agents.agent",
    "ToolInputPreview": "tempo_agents.streams",
    "ToolNameCollisionError": "tempo_agents.errors",
    "ToolNotFoundError": "tempo_agents.errors",
    "TriggeredRun": "tempo_agents.schedules",
    "Usage": "tempo_agents.models",
    "WebhookChannel": "tempo_agents.notifications",
    "WebhookRefusedError": "tempo_agents.ingress",
    "WebhookSource": "tempo_agents.ingress",
    "WorkflowTool": "tempo_agents.agent.workflow_tools",
    "anthropic": "tempo_agents.models.anthropic",
    "approval_choices": "tempo_agents.approvals",
    "ask_user_tool": "tempo_agents.tools",
    "configure_logging": "tempo_agents.telemetry",
    "create_tool": "tempo_agents.tools",
    "instrument": "tempo_agents.telemetry",
    "load_webhook_sources": "tempo_agents.ingress",
    "local_model": "tempo_agents.models.openai_compatible",
    "mcp_tools": "tempo_agents.mcp",
    "openai_compatible": "tempo_agents.models.openai_compatible",
    "option_choices": "tempo_agents.approvals",
    "otlp_tracer_provider": "tempo_agents.telemetry",
    "sign_webhook": "tempo_agents.ingress",
    "submit_plan_tool": "tempo_agents.tools",
    "verify_webhook": "tempo_agents.ingress",
    "wait_for_resume": "tempo_agents.workflows.tool_suspension",
    "web_fetch_tool": "tempo_agents.tools",
    "web_search_tool": "tempo_agents.tools",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tempo_agents' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "AccessTarget",
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
    "Decision",
    "DelegationComplete",
    "DelegationHooks",
    "DelegationStart",
    "EmailChannel",
    "ErasedRunError",
    "EventRun",
    "FileAgentError",
    "Filter",
    "GenerateResult",
    "IdTooLongError",
    "InterruptRequest",
    "Keyring",
    "McpServerUnavailableError",
    "McpToolError",
    "MessageTooLargeError",
    "Model",
    "ModelError",
    "ModelPrice",
    "NotificationSettings",
    "OidcSettings",
    "PendingCall",
    "PeriodLimits",
    "PriceTable",
    "ResumeError",
    "ResumeRequest",
    "ResumeValidationError",
    "Retention",
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
    "create_server",
    "create_tool",
    "instrument",
    "keyring_from_file",
    "load_webhook_sources",
    "local_model",
    "mcp_tools",
    "openai_compatible",
    "option_choices",
    "otlp_tracer_provider",
    "run_program",
    "sign_webhook",
    "submit_plan_tool",
    "verify_webhook",
    "wait_for_resume",
    "web_fetch_tool",
    "web_search_tool",
]
