"""Runs started by events: a webhook delivery, verified, rendered into a message by a template registered on the App,
starts one run of the agent whatever the number of times it is delivered.

The run id is ``event-<agent id>-<webhook-id>`` and the workflow is started with the id reuse policy
``REJECT_DUPLICATE``: Temporal keeps workflow ids unique, so a second delivery of the same event (the sender
retrying, or a replay within the tolerance) finds the run, running or closed, and starts nothing. No table of seen
ids is needed, and the uniqueness holds across every API process. A delivery from a configured source
(``ingress/webhook_sources.py``) takes the same path with the run id ``webhook-<source>-<event id>``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from temporalio.client import Client
from temporalio.common import (
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.agent.agent import Agent
from tempo_agents.agent.local_activities import workflow_task_timeout
from tempo_agents.errors import ConfigurationError, ThreadBusyError
from tempo_agents.ingress.event_memory import EventMemory, bind_event_memory, signed_memory
from tempo_agents.ingress.webhook_sources import WebhookSource, event_id_of, verify_source_delivery
from tempo_agents.ingress.webhooks import DEFAULT_TOLERANCE, WebhookRefusedError, verify_webhook
from tempo_agents.journal.start_chunk import journal_start
from tempo_agents.models.messages import MessageInput
from tempo_agents.store.base import Store
from tempo_agents.threads import remember_thread, send_to_thread
from tempo_agents.workflows.agent_run import AgentRunWorkflow
from tempo_agents.workflows.payloads import RunInput
from tempo_agents.workflows.thread_payloads import DEFAULT_THREAD_STRATEGY, ThreadOutcome, ThreadRun, ThreadStrategy

__all__ = [
    "AGENT_FIELD",
    "ALL_AGENTS",
    "EventApp",
    "EventRun",
    "EventTemplate",
    "bind_event_agent",
    "receive_event",
    "receive_source_event",
]

EventTemplate = Callable[[Any], MessageInput]
"""Renders an event's payload (the delivery's JSON body) into the run's message(s)."""

ALL_AGENTS = "*"
"""The key of ``event_secrets`` whose secret every agent accepts."""

AGENT_FIELD = "agentId"
"""The payload's field that names the agent of a delivery signed with an App-wide secret (``ALL_AGENTS``)."""

_log = logging.getLogger(__name__)


class EventApp(Protocol):
    """What starting a run from an event needs of an App."""

    task_queue: str
    event_templates: Mapping[str, EventTemplate]
    event_secrets: Mapping[str, str | list[str]]

    @property
    def client(self) -> Client: ...

    @property
    def store(self) -> Store: ...

    def agent(self, agent_id: str) -> Agent: ...

    def prepare_run(
        self, agent: Agent, messages: MessageInput, options: Mapping[str, Any]
    ) -> tuple[RunInput, list[SearchAttributePair[str]]]: ...


@dataclass(frozen=True)
class EventRun:
    """The run an event started (``duplicate``: an earlier delivery of the same event had started it).
    ``thread_outcome``: for a run on a memory thread, what its thread did with it (``started``, ``queued`` behind
    the active run, ``duplicate``); ``None`` for a threadless run, which starts at once."""

    run_id: str
    duplicate: bool
    thread_outcome: ThreadOutcome | None = None


def event_secrets_of(app: EventApp, agent_id: str) -> list[str]:
    """The secrets a delivery to ``agent_id`` may be signed with (the agent's and the App-wide ones)."""
    return _secrets_under(app, agent_id) + _secrets_under(app, ALL_AGENTS)


def _secrets_under(app: EventApp, key: str) -> list[str]:
    value = app.event_secrets.get(key)
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _signed_for_agent(
    app: EventApp, agent_id: str, headers: Mapping[str, str], body: bytes, now: datetime, tolerance: timedelta
) -> bool:
    """Whether a verified delivery is signed with one of ``agent_id``'s own secrets (which cover its route), not
    only with an App-wide one."""
    own = _secrets_under(app, agent_id)
    if not own:
        return False
    try:
        verify_webhook(own, headers, body, now=now, tolerance=tolerance)
    except WebhookRefusedError:
        return False
    return True


