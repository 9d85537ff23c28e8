"""The budget check of a model step, and what the step adds to the usage counters.

Before the model is called the step reads the counters of its run, thread and resource (for the period of the
workflow's time) and, when a limit is reached, does not call the model: it journals ``data-budget-exceeded`` and
ends the segment as the run's policy says (``finish``: the run ends with ``budget-exceeded``; ``wait``: the run
waits for a person, listed with the store's waiting calls). After the model answers, the step's tokens and cost
go into the counters in the transaction that saves its outcome (ARCHITECTURE.md, "Budgets").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from temporalio import activity

from tempo_agents.activities.segment_close import close_segment
from tempo_agents.budgets import (
    BUDGET_TOOL_NAME,
    Budget,
    BudgetStop,
    Counter,
    Spent,
    budget_wait_id,
    cost_nanos,
    reached,
    step_counters,
)
from tempo_agents.deprecations import moved_name
from tempo_agents.errors import ConfigurationError
from tempo_agents.journal import constructors
from tempo_agents.journal.outbox import StepFinishNote
from tempo_agents.journal.writer import RunJournal
from tempo_agents.metrics import BUDGET_STOPS, COST
from tempo_agents.models.model import FinishEvent, Model
from tempo_agents.models.usage import Usage
from tempo_agents.store.base import ChunkWrite, UsageCharge, WaitingCall, WaitingChange
from tempo_agents.workflows.payloads import ModelStepInput, ModelStepResult, PendingCall

__all__ = [
    "BUDGET_CHUNK",
    "BUDGET_EXCEEDED",
    "StepCounters",
    "check_budget",
    "check_priced",
    "spends_tokens",
    "step_cost",
    "stop_step",
]

if TYPE_CHECKING:
    from tempo_agents.activities.registry import Registry

BUDGET_EXCEEDED = "budget-exceeded"
"""The finish reason of a run ended by its budget, and of the model step that was not sent."""

BUDGET_CHUNK = "data-budget-exceeded"


@dataclass(frozen=True)
class StepCounters:
    """The counters a step reads and adds to, and its time."""

    counters: list[Counter]
    now: datetime

    @classmethod
    def of(cls, step_input: ModelStepInput) -> StepCounters:
        now = step_input.now or datetime.now(UTC)
        memory = step_input.options.memory
        thread = memory.thread if memory is not None else None
        resource = memory.resource if memory is not None else None
        return cls(step_counters(step_input.run_id, thread, resource, now), now)

    def charges(self, tokens: int, cost: int) -> list[UsageCharge]:
        return [UsageCharge(c.scope_key, c.period_key, tokens, cost) for c in self.counters]


def spends_tokens(usage: Usage) -> int:
    """The tokens a step counts against a budget: its total (input plus output when the provider gave none)."""
    return usage.total_tokens or usage.input_tokens + usage.output_tokens


async def check_budget(registry: Registry, step_input: ModelStepInput, found: StepCounters) -> BudgetStop | None:
    """The limit the run's counters have reached, or ``None`` (also when the run has no budget)."""
    budget = step_input.options.budget
    if budget is None:
        return None
    keyed = [(c.scope_key, c.period_key) for c in found.counters]
    counted = await registry.store.usage_counters(keyed)
    spent = [
        (c.scope, c.period, c.shown_period, Spent(tokens=t, cost_nanos=n))
        for c in found.counters
        for t, n in [counted.get((c.scope_key, c.period_key), (0, 0))]
    ]
    stop = reached(budget, spent)
    if stop is None:
        return None
    wait_id = budget_wait_id(step_input.step, step_input.budget_waits) if budget.on_exceeded == "wait" else None
    return stop.model_copy(update={"step": step_input.step, "wait_id": wait_id})


def step_cost(registry: Registry, model: Model, finish: FinishEvent, agent_id: str) -> int:
    """What the step cost (billionths of a US dollar), by the price table; counted in the metrics too."""
    price = registry.prices.price(model.provider, model.model_id)
    if price is None:
        return 0
    usage = finish.usage
    cost = cost_nanos(price, usage.input_tokens, usage.output_tokens, finish.cached_input_tokens)
    COST.labels(agent=agent_id, model=f"{model.provider}/{model.model_id}").inc(cost / 1e9)
    return cost


def check_priced(registry: Registry, budget: Budget | None, model: Model, agent_id: str) -> None:
    """A budget that limits cost needs the model's price: without one the run would spend unmetered money."""
    if budget is None or registry.prices.price(model.provider, model.model_id) is not None:
        return
    scopes = [budget.run, *(p for s in (budget.thread, budget.resource) if s for p in (s.total, s.day, s.month))]
    if any(limits is not None and limits.cost_usd is not None for limits in scopes):
        raise ConfigurationError(
            f'agent "{agent_id}": the run\'s budget limits cost, but the price table has no price for model '
            f'"{model.provider}/{model.model_id}"; add one (App(prices={{...}}), TEMPO_AGENTS_PRICES or '
            "tempo-agents worker --prices)"
        )


async def stop_step(
    registry: Registry,
    journal: RunJournal,
    step_input: ModelStepInput,
    stop: BudgetStop,
    writes: list[ChunkWrite],
) -> ModelStepResult:
    """Journal the stop (with the step's pending writes) and end the segment as the policy says."""
    store = registry.store
    run_id = step_input.run_id
    chunk = constructors.data_chunk(run_id, BUDGET_CHUNK, stop.to_wire())
    key = f"budget-exceeded:{step_input.step}:{step_input.budget_waits}"
    waiting = None
    if stop.wait_id is not None:
        waiting = WaitingChange(waits=[_waiting_call(step_input, stop)])
    await store.record(run_id, [], [*writes, ChunkWrite(chunk, key)], waiting=waiting, fence=journal.fence)
    BUDGET_STOPS.labels(agent=step_input.agent_id, scope=stop.scope, period=stop.period, policy=stop.policy).inc()
    result = ModelStepResult(finish_reason=BUDGET_EXCEEDED, usage=Usage(), budget_stop=stop)
    close = step_input.close
    if close is None:  # a run of before segments were ended by activities: the workflow ends it
        return result
    reason = "suspended" if stop.wait_id is not None else BUDGET_EXCEEDED
    note = StepFinishNote(step=step_input.step, reason=reason, usage=Usage(), is_continued=False, segment=close.segment)
    close = close.model_copy(update={"step_finish": note})
    await close_segment(registry, journal, step_input.options, close, reason, close.usage)
    return result.model_copy(update={"closed_segment": True})


def _waiting_call(step_input: ModelStepInput, stop: BudgetStop) -> WaitingCall:
    now = datetime.now(UTC)
    memory = step_input.options.memory
    assert stop.wait_id is not None
    pending = PendingCall(
        tool_call_id=stop.wait_id,
        tool_name=BUDGET_TOOL_NAME,
        suspend_payload=stop.to_wire(),
        suspended_at=now,
        step=step_input.step,
    )
    return WaitingCall(
        run_id=step_input.run_id,
        tool_call_id=stop.wait_id,
        task_queue=activity.info().task_queue if activity.in_activity() else "",
        agent_id=step_input.agent_id,
        thread_id=memory.thread if memory is not None else None,
        resource_id=memory.resource if memory is not None else None,
        call=pending.to_wire(),
        suspended_at=now.timestamp(),
    )


def __getattr__(name: str) -> Any:
    """A name the previous release had here and that moved: found where it lives now, with a warning."""
    return moved_name(__name__, name)
