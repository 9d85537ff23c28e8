"""Registry: what a worker looks up while it runs agents. Lookups only; it holds no Temporal client."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from tempo_agents.agent.agent import Agent
from tempo_agents.agent.delegation import is_child_tool
from tempo_agents.agent.hooks import ToolHooks
from tempo_agents.approvals import ApprovalPolicy, ApproverPolicy, members_by_group
from tempo_agents.budgets import ModelPrice, PriceTable
from tempo_agents.encryption import Keyring, KeyringSource
from tempo_agents.errors import ConfigurationError, ToolNotFoundError
from tempo_agents.notifications import AnswerLinkMaker, NotificationSender, NotificationSettings
from tempo_agents.store.base import Store
from tempo_agents.store.transcript_cache import TranscriptCache
from tempo_agents.store.url import open_store
from tempo_agents.tools.tool import Tool

__all__ = ["Registry", "with_sub_agents"]


class Registry:
    """Agents, tools, hooks and approval policies by name, and the store.

    Run options that carry code cannot travel from a client to a worker, so hooks and approval
    policies are registered here by name and a run names them (``hooks="audit"``).
    """

    def __init__(
        self,
        *,
        agents: Sequence[Agent] = (),
        tools: Mapping[str, Tool] | Sequence[Tool] = (),
        hooks: Mapping[str, ToolHooks | Mapping[str, Any]] | None = None,
        approval_policies: Mapping[str, ApprovalPolicy] | None = None,
        store: str | Store | None = None,
        prices: PriceTable | Mapping[str, ModelPrice | Mapping[str, Any]] | None = None,
        notifications: NotificationSettings | None = None,
        answer_links: AnswerLinkMaker | None = None,
        approver_policies: Mapping[str, ApproverPolicy] | None = None,
        encryption_keys: Keyring | KeyringSource | None = None,
        groups: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self._encryption_keys = encryption_keys
        """What a store opened from a URL seals with (``None``: ``$TEMPO_AGENTS_ENCRYPTION_KEYS``, if set)."""
        if isinstance(prices, PriceTable):
            self.prices = prices
        else:
            self.prices = PriceTable(prices) if prices is not None else PriceTable.from_environment()
        """Prices per model (given, else the defaults with ``$TEMPO_AGENTS_PRICES``'s file over them): what a
        model step costs."""
        self._agents: dict[str, Agent] = {}
        for agent in agents:
            if agent.id in self._agents:
                raise ConfigurationError(f'two agents share the id "{agent.id}"')
            self._agents[agent.id] = agent
        for agent in with_sub_agents(agents):  # sub-agents run as runs of their own, on the same workers
            if self._agents.setdefault(agent.id, agent) is not agent:
                raise ConfigurationError(
                    f'two agents share the id "{agent.id}": a sub-agent runs under its own id beside every other '
                    "agent of the App, so give one of them another id"
                )
        tool_list = list(tools.values()) if isinstance(tools, Mapping) else list(tools)
        self._tools: dict[str, Tool] = {tool.id: tool for tool in tool_list}
        for agent in self._agents.values():
            for tool in agent.tools.values():
                if not is_child_tool(tool):  # it needs the agent's run
                    self._tools.setdefault(tool.id, tool)
        self._hooks: dict[str, ToolHooks] = {}
        for name, value in (hooks or {}).items():
            coerced = ToolHooks.coerce(value, where=f'App hooks "{name}"')
            if coerced is not None:
                self._hooks[name] = coerced
        self._approval_policies: dict[str, ApprovalPolicy] = dict(approval_policies or {})
        self._approver_policies: dict[str, ApproverPolicy] = dict(approver_policies or {})
        named = [tool.approvers for tool in self._tools.values()] + [agent.approvers for agent in self._agents.values()]
        for approvers in named:
            if isinstance(approvers, str):
                self.approver_policy(approvers)  # an unknown policy is named now, not when a call waits
        self._store_source: str | Store | None = store
        self._store: Store | None = store if isinstance(store, Store) else None
        self._transcripts: TranscriptCache | None = None
        self.notifier: NotificationSender | None = None
        """Sends the runs' notification events (``None``: no channel is configured)."""
        self._answer_links = answer_links
        self.group_members = members_by_group(groups or {})
        """Group name → its members (from principal → groups): each gets notification links of its own."""
        if notifications is not None:
            self.use_notifications(notifications)

    def use_notifications(self, settings: NotificationSettings) -> None:
        """Send the runs' events to these channels (a worker's ``--notifications`` file replaces the App's)."""
        self._check_channel_names(settings)
        self.notifier = (
            NotificationSender(settings, self._answer_links, self.group_members) if settings.channels else None
        )

    def _check_channel_names(self, settings: NotificationSettings) -> None:
        for agent in self._agents.values():
            for owner, names in [(f'agent "{agent.id}"', agent.notify)] + [
                (f'tool "{tool.id}" of agent "{agent.id}"', tool.notify) for tool in agent.tools.values()
            ]:
                unknown = [name for name in names or [] if name not in {c.name for c in settings.channels}]
                if unknown:
                    raise ConfigurationError(f"{owner} names notification channel(s) {unknown} that are not defined")

    def agent(self, agent_id: str) -> Agent:
        """The registered agent with this id."""
        try:
            return self._agents[agent_id]
        except KeyError:
            known = ", ".join(sorted(self._agents)) or "none"
            raise ConfigurationError(f'no agent "{agent_id}" is registered on this App (registered: {known})') from None

    @property
    def agents(self) -> list[Agent]:
        return list(self._agents.values())

    @property
    def workflow_classes(self) -> list[type]:
        """The Python workflows the agents offer as tools: workers of the App run them too."""
        classes: list[type] = []
        for agent in self._agents.values():
            for spec in agent.workflows.values():
                if spec.workflow_class is not None and spec.workflow_class not in classes:
                    classes.append(spec.workflow_class)
        return classes

    def tool(self, tool_id: str) -> Tool:
        """A tool by its id, from the registered tools and the agents' tools."""
        try:
            return self._tools[tool_id]
        except KeyError:
            raise ToolNotFoundError("Tool not found") from None

    @property
    def tools(self) -> dict[str, Tool]:
        return dict(self._tools)

    def run_hooks(self, name: str | None) -> ToolHooks | None:
        """The hooks registered under ``name`` (``None`` for none)."""
        if name is None:
            return None
        try:
            return self._hooks[name]
        except KeyError:
            known = ", ".join(sorted(self._hooks)) or "none"
            raise ConfigurationError(
                f'no hooks named "{name}" are registered on this App (registered: {known})'
            ) from None

    def approval_policy(self, name: str) -> ApprovalPolicy:
        """The approval policy registered under ``name``."""
        try:
            return self._approval_policies[name]
        except KeyError:
            known = ", ".join(sorted(self._approval_policies)) or "none"
            raise ConfigurationError(
                f'no approval policy named "{name}" is registered on this App (registered: {known})'
            ) from None

    def approver_policy(self, name: str) -> ApproverPolicy:
        """The approver policy registered under ``name``."""
        try:
            return self._approver_policies[name]
        except KeyError:
            known = ", ".join(sorted(self._approver_policies)) or "none"
            raise ConfigurationError(
                f'no approver policy named "{name}" is registered on this App (registered: {known})'
            ) from None

    @property
    def store(self) -> Store:
        """The store (opened on first use)."""
        if self._store is None:
            assert not isinstance(self._store_source, Store)
            # None: $TEMPO_AGENTS_STORE or the default; keys: the App's, else $TEMPO_AGENTS_ENCRYPTION_KEYS
            self._store = open_store(self._store_source, keyring=self._encryption_keys)
        return self._store

    def use_store(self, store: str | Store) -> None:
        """Replace the store (before any run uses it): the CLI's ``--store``."""
        self._store_source = store
        self._store = store if isinstance(store, Store) else None
        self._transcripts = None
        if self._store is None:
            _ = self.store  # open it now, so a bad URL is reported here

    @property
    def transcripts(self) -> TranscriptCache:
        """Parsed transcripts of the runs this worker works on, read incrementally."""
        if self._transcripts is None:
            self._transcripts = TranscriptCache(self.store)
        return self._transcripts


def with_sub_agents(agents: Iterable[Agent]) -> Iterator[Agent]:
    """Every agent, then its sub-agents, depth first, each once."""
    seen: set[int] = set()
    stack = list(agents)[::-1]
    while stack:
        agent = stack.pop()
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        yield agent
        stack.extend(list(agent.agents.values())[::-1])