def bind_event_agent(payload: Any, agent_id: str) -> None:
    """A delivery signed with an App-wide secret verifies on every agent's route, and the route is outside the
    signature: its signed body names its agent (``AGENT_FIELD``), which must be the route's; a 400 otherwise."""
    named = payload.get(AGENT_FIELD) if isinstance(payload, dict) else None
    if named is None:
        raise WebhookRefusedError(
            400,
            f'the delivery is signed with the App-wide secret ("{ALL_AGENTS}"), which covers every agent\'s route: its '
            f'signed body must name its agent ("{AGENT_FIELD}": "{agent_id}")',
        )
    if named != agent_id:
        raise WebhookRefusedError(
            400,
            f'the delivery is for agent "{named}" (its signed body\'s "{AGENT_FIELD}"); it cannot start a run of agent '
            f'"{agent_id}"',
        )


def render_event(app: EventApp, agent: Agent, template: str | None, payload: Any) -> MessageInput:
    """The message of a run started by ``payload``: the template named ``template``, else the one named like the
    agent, else the payload as JSON text."""
    name = template if template is not None else agent.id
    render = app.event_templates.get(name)
    if render is None:
        if template is not None:
            known = ", ".join(sorted(app.event_templates)) or "none"
            raise ConfigurationError(f'no event template "{template}" is registered on the App (registered: {known})')
        return json.dumps(payload, ensure_ascii=False)
    try:
        return render(payload)
    except Exception as error:  # whatever the template raised: this payload cannot be rendered
        _log.warning("event template %r could not render a payload", name, exc_info=True)
        raise WebhookRefusedError(422, _unrenderable(name, error)) from None


def _unrenderable(template: str, error: Exception) -> str:
    """Why the template ``template`` could not render a payload, as its sender reads it (a 422: the same payload
    delivered again fails the same way, so it is not to be retried)."""
    if isinstance(error, KeyError) and error.args:
        missing = f'it has no "{error.args[0]}"'
    else:
        missing = str(error) or type(error).__name__
    return f'the event template "{template}" cannot render this payload: {missing}; nothing was started'


def _payload(body: bytes) -> Any:
    """The delivery's JSON body; an empty body, or one that is not JSON, is a 400."""
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise WebhookRefusedError(400, "the delivery's body is not JSON") from None


def _with_memory(options: Mapping[str, Any], memory: EventMemory | None) -> dict[str, Any]:
    """The run options with the memory the delivery is bound to (none: a threadless run)."""
    bound = {name: value for name, value in options.items() if name != "memory"}
    if memory is not None:
        bound["memory"] = memory.option()
    return bound


async def receive_event(
    app: EventApp,
    agent_id: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    now: datetime,
    template: str | None = None,
    tolerance: timedelta = DEFAULT_TOLERANCE,
    **options: Any,
) -> EventRun:
    """Verify a delivery to ``agent_id`` and start its run once (see the module's text). ``headers`` by lower-case
    name; ``options`` are run options. The run's thread and resource are the ones the signed body names
    (``"memory": {"thread": ..., "resource": ...}``); a ``memory`` option may only repeat them. A delivery signed
    only with an App-wide secret names its agent in its body (``"agentId"``), which must be ``agent_id``. Raises
    :class:`WebhookRefusedError` for a delivery that is not verified, whose body is not JSON, whose ``memory``
    option differs from the signed one or whose agent is not ``agent_id`` (400) or that its template cannot render
    (422), :class:`ConfigurationError` when the agent takes no events."""
    agent = app.agent(agent_id)
    secrets = event_secrets_of(app, agent.id)
    if not secrets:
        raise ConfigurationError(
            f'agent "{agent.id}" takes no events: give it a secret (App(event_secrets={{"{agent.id}": "whsec_..."}}))'
        )
    delivery = verify_webhook(secrets, headers, body, now=now, tolerance=tolerance)
    payload = _payload(body)
    if not _signed_for_agent(app, agent.id, headers, body, now, tolerance):  # an App-wide secret's: bound to its agent
        bind_event_agent(payload, agent.id)
    memory = bind_event_memory(signed_memory(payload), options.get("memory"), 'its signed body\'s "memory"')
    message = render_event(app, agent, template, payload)
    return await start_event_run(
        app,
        agent,
        f"event-{agent.id}-{delivery.webhook_id}",
        message,
        {"event": delivery.webhook_id},
        _with_memory(options, memory),
    )


