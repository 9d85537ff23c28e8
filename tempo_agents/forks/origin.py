"""A fork's origin as the store keeps it: its transcript cut at a step, and its tool calls' outcomes.

A fork never copies its origin into Temporal history: its workflow input names the origin (run and step,
:class:`ForkOrigin`) and the fork's first model step copies the origin's transcript from the store into its own
(:func:`seed_fork`). Everything here reads the origin and writes only the fork's own rows; the origin's journal,
transcript and memory thread are never written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tempo_agents.errors import ConfigurationError
from tempo_agents.models.messages import Message
from tempo_agents.store.base import HISTORY_STEP, INPUT_STEP, Store, TranscriptEntry
from tempo_agents.workflows.payloads import ForkOrigin

__all__ = [
    "FORK_STEP",
    "TOOL_REUSED_CHUNK",
    "ReusedOutcome",
    "StepState",
    "canonical",
    "check_fork_point",
    "copied_steps",
    "last_good_step",
    "reusable_outcome",
    "seed_fork",
    "step_states",
]

FORK_STEP = -3
"""Transcript step of a fork's copy of its origin (before the thread history and input steps, so it reads first)."""

TOOL_REUSED_CHUNK = "data-tool-reused"
"""The chunk that marks a fork's call answered from its origin's outcome (the tool did not run)."""

_WAITING_MARKERS = ("suspended", "awaitingApproval")


def canonical(value: Any) -> str:
    """Arguments as one comparable text (keys sorted), so equal arguments compare equal however they were written."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _is_waiting(result: Any) -> bool:
    return isinstance(result, dict) and any(result.get(marker) is True for marker in _WAITING_MARKERS)


@dataclass(frozen=True)
class StepState:
    """One model step of a run, from its transcript: whether every call it made has ended."""

    step: int
    calls: int
    unended: tuple[str, ...]
    """Ids of calls with no result yet (waiting for a person, still running, or lost with the run)."""


def step_states(entries: Sequence[TranscriptEntry]) -> list[StepState]:
    """The run's model steps in order, each with the calls it made that have not ended."""
    steps: dict[int, tuple[list[str], set[str]]] = {}
    for entry in entries:
        if entry.step < 0:
            continue
        calls, ended = steps.setdefault(entry.step, ([], set()))
        message = Message.model_validate(entry.message)
        calls.extend(call.tool_call_id for call in message.tool_calls)
        ended.update(r.tool_call_id for r in message.tool_results if not _is_waiting(r.result))
    return [
        StepState(step, len(calls), tuple(c for c in calls if c not in ended))
        for step, (calls, ended) in sorted(steps.items())
    ]


def copied_steps(entries: Sequence[TranscriptEntry]) -> int:
    """How many model steps of the run's conversation its transcript copied from its origin (a fork's; 0 for a run
    that is no fork): the number its own step 0 has in the conversation, as users number steps."""
    return sum(1 for entry in entries if entry.step == FORK_STEP and entry.message.get("role") == "assistant")


def last_good_step(entries: Sequence[TranscriptEntry]) -> int:
    """The step a retry forks at: the number of leading model steps whose calls all ended."""
    good = 0
    for state in step_states(entries):
        if state.step != good or state.unended:
            break
        good += 1
    return good


def check_fork_point(run_id: str, entries: Sequence[TranscriptEntry], at_step: int, first: int = 0) -> None:
    """Refuse a fork point past the run's steps, or one that keeps a call that never ended (the model would read a
    call without its result). ``at_step`` is the run's own step; ``first`` the number its own step 0 has in the
    conversation (:func:`copied_steps`), which every step named in a refusal is numbered by."""
    states = step_states(entries)
    if not entries:
        raise ConfigurationError(f'run "{run_id}" has no transcript in this store: nothing to fork')
    known = len(states)
    if at_step > known:
        copied = "" if not first else " (step 0 was" if first == 1 else f" (steps 0 to {first - 1} were"
        copied += " copied from its origin)" if first else ""
        raise ConfigurationError(
            f'run "{run_id}" has {first + known} model step(s){copied}: fork at a step from {first} to {first + known}'
        )
    for state in states[:at_step]:
        if state.unended:
            shown = state.step + first
            raise ConfigurationError(
                f'step {shown} of run "{run_id}" has calls that did not end ({", ".join(state.unended)}): '
                f"fork at step {shown} or before (the fork asks the model again at that step)"
            )


async def seed_fork(store: Store, run_id: str, fork: ForkOrigin) -> None:
    """Copy the origin's transcript before ``fork.step`` (the origin's own step ``fork.cut`` when it is a fork) into
    the fork's (``run_id``) under :data:`FORK_STEP`: its thread history, its input (or ``fork.replace_input``), the
    steps it copied from its own origin, its steps. Idempotent (the same rows every time)."""
    end = fork.step if fork.cut is None else fork.cut
    origin = await store.get_transcript(fork.run_id)
    replacement = None if fork.replace_input is None else [message.to_wire() for message in fork.replace_input]
    copied: list[dict[str, Any]] = []
    for entry in origin:
        if entry.step >= end or (entry.step < HISTORY_STEP and entry.step != FORK_STEP):
            continue
        if replacement is not None and (entry.step == INPUT_STEP or entry.step >= 0):
            copied.extend(replacement)  # in the input's place: after the history, before the first step
            replacement = []
        if entry.step == INPUT_STEP and fork.replace_input is not None:
            continue
        copied.append(entry.message)
    if replacement:
        copied.extend(replacement)
    rows = [TranscriptEntry(FORK_STEP, f"fork-{n:06d}", n, message) for n, message in enumerate(copied)]
    if rows:
        await store.put_transcript(run_id, rows)


@dataclass(frozen=True)
class ReusedOutcome:
    """How a call of the origin with the same tool and arguments ended: what the model read, and whether it was an
    error. ``step``: the origin's step that made it, numbered in the conversation as users see it."""

    tool_call_id: str
    step: int
    result: Any
    is_error: bool


async def reusable_outcome(store: Store, fork: ForkOrigin, tool_name: str, args: Any) -> ReusedOutcome | None:
    """The outcome of the origin's first call of ``tool_name`` with exactly ``args`` that ended (a result or an
    error; a call that waited for a person is not reusable), or ``None``."""
    if fork.reuse != "tools" or tool_name in fork.rerun:
        return None
    wanted = canonical(args)
    first = 0 if fork.cut is None else fork.step - fork.cut  # the conversation's number of the origin's own step 0
    calls: dict[str, int] = {}
    for entry in await store.get_transcript(fork.run_id):
        if entry.step < 0:
            continue
        message = Message.model_validate(entry.message)
        for call in message.tool_calls:
            if call.tool_name == tool_name and canonical(call.args) == wanted:
                calls[call.tool_call_id] = entry.step + first
        for result in message.tool_results:
            if result.tool_call_id in calls and not _is_waiting(result.result):
                return ReusedOutcome(result.tool_call_id, calls[result.tool_call_id], result.result, result.is_error)
    return None
