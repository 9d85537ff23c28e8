"""Turning a ``stream``/``generate`` request body into messages and run options, checked before a run starts."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.agent.agent import Agent
from tempo_agents.client.app import App
from tempo_agents.errors import ConfigurationError
from tempo_agents.models.messages import Message, normalize_messages
from tempo_agents.server.bodies import StreamBody
from tempo_agents.server.errors import ApiError
from tempo_agents.streams import AgentStream
from tempo_agents.workflows.thread_payloads import ThreadOutcome

__all__ = [
    "MAX_RUN_ID_BYTES",
    "StartRequest",
    "check_model_settings",
    "outcome_headers",
    "run_id_problem",
    "start_request",
    "start_run",
    "thread_headers",
]

MAX_RUN_ID_BYTES = 1000
"""The longest run id (in UTF-8 bytes): a run's id is its workflow id, which Temporal limits to 1,000 by default."""

_MODEL_SETTINGS = {
    "temperature": "temperature",
    "maxTokens": "max_tokens",
    "maxOutputTokens": "max_tokens",
    "topP": "top_p",
    "stopSequences": "stop",
    "stop": "stop",
    "seed": "seed",
}


class StartRequest:
    """A checked request to start a run: its messages and the keyword options of ``App.stream``."""

    def __init__(self, messages: list[Message], options: dict[str, Any]) -> None:
        self.messages = messages
        self.options = options


def _messages(raw: Any) -> list[Message]:
    if not raw:
        raise ApiError(400, 'Argument "messages" is required')
    items = raw if isinstance(raw, list) else [raw]
    converted: list[Any] = []
    for item in items:
        if isinstance(item, dict) and "content" not in item and isinstance(item.get("parts"), list):
            # A UI message: its text parts become the content.
            text = "".join(p.get("text", "") for p in item["parts"] if isinstance(p, dict) and p.get("type") == "text")
            item = {"role": item.get("role", "user"), "content": text}
        converted.append(item)
    try:
        return normalize_messages(converted)
    except (ValidationError, TypeError, ValueError):
        raise ApiError(
            400, "Invalid request body", issues=[{"field": "messages", "message": "Invalid input"}]
        ) from None


def run_id_problem(run_id: str) -> str | None:
    """Why a caller's run id cannot be a run's id, or ``None``."""
    if "/" in run_id:
        return 'a run id cannot contain "/": no route could address the run'
    if any(ord(character) < 0x20 or ord(character) == 0x7F for character in run_id):
        return "a run id cannot contain control characters"
    if len(run_id.encode(errors="replace")) > MAX_RUN_ID_BYTES:
        return f"a run id is at most {MAX_RUN_ID_BYTES} bytes long"
    return None


def _memory(raw: dict[str, Any]) -> dict[str, str]:
    thread = raw.get("thread")
    if isinstance(thread, dict):
        thread = thread.get("id")
    resource = raw.get("resource")
    if not isinstance(thread, str) or not thread or not isinstance(resource, str) or not resource:
        raise ApiError(
            400,
            "Invalid request body",
            issues=[{"field": "memory", "message": "memory needs a thread id and a resource id"}],
        )
    return {"thread": thread, "resource": resource}


_WHOLE_SETTINGS = frozenset({"maxTokens", "maxOutputTokens", "max_tokens", "seed"})
_NUMBER_SETTINGS = frozenset({"temperature", "topP", "top_p", "topK", "top_k", "presencePenalty", "frequencyPenalty"})


def check_model_settings(settings: dict[str, Any] | None, field: str = "modelSettings") -> None:
    """Refuse a model setting that must be a number and is not one (a boolean is none, whole counts take integers
    only), with a 400 naming it."""
    for key, value in (settings or {}).items():
        whole = key in _WHOLE_SETTINGS
        if not whole and key not in _NUMBER_SETTINGS:
            continue
        number = isinstance(value, int) if whole else isinstance(value, int | float)
        if value is not None and (isinstance(value, bool) or not number):
            expected = "an integer" if whole else "a number"
            raise ApiError(
                400, "Invalid request body", issues=[{"field": f"{field}.{key}", "message": f"expected {expected}"}]
            )


