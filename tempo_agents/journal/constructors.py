"""Typed constructors of the chunks the runtime writes, called by workflow and activity code alike.

Every function returns the wire form (``{type, runId, from, payload}``, camelCase) that the journal
stores and clients read; pure and deterministic, so workflow code may call them.
"""

from __future__ import annotations

from typing import Any

from pydantic_core import to_jsonable_python

from tempo_agents._wire import WireModel
from tempo_agents.journal import keys
from tempo_agents.journal.chunks import ChunkSource
from tempo_agents.journal.outbox import JournalRecord

__all__ = [
    "LOST_AS_LOCAL_ACTIVITY",
    "abort",
    "chunk",
    "data_chunk",
    "mode_changed",
    "resume_rejected",
    "start",
    "step_reset",
    "to_jsonable",
    "tool_error",
    "tool_stopped_message",
]


def to_jsonable(value: Any) -> Any:
    """A JSON-ready copy of a value (pydantic models by alias); raises ``ValueError`` when impossible."""
    try:
        return to_jsonable_python(value, by_alias=True)
    except Exception as error:
        raise ValueError(str(error)) from error


def chunk(run_id: str, chunk_type: str, payload: Any, *, source: ChunkSource = "AGENT") -> dict[str, Any]:
    """A chunk in wire form (a payload model without its unset optional fields)."""
    wire = payload.to_wire() if isinstance(payload, WireModel) else to_jsonable(payload)  # to_wire is JSON-ready
    return {"type": chunk_type, "runId": run_id, "from": source, "payload": wire}


def data_chunk(run_id: str, chunk_type: str, data: dict[str, Any], *, source: ChunkSource = "SYSTEM") -> dict[str, Any]:
    """A ``data-*`` chunk: its fields sit under ``data``, not ``payload``."""
    return {"type": chunk_type, "runId": run_id, "from": source, "data": to_jsonable(data)}


def start(run_id: str, agent_id: str, segment: int, fork_of: tuple[str, int] | None = None) -> JournalRecord:
    """The ``start`` of a segment; a fork's first names its origin (``forkOf``: run id and step)."""
    payload: dict[str, Any] = {"agentId": agent_id}
    if fork_of is not None:
        payload["forkOf"] = {"runId": fork_of[0], "step": fork_of[1]}
    return JournalRecord(chunk=chunk(run_id, "start", payload), key=keys.start(segment))


def abort(run_id: str, segment: int) -> JournalRecord:
    return JournalRecord(chunk=chunk(run_id, "abort", {}), key=keys.abort(segment))


def mode_changed(run_id: str, step: int, mode: str, previous_mode: str | None) -> JournalRecord:
    return JournalRecord(
        chunk=data_chunk(run_id, "data-mode", {"mode": mode, "previousMode": previous_mode}),
        key=keys.mode_change(step, mode),
    )


def resume_rejected(run_id: str, code: str, message: str, tool_call_id: str | None, **fields: Any) -> dict[str, Any]:
    """A resume that could not be used (a signal's, or data the tool's schema refused): the run keeps waiting."""
    data = {"kind": "resume-rejected", "code": code, "message": message, "toolCallId": tool_call_id, **fields}
    return data_chunk(run_id, "data-error", data)


def tool_error(run_id: str, step: int, tool_call_id: str, tool_name: str, args: Any, message: str) -> JournalRecord:
    payload = {"toolCallId": tool_call_id, "toolName": tool_name, "args": args, "error": message}
    return JournalRecord(
        chunk=chunk(run_id, "tool-error", payload), key=keys.call_outcome(step, tool_call_id, "tool-error")
    )


LOST_AS_LOCAL_ACTIVITY = "it ran as a local activity and never finished"
"""How a local call's workers were lost, for :func:`tool_stopped_message` (a local activity has no failure)."""


def tool_stopped_message(tool_name: str, attempts: int, cause: str) -> str:
    """The tool error of a call whose workers kept dying: the run goes on without its result.
    ``cause``: the last attempt's failure, or :data:`LOST_AS_LOCAL_ACTIVITY`."""
    return (
        f'Tool "{tool_name}" was stopped: the worker running it was lost {attempts} times in a row ({cause}). '
        "It may crash its worker; the run goes on without its result."
    )


def step_reset(run_id: str, step: int, attempt: int, discard_from: int | None) -> dict[str, Any]:
    """A retried model step: clients drop every chunk from ``discardFrom`` up to this one."""
    payload: dict[str, Any] = {"stepNumber": step, "attempt": attempt}
    if discard_from is not None:
        payload["discardFrom"] = discard_from
    return chunk(run_id, "step-reset", payload)
