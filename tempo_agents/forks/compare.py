"""Two runs side by side: their conversations aligned by model step, the first step where they differ, each step's
tool calls and arguments diffed, and their usage. Read from the store only. Steps are numbered in the conversation,
as everywhere users see them: a fork's copied steps count as its own, so a fork at step k lines up with its origin
on steps 0 to k-1, and its ``steps`` count them too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tempo_agents.forks.origin import canonical, copied_steps
from tempo_agents.models.messages import Message
from tempo_agents.store.base import Store, TranscriptEntry

__all__ = ["align", "compare_runs", "conversation_steps", "run_usage"]


def conversation_steps(entries: Sequence[TranscriptEntry]) -> list[dict[str, Any]]:
    """The run's model steps in the order the model saw them: each with the messages given to the model before it
    (``prompt``: user and system text), the text it wrote and its tool calls with their results."""
    steps: list[dict[str, Any]] = []
    prompt: list[dict[str, str]] = []
    calls: dict[str, dict[str, Any]] = {}
    for entry in entries:
        message = Message.model_validate(entry.message)
        if message.role == "assistant":
            step_calls = [
                {"toolCallId": c.tool_call_id, "toolName": c.tool_name, "args": c.args, "result": None, "isError": None}
                for c in message.tool_calls
            ]
            calls.update((c["toolCallId"], c) for c in step_calls)
            steps.append({"prompt": prompt, "text": message.text, "toolCalls": step_calls})
            prompt = []
        elif message.role == "tool":
            for result in message.tool_results:
                if result.tool_call_id in calls:
                    calls[result.tool_call_id].update(result=result.result, isError=result.is_error)
        else:
            prompt.append({"role": message.role, "text": message.text})
    if prompt:  # messages the model has not answered yet (a fork's edit before its first step ran)
        steps.append({"prompt": prompt, "text": None, "toolCalls": []})
    return steps


def _call_view(call: dict[str, Any] | None) -> dict[str, Any] | None:
    if call is None:
        return None
    return {k: call[k] for k in ("toolCallId", "toolName", "args", "result", "isError")}


def _calls_diff(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[dict[str, Any]]:
    diffs = []
    for index in range(max(len(a), len(b))):
        left = a[index] if index < len(a) else None
        right = b[index] if index < len(b) else None
        diff: dict[str, Any] = {"index": index, "a": _call_view(left), "b": _call_view(right)}
        if left is None or right is None:
            diff.update(sameTool=False, sameArgs=False, sameResult=False, changedArgs=[])
        else:
            diff.update(
                sameTool=left["toolName"] == right["toolName"],
                sameArgs=canonical(left["args"]) == canonical(right["args"]),
                sameResult=canonical(left["result"]) == canonical(right["result"]),
                changedArgs=_changed_keys(left["args"], right["args"]),
            )
        diffs.append(diff)
    return diffs


def _changed_keys(a: Any, b: Any) -> list[str]:
    """The argument names whose values differ (both arguments objects), else ``[]``."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return []
    return sorted(k for k in set(a) | set(b) if canonical(a.get(k)) != canonical(b.get(k)) or (k in a) != (k in b))


def _step_key(step: dict[str, Any]) -> str:
    calls = [(c["toolName"], c["args"], c["result"], c["isError"]) for c in step["toolCalls"]]
    return canonical([step["prompt"], step["text"], calls])


def align(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int | None]:
    """The two runs' steps side by side, each marked ``same`` or not, and the first step where they differ."""
    aligned = []
    first: int | None = None
    for step in range(max(len(a), len(b))):
        left = a[step] if step < len(a) else None
        right = b[step] if step < len(b) else None
        same = left is not None and right is not None and _step_key(left) == _step_key(right)
        if not same and first is None:
            first = step
        aligned.append(
            {
                "step": step,
                "same": same,
                "a": left,
                "b": right,
                "toolCalls": _calls_diff(left["toolCalls"] if left else [], right["toolCalls"] if right else []),
            }
        )
    return aligned, first


async def run_usage(store: Store, run_id: str, first: int = 0) -> dict[str, Any] | None:
    """The run's usage and steps as its latest ``finish`` says (``None`` before its first segment ended); ``first``:
    the steps its conversation had before its own (a fork's copied ones), counted in ``steps``."""
    latest: dict[str, Any] | None = None
    offset = 0
    while True:
        page = await store.read_chunks(run_id, offset, 1000)
        if not page:
            return latest
        for entry in page:
            if entry.chunk.get("type") == "finish":
                output = entry.chunk.get("payload", {}).get("output", {})
                steps = output.get("steps")
                latest = {"usage": output.get("usage"), "steps": steps + first if isinstance(steps, int) else steps}
        offset = page[-1].offset + 1


async def compare_runs(store: Store, a: str, b: str) -> dict[str, Any]:
    """``a`` and ``b`` side by side (``steps``, ``firstDifferentStep``, each run's ``usage``)."""
    entries_a, entries_b = await store.get_transcript(a), await store.get_transcript(b)
    steps, first = align(conversation_steps(entries_a), conversation_steps(entries_b))
    usage_a = await run_usage(store, a, copied_steps(entries_a))
    usage_b = await run_usage(store, b, copied_steps(entries_b))
    return {
        "a": {"runId": a, **(usage_a or {"usage": None, "steps": None})},
        "b": {"runId": b, **(usage_b or {"usage": None, "steps": None})},
        "firstDifferentStep": first,
        "steps": steps,
    }