def _model_settings(body: StreamBody) -> dict[str, Any]:
    check_model_settings(body.model_settings)
    settings: dict[str, Any] = {}
    for key, value in (body.model_settings or {}).items():
        settings[_MODEL_SETTINGS.get(key, key)] = value
    if body.provider_options:
        settings["provider_options"] = body.provider_options
    return settings


def start_request(app: App, agent: Agent, body: StreamBody) -> StartRequest:
    """Check a start request completely (messages, options, registered names) without starting anything."""
    if body.client_tools:
        raise ApiError(400, "clientTools are not supported by this server: register the tools on the agent")
    options: dict[str, Any] = {}
    if body.run_id:
        problem = run_id_problem(body.run_id)
        if problem is not None:
            raise ApiError(400, "Invalid request body", issues=[{"field": "runId", "message": problem}])
        options["run_id"] = body.run_id
    if body.max_steps is not None:
        options["max_steps"] = body.max_steps
    if body.memory is not None:
        options["memory"] = _memory(body.memory)
    if body.request_context:
        options["request_context"] = body.request_context
    if body.tool_choice is not None:
        options["tool_choice"] = body.tool_choice
    if body.active_tools is not None:
        options["active_tools"] = body.active_tools
    if body.thread_strategy is not None:
        options["thread_strategy"] = body.thread_strategy
    if body.require_tool_approval is not None:
        options["require_tool_approval"] = body.require_tool_approval
    if body.budget is not None:
        options["budget"] = body.budget
    if body.waiting_holds_thread is not None:
        options["waiting_holds_thread"] = body.waiting_holds_thread
    settings = _model_settings(body)
    if settings:
        options["model_settings"] = settings
    messages = _messages(body.messages)
    try:
        app.build_options(agent, options)
    except ConfigurationError as error:
        raise ApiError(400, error.message) from None
    except ValidationError as error:
        issues = [{"field": ".".join(str(p) for p in e["loc"]) or "root", "message": e["msg"]} for e in error.errors()]
        raise ApiError(400, "Invalid request body", issues=issues) from None
    return StartRequest(messages, options)


async def start_run(app: App, agent: Agent, request: StartRequest, sent_by: str | None = None) -> AgentStream:
    """Start the run; a run id that is already taken is the caller's mistake (409).

    Temporal would accept a closed workflow's id again, but a run's journal is addressed by its id,
    so a taken id is refused whether its run is still going or not. A run on a memory thread whose active run
    holds it and whose ``threadStrategy`` is ``reject`` is a 409 naming that run (``activeRunId``); ``sent_by``
    (the principal) is who a steered message names.
    """
    run_id = request.options.get("run_id")
    if run_id is not None:
        try:
            await app.client.get_workflow_handle(run_id).describe()
        except RPCError as error:
            if error.status != RPCStatusCode.NOT_FOUND:
                raise
        else:
            raise ApiError(409, f'a run with id "{run_id}" already exists')
    try:
        return await app.stream(agent.id, request.messages, sent_by=sent_by, **request.options)
    except WorkflowAlreadyStartedError:
        raise ApiError(409, f'a run with id "{request.options.get("run_id")}" already exists') from None


def thread_headers(stream: AgentStream) -> dict[str, str]:
    """For a run sent to a memory thread, what the thread did with it: ``x-thread-outcome`` (``started``,
    ``queued``, ``steered``), ``x-run-id`` (the run the stream follows) and, when another run holds the thread,
    ``x-thread-active-run`` and ``x-thread-position`` (1: next)."""
    return outcome_headers(stream.thread_outcome)


def outcome_headers(outcome: ThreadOutcome | None) -> dict[str, str]:
    """The headers of :func:`thread_headers` for a thread's outcome (none for a threadless run); an event's answer
    carries them too, with ``duplicate`` for a delivery the thread already holds."""
    if outcome is None:
        return {}
    headers = {"x-thread-outcome": outcome.outcome, "x-run-id": outcome.run_id}
    if outcome.active_run_id is not None:
        headers["x-thread-active-run"] = outcome.active_run_id
    if outcome.position is not None:
        headers["x-thread-position"] = str(outcome.position)
    return headers
