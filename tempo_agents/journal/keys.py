"""Identity keys of durable journal chunks, spelled in this one module.

A chunk written with a key is durable: writing the same key again (an activity retry, a replayed
workflow handing the same outbox over twice) replaces the chunk in place instead of appending a
duplicate. Keys are unique within a run. A *segment* is the part of a journal between a ``start``
and its ``finish``: the first ends when the run finishes or suspends, every resume opens the next.
"""

from __future__ import annotations

__all__ = [
    "abort",
    "call_outcome",
    "call_round",
    "child_chunk",
    "child_run",
    "error",
    "finish",
    "mode_change",
    "model_step_outcome",
    "provider_chunk",
    "start",
    "step_abandoned",
    "step_finish",
    "step_start",
    "task_update",
    "tool_call",
    "tool_call_outcome",
]


def start(segment: int) -> str:
    return f"start:{segment}"


def finish(segment: int) -> str:
    return f"finish:{segment}"


def error(segment: int) -> str:
    return f"error:{segment}"


def abort(segment: int) -> str:
    return f"abort:{segment}"


def step_start(step: int) -> str:
    return f"{step}:step-start"


def step_abandoned(step: int) -> str:
    """The ``step-reset`` that voids a model step that failed for good."""
    return f"{step}:step-abandoned"


def step_finish(step: int, segment: int) -> str:
    return f"{step}:step-finish:{segment}"


def mode_change(step: int, mode: str) -> str:
    return f"mode:{step}:{mode}"


def provider_chunk(step: int, attempt: int, tool_call_id: str, chunk_type: str) -> str:
    """A provider-executed call or result streamed by one attempt of a model step."""
    return f"{step}:a{attempt}:{tool_call_id}:{chunk_type}"


def tool_call(step: int, tool_call_id: str) -> str:
    return f"{step}:{tool_call_id}:tool-call"


def call_outcome(step: int, tool_call_id: str, chunk_type: str) -> str:
    """How a call ended: ``tool-result``, ``tool-error`` or ``tool-output-denied`` (once per call)."""
    return f"{step}:{tool_call_id}:{chunk_type}"


def call_round(step: int, tool_call_id: str, round: int, what: str, refusals: int = 0) -> str:
    """What one round of a call wrote (a call is run once more after every resume; an answer given after its tool
    refused ``refusals`` answers of the round writes under keys of its own)."""
    return f"{step}:{tool_call_id}:r{round}{_refused(refusals)}:{what}"


def child_run(step: int, tool_call_id: str) -> str:
    """The link from a call to the child workflow it runs as."""
    return f"{step}:{tool_call_id}:child-run"


def child_chunk(step: int, tool_call_id: str, child_offset: int) -> str:
    """A chunk of a call's child run, copied into the parent's journal (the child's offset is unique)."""
    return f"{step}:{tool_call_id}:child:{child_offset}"


def task_update(step: int, tool_call_id: str) -> str:
    return f"{step}:{tool_call_id}:task-updated"


# Saved outcomes: what an activity returned, stored with its last write so a retry answers from the store.


def model_step_outcome(step: int) -> str:
    return f"model-step:{step}"


def tool_call_outcome(step: int, tool_call_id: str, round: int, refusals: int = 0) -> str:
    return f"tool-call:{step}:{tool_call_id}:r{round}{_refused(refusals)}"


def _refused(refusals: int) -> str:
    """Nothing for a round's first answer (the keys of every run before refusals were counted)."""
    return f"x{refusals}" if refusals else ""
