"""What every tempo-agents activity reports: a span, the run's metrics, and the run scope its logs carry.

A model step's span carries the model, its tokens and its finish reason; a tool call's span carries the
tool and how the call ended. Both are made here, in activity code, so a workflow replayed after a worker
restart or a cache eviction emits none again.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.util.types import AttributeValue
from temporalio import activity
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

from tempo_agents.errors import ConfigurationError
from tempo_agents.journal import keys
from tempo_agents.metrics import RUNS_STARTED, SUSPENDED_AT_FIELD, TOKENS, TOOL_CALLS, WAIT_SECONDS, RunScope, run_scope
from tempo_agents.workflows.payloads import (
    FinishInput,
    JournalInput,
    ModelStepInput,
    ModelStepResult,
    ToolCallInput,
    ToolCallResult,
)

if TYPE_CHECKING:
    from tempo_agents.activities.registry import Registry

__all__ = ["MODEL_STEP_SPAN", "TOOL_CALL_SPAN", "ActivityTelemetry", "tool_call_outcome"]

MODEL_STEP_SPAN = "tempo_agents.model_step"
TOOL_CALL_SPAN = "tempo_agents.tool_call"


class ActivityTelemetry(Interceptor):
    """A worker interceptor: spans, metrics and the log scope of tempo-agents' activities."""

    def __init__(self, registry: Registry, tracer: trace.Tracer) -> None:
        self._registry = registry
        self._tracer = tracer

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Inbound(next, self._registry, self._tracer)


def tool_call_outcome(call_input: ToolCallInput, result: ToolCallResult) -> str:
    """How a call ended, as metrics and spans name it: result, error, suspended, approval, declined,
    expired or resume-rejected."""
    if result.status == "suspended":
        return "approval" if result.suspension is not None and result.suspension.kind == "approval" else "suspended"
    resolution = call_input.resolution
    if result.status == "result" and resolution is not None and resolution.action in ("decline", "expire"):
        return "declined" if resolution.action == "decline" else "expired"
    return result.status


class _Inbound(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, registry: Registry, tracer: trace.Tracer) -> None:
        super().__init__(next)
        self._registry = registry
        self._tracer = tracer

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        argument = input.args[0] if input.args else None  # known by its input, under any activity name
        if isinstance(argument, ModelStepInput):
            return await self._model_step(input, argument)
        if isinstance(argument, ToolCallInput):
            return await self._tool_call(input, argument)
        if isinstance(argument, (FinishInput, JournalInput)):
            agent_id = argument.agent_id if isinstance(argument, FinishInput) else ""
            with run_scope(RunScope(argument.run_id, agent_id)):
                return await super().execute_activity(input)
        return await super().execute_activity(input)

    async def _model_step(self, input: ExecuteActivityInput, step_input: ModelStepInput) -> Any:
        info = activity.info()
        model = self._model_name(step_input.agent_id)
        attributes: dict[str, AttributeValue] = {
            "tempo_agents.run_id": step_input.run_id,
            "tempo_agents.agent_id": step_input.agent_id,
            "tempo_agents.step": step_input.step,
            "tempo_agents.attempt": info.attempt,
            "gen_ai.request.model": model,
        }
        if step_input.new_messages and info.attempt == 1:
            RUNS_STARTED.labels(agent=step_input.agent_id).inc()
        with (
            run_scope(RunScope(step_input.run_id, step_input.agent_id)),
            self._tracer.start_as_current_span(MODEL_STEP_SPAN, attributes=attributes) as span,
        ):
            result = await super().execute_activity(input)
            if isinstance(result, ModelStepResult):
                usage = result.usage
                span.set_attributes(
                    {
                        "gen_ai.usage.input_tokens": usage.input_tokens,
                        "gen_ai.usage.output_tokens": usage.output_tokens,
                        "gen_ai.response.finish_reasons": [result.finish_reason],
                        "tempo_agents.tool_calls": len(result.tool_calls) + result.answered_calls,
                    }
                )
                TOKENS.labels(model=model, direction="input").inc(usage.input_tokens)
                TOKENS.labels(model=model, direction="output").inc(usage.output_tokens)
            return result

    async def _tool_call(self, input: ExecuteActivityInput, call_input: ToolCallInput) -> Any:
        info = activity.info()
        call = call_input.call
        attributes: dict[str, AttributeValue] = {
            "tempo_agents.run_id": call_input.run_id,
            "tempo_agents.agent_id": call_input.agent_id,
            "tempo_agents.step": call_input.step,
            "tempo_agents.attempt": info.attempt,
            "tempo_agents.round": call_input.round,
            "gen_ai.tool.name": call.tool_name,
            "gen_ai.tool.call.id": call.tool_call_id,
        }
        resolution = call_input.resolution
        if resolution is not None:
            attributes["tempo_agents.resolution"] = resolution.action
            if resolution.answered_by is not None:
                attributes["tempo_agents.answered_by"] = resolution.answered_by
            if info.attempt == 1:
                await self._observe_wait(call_input, info.scheduled_time.timestamp())
        scope = RunScope(call_input.run_id, call_input.agent_id, call.tool_call_id, call.tool_name)
        with run_scope(scope), self._tracer.start_as_current_span(TOOL_CALL_SPAN, attributes=attributes) as span:
            result = await super().execute_activity(input)
            if isinstance(result, ToolCallResult):
                outcome = tool_call_outcome(call_input, result)
                span.set_attribute("tempo_agents.outcome", outcome)
                TOOL_CALLS.labels(agent=call_input.agent_id, tool=call.tool_name, outcome=outcome).inc()
            return result

    async def _observe_wait(self, call_input: ToolCallInput, answered_at: float) -> None:
        """Observe how long the call waited: from its suspension (saved with its outcome) to this activity."""
        if call_input.round == 0:
            return
        call = call_input.call
        key = keys.tool_call_outcome(call_input.step, call.tool_call_id, call_input.round - 1)
        saved = await self._registry.store.saved_outcome(call_input.run_id, key)
        suspended_at = saved.get(SUSPENDED_AT_FIELD) if saved is not None else None
        if isinstance(suspended_at, (int, float)):
            waited = max(0.0, min(answered_at, time.time()) - suspended_at)
            WAIT_SECONDS.labels(agent=call_input.agent_id, tool=call.tool_name).observe(waited)

    def _model_name(self, agent_id: str) -> str:
        try:
            spec = self._registry.agent(agent_id).model
        except ConfigurationError:
            return ""
        if isinstance(spec, str):
            return spec
        model_id = spec.model_id
        return model_id if "/" in model_id else f"{spec.provider}/{model_id}"
