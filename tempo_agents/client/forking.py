"""Starting a fork: what it takes from its origin (the origin's start input, read from its history), what it
changes (messages, agent, options), and the fork point checked against the origin's transcript.

The origin is only read: its workflow history (the input it started with) and its transcript. The fork's own input
names the origin (:class:`ForkOrigin`); its first model step copies the transcript from the store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from tempo_agents.errors import ConfigurationError, RunNotFoundError
from tempo_agents.forks import check_fork_point, copied_steps, last_good_step
from tempo_agents.models.messages import MessageInput, normalize_messages
from tempo_agents.store.base import Store
from tempo_agents.workflows import search_attributes
from tempo_agents.workflows.payloads import ForkOrigin, RunInput
from tempo_agents.workflows.visibility_queries import quote, runs_query

__all__ = ["FORK_MEMO", "ForkPlan", "Reuse", "forks_query", "origin_input", "plan_fork"]

Reuse = Literal["none", "tools"]

FORK_MEMO = "forkOf"
"""The memo field of a fork: ``{"runId": ..., "step": ...}``."""


async def origin_input(client: Client, run_id: str) -> RunInput:
    """The input the run started with (the first event of its history; the same options after continue-as-new)."""
    handle = client.get_workflow_handle(run_id)
    try:
        async for event in handle.fetch_history_events():
            started = event.workflow_execution_started_event_attributes
            (decoded,) = await client.data_converter.decode(started.input.payloads, [RunInput])
            if not isinstance(decoded, RunInput):
                break
            return decoded
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            raise RunNotFoundError(f'no run "{run_id}" exists') from error
        raise
    raise RunNotFoundError(f'run "{run_id}" is not an agent run')


@dataclass(frozen=True)
class ForkPlan:
    """What a fork starts with: its agent, its options (a mapping for ``App.build_options``) and new messages."""

    agent_id: str
    options: dict[str, Any]
    messages: list[Any]
    fork: ForkOrigin


async def plan_fork(
    client: Client,
    store: Store,
    run_id: str,
    *,
    at_step: int | None,
    messages: MessageInput | None,
    replace_input: MessageInput | None,
    agent_id: str | None,
    reuse: Reuse,
    rerun: Sequence[str],
    options: Mapping[str, Any],
) -> ForkPlan:
    """The fork of ``run_id`` at ``at_step`` (default: the last step whose calls all ended): the origin's options
    under ``options``, without its memory thread unless ``memory`` is given (a fork never writes its origin's
    thread).

    Steps are numbered in the conversation: a fork's steps copied from its origin count, so a fork at step k numbers
    its own steps k, k+1 ..., and a fork of it names them so (README, "Time travel")."""
    origin = await origin_input(client, run_id)
    entries = await store.get_transcript(run_id)
    if at_step is not None and at_step < 0:
        raise ConfigurationError(f"at_step must be 0 or more, got {at_step}")
    first = copied_steps(entries)
    own = last_good_step(entries) if at_step is None else at_step - first
    if own < 0:
        source = origin.options.fork.run_id if origin.options.fork is not None else "its origin"
        raise ConfigurationError(
            f'step {at_step} of run "{run_id}" was copied from run "{source}": fork that run at step {at_step}, or '
            f"this one at step {first} or later"
        )
    check_fork_point(run_id, entries, own, first)
    fork = ForkOrigin(
        run_id=run_id,
        step=own + first,
        cut=own if first else None,
        reuse=reuse,
        rerun=list(rerun),
        replace_input=None if replace_input is None else normalize_messages(replace_input),
    )
    same_agent = agent_id is None or agent_id == origin.agent_id
    merged = origin.options.model_dump(exclude={"fork", "memory"} if same_agent else {"fork", "memory", "mode"})
    if "memory" not in options:  # without a thread of its own, a fork cannot take over calls through one
        merged["auto_resume_suspended_tools"] = False
    merged.update(options)
    merged["fork"] = fork
    return ForkPlan(
        agent_id=agent_id or origin.agent_id,
        options=merged,
        messages=[] if messages is None else normalize_messages(messages),
        fork=fork,
    )


def forks_query(task_queue: str, run_id: str) -> str:
    """The visibility filter of the forks of ``run_id`` (their ``TempoAgentForkOf``)."""
    return runs_query(task_queue, clauses=[f"{search_attributes.FORK_OF.name} = {quote(run_id)}"])
