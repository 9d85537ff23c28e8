"""A run's options and start input: the agent's defaults under the call's options, merged and checked, and the
``RunInput`` and search attributes a run starts with (``App.build_options``, ``App.prepare_run``)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from temporalio.common import SearchAttributePair

from tempo_agents.activities.registry import Registry
from tempo_agents.agent.agent import Agent
from tempo_agents.budgets import Budget, merge_budgets
from tempo_agents.errors import ConfigurationError
from tempo_agents.models.messages import MessageInput, normalize_messages
from tempo_agents.workflows import search_attributes
from tempo_agents.workflows.payloads import RunInput, RunOptions
from tempo_agents.workflows.thread_payloads import THREAD_STRATEGIES
from tempo_agents.workflows.visibility_queries import UNFILTERABLE, filterable

__all__ = ["THREAD_STRATEGY_OPTION", "merged_run_options", "run_start"]

THREAD_STRATEGY_OPTION = "thread_strategy"
"""The run option naming what a message does when its thread has an active run (``ThreadStrategy``)."""


def merged_run_options(
    registry: Registry,
    agent: Agent,
    options: Mapping[str, Any],
    *,
    budget: Budget | None,
    waiting_holds_thread: bool,
) -> tuple[RunOptions, str]:
    """The agent's default options under the call's options (``budget`` and ``waiting_holds_thread``: the App's),
    checked, and the run id (the option's, else a new one)."""
    merged: dict[str, Any] = dict(agent.default_options)
    if waiting_holds_thread:
        merged.setdefault("waiting_holds_thread", True)
    for key, value in options.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    run_id = str(merged.pop("run_id", None) or uuid.uuid4())
    merged_budget = merge_budgets(budget, agent.default_options.get("budget"), options.get("budget"))
    if merged_budget is not None:
        merged["budget"] = merged_budget
    _check_named_code(registry, merged)
    _check_mode(agent, merged)
    strategy = merged.pop(THREAD_STRATEGY_OPTION, None)
    if strategy is not None and strategy not in THREAD_STRATEGIES:
        raise ConfigurationError(
            f'run option thread_strategy must be one of {", ".join(THREAD_STRATEGIES)}, got "{strategy}"'
        )
    if merged.get("auto_resume_suspended_tools") and merged.get("memory") is None:
        raise ConfigurationError(
            'auto_resume_suspended_tools needs memory: pass memory={"thread": ..., "resource": ...}'
        )

    unknown = set(merged) - set(RunOptions.model_fields)
    if unknown:
        raise ConfigurationError(f"unknown run option(s): {', '.join(sorted(unknown))}")
    run_options = RunOptions.model_validate(merged)
    _check_filterable(run_id, run_options)
    return run_options, run_id


def _check_filterable(run_id: str, run_options: RunOptions) -> None:
    """A run is found again (listed, answered, erased) by its id and its memory's thread and resource."""
    memory = run_options.memory
    named = [("the run id", run_id)]
    if memory is not None:
        named += [("the memory thread", memory.thread), ("the memory resource", memory.resource)]
    for what, value in named:
        if not filterable(value):
            raise ConfigurationError(f"{what} {UNFILTERABLE}, so the run could not be found again")


def _check_named_code(registry: Registry, merged: Mapping[str, Any]) -> None:
    """Hooks and approval policies carry code, so a run names ones registered on the App."""
    hooks = merged.get("hooks")
    if hooks is not None and not isinstance(hooks, str):
        raise ConfigurationError(
            "run option hooks must be the name of hooks registered on the App "
            "(App(hooks={'name': ToolHooks(...)}), then hooks='name'): code cannot travel from a client "
            f"to a worker, got {type(hooks).__name__}"
        )
    if hooks is not None:
        registry.run_hooks(hooks)
    approval = merged.get("require_tool_approval")
    if approval is not None and not isinstance(approval, (bool, str)):
        raise ConfigurationError(
            "run option require_tool_approval must be True/False or the name of an approval policy registered "
            "on the App (App(approval_policies={'name': predicate})): code cannot travel from a client to a "
            f"worker, got {type(approval).__name__}"
        )
    if isinstance(approval, str):
        registry.approval_policy(approval)


def _check_mode(agent: Agent, merged: dict[str, Any]) -> None:
    """A run of an agent with modes starts in one of them (the agent's default unless named); others have none."""
    if agent.modes:
        merged["mode"] = merged.get("mode") or agent.default_mode
        agent.mode(merged["mode"])
    elif merged.get("mode") is not None:
        raise ConfigurationError(
            f'agent "{agent.id}" declares no modes, so a run cannot start in mode "{merged["mode"]}"'
        )


def run_start(
    agent: Agent, messages: MessageInput, run_options: RunOptions, run_id: str
) -> tuple[RunInput, list[SearchAttributePair[str]]]:
    """The input of a run of ``agent`` with these options and the search attributes it starts with."""
    run_input = RunInput(
        run_id=run_id,
        agent_id=agent.id,
        messages=normalize_messages(messages),
        options=run_options,
        model_step_activity=agent.model_step_activity,
    )
    attributes = [
        SearchAttributePair(search_attributes.STATUS, "running"),
        SearchAttributePair(search_attributes.AGENT_ID, agent.id),
    ]
    if run_options.memory is not None:
        attributes += [
            SearchAttributePair(search_attributes.THREAD_ID, run_options.memory.thread),
            SearchAttributePair(search_attributes.RESOURCE_ID, run_options.memory.resource),
        ]
    if run_options.fork is not None:
        attributes.append(SearchAttributePair(search_attributes.FORK_OF, run_options.fork.run_id))
    return run_input, attributes
