"""The model-step activity: one call to the model, streamed into the journal, run in stages.

*Attempt* (``model_step_attempt.py``: the result an earlier attempt saved, else this attempt's number and
journal), *open* (``model_step_inputs.py``: the step's inputs and the workflow's outbox stored, its first chunks),
the *budget* check (``budget_gate.py``: a limit reached ends the step before the model is called), *request*
(``model_request.py``), *stream* (``model_stream.py``: the provider called, its answer journaled as it streams),
*sort* the calls (``model_calls.py``: to run, or answered with a tool error), *record* (``model_step_record.py``:
the result, stored in one transaction; a step that called no tool ends the segment).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tempo_agents.activities.budget_gate import (
    StepCounters,
    check_budget,
    check_priced,
    spends_tokens,
    step_cost,
    stop_step,
)
from tempo_agents.activities.model_calls import sort_calls
from tempo_agents.activities.model_request import build_request, check_web_search
from tempo_agents.activities.model_step_attempt import StepAttempt
from tempo_agents.activities.model_step_inputs import open_step
from tempo_agents.activities.model_step_record import closed_if_done, record_step, step_result
from tempo_agents.activities.model_stream import StreamedStep, stream_answer
from tempo_agents.budgets import BudgetStop
from tempo_agents.deprecations import moved_name
from tempo_agents.models.resolve import resolve_model
from tempo_agents.workflows.payloads import ModelStepInput, ModelStepResult

if TYPE_CHECKING:
    from tempo_agents.activities.registry import Registry

__all__ = ["run_model_step"]


async def run_model_step(registry: Registry, step_input: ModelStepInput) -> ModelStepResult:
    """Run one model step: write the outbox, call the model, journal what it says, store its message.

    A step whose result is saved (its worker died before Temporal heard of it) is answered from the
    store; a step retried after a failure mid-stream first journals ``step-reset``.
    """
    agent = registry.agent(step_input.agent_id)
    attempt = await StepAttempt.begin(registry, step_input)
    journal = attempt.journal
    if attempt.saved is not None:
        return await closed_if_done(registry, journal, step_input, attempt.saved)
    attempt.check_not_lost(agent)
    opened = await open_step(registry, step_input, attempt)

    model = resolve_model(agent.model, agent_id=agent.id)
    check_priced(registry, step_input.options.budget, model, agent.id)
    counters, stop = await _budget_gate(registry, step_input)
    if stop is not None:
        return await stop_step(registry, journal, step_input, stop, opened.writes)

    prepared = await build_request(registry.store, agent, step_input, opened.transcript)
    check_web_search(model, prepared.request)
    streamed = StreamedStep(agent, journal, step_input.step, attempt.number, prepared.messages)
    answer = await stream_answer(model, prepared.request, streamed, journal, opened.writes)

    calls = await sort_calls(agent, journal, step_input, answer.calls)
    result = step_result(agent, answer, calls, prepared.thread_tasks)
    charges = counters.charges(spends_tokens(answer.finish.usage), step_cost(registry, model, answer.finish, agent.id))
    await record_step(registry, journal, step_input, opened.transcript, answer, calls, result, charges)
    return await closed_if_done(registry, journal, step_input, result, opened.transcript)


async def _budget_gate(registry: Registry, step_input: ModelStepInput) -> tuple[StepCounters, BudgetStop | None]:
    """The counters the step adds to, and the limit it reached if any (``None``: the model is called)."""
    if step_input.budget_answered is not None:  # a person answered the budget wait: it no longer waits
        await registry.store.forget_waiting(step_input.run_id, step_input.budget_answered, 0)
    counters = StepCounters.of(step_input)
    return counters, await check_budget(registry, step_input, counters)


def __getattr__(name: str) -> Any:
    """A name the previous release had here and that moved: found where it lives now, with a warning."""
    return moved_name(__name__, name)