async def start_event_run(
    app: EventApp, agent: Agent, run_id: str, message: MessageInput, memo: Mapping[str, str], options: Mapping[str, Any]
) -> EventRun:
    """Start the run ``run_id`` of a verified event once: a second start of the same id finds the run (running,
    closed, or erased on request) and starts nothing."""
    if await app.store.is_erased(run_id):  # its event was handled, then erased on request: still a duplicate
        return EventRun(run_id=run_id, duplicate=True)
    run_input, attributes = app.prepare_run(agent, message, options)
    run_input = run_input.model_copy(update={"run_id": run_id})
    if run_input.options.memory is not None:
        return await _send_event_to_thread(app, agent, run_input, attributes, memo, options.get("thread_strategy"))
    try:
        await app.client.start_workflow(
            AgentRunWorkflow.run,
            run_input,
            id=run_id,
            task_queue=app.task_queue,
            search_attributes=TypedSearchAttributes(attributes),
            task_timeout=workflow_task_timeout(agent),
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
            memo=dict(memo),
        )
    except WorkflowAlreadyStartedError:
        return EventRun(run_id=run_id, duplicate=True)
    await journal_start(app.store, run_id, agent.id)
    return EventRun(run_id=run_id, duplicate=False)


async def receive_source_event(
    app: EventApp, source: WebhookSource, headers: Mapping[str, str], body: bytes, *, now: datetime, **options: Any
) -> EventRun:
    """Verify a delivery from a configured source and start its agent's run once, keyed by the sender's event id
    (``webhook-id``, else the source's ``event_id_field``). Raises :class:`WebhookRefusedError` as
    :func:`receive_event` does."""
    agent = app.agent(source.agent)
    verify_source_delivery(source, headers, body, now=now)
    payload = _payload(body)
    event_id = event_id_of(source, headers, payload)
    memory = bind_event_memory(source.memory_of(payload), options.get("memory"), f'the source "{source.name}" says')
    message = render_event(app, agent, source.template, payload)
    memo = {"event": event_id, "eventSource": source.name}
    run_id = f"webhook-{source.name}-{event_id}"
    return await start_event_run(app, agent, run_id, message, memo, _with_memory(options, memory))


async def _send_event_to_thread(
    app: EventApp,
    agent: Agent,
    run_input: RunInput,
    attributes: list[SearchAttributePair[str]],
    memo: Mapping[str, str],
    strategy: ThreadStrategy | None,
) -> EventRun:
    """An event's run on a memory thread goes through the thread's workflow like any message to the thread (it waits
    its turn, or is refused, by ``thread_strategy``). Once per event id: a run that exists, or that the thread's
    workflow holds (queued, or sent by a racing delivery), is a duplicate."""
    run_id = run_input.run_id
    try:
        await app.client.get_workflow_handle(run_id).describe()
    except RPCError as error:
        if error.status != RPCStatusCode.NOT_FOUND:
            raise
    else:
        return EventRun(run_id=run_id, duplicate=True, thread_outcome=ThreadOutcome(outcome="duplicate", run_id=run_id))
    timeout = workflow_task_timeout(agent)
    run = ThreadRun(
        run_input=run_input,
        task_queue=app.task_queue,
        search_attributes={pair.key.name: pair.value for pair in attributes},
        task_timeout_seconds=None if timeout is None else timeout.total_seconds(),
        memo=dict(memo),
    )
    outcome = await send_to_thread(app.client, app.task_queue, run, strategy or DEFAULT_THREAD_STRATEGY)
    if outcome.outcome == "duplicate":
        return EventRun(run_id=run_id, duplicate=True, thread_outcome=outcome)
    if outcome.outcome == "rejected":
        raise ThreadBusyError(
            f'the thread has an active run "{outcome.active_run_id}"; the event started nothing (thread_strategy '
            "reject)",
            active_run_id=outcome.active_run_id,
        )
    if outcome.outcome == "started":
        await asyncio.gather(journal_start(app.store, run_id, agent.id), remember_thread(app.store, run, outcome))
    else:
        await remember_thread(app.store, run, outcome)
    return EventRun(run_id=run_id, duplicate=False, thread_outcome=outcome)
