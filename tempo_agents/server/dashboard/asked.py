"""What a run was asked and what its model saw, read from the run's transcript in the store.

An approver judges a call by what led to it: the user's prompt and the model's text in the step that made the
call. An operator reads each model step's input (the messages new to the model at that step), and its tokens
(the step's saved outcome).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from tempo_agents.forks import copied_steps
from tempo_agents.journal import keys
from tempo_agents.models.messages import Message, TextPart, ToolCallPart, ToolResultPart
from tempo_agents.store.base import HISTORY_STEP, INPUT_STEP, Store, TranscriptEntry

__all__ = ["MAX_STEPS_SHOWN", "TEXT_LIMIT", "asked", "run_steps"]

TEXT_LIMIT = 4000
"""How much of one message's text is sent (the rest is cut, and said to be)."""
MAX_STEPS_SHOWN = 200
"""How many model steps the steps view lists (the first ones)."""


def _cut(text: str) -> str:
    return text if len(text) <= TEXT_LIMIT else f"{text[:TEXT_LIMIT]} … ({len(text) - TEXT_LIMIT} more characters)"


def _message(entry: TranscriptEntry) -> Message | None:
    try:
        return Message.model_validate(entry.message)
    except ValidationError:
        return None


def _summary(message: Message) -> dict[str, Any]:
    """A message as the steps view shows it: its role, its text, the calls it makes and the results it carries."""
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "text": _cut(part.text)})
        elif isinstance(part, ToolCallPart):
            parts.append({"type": "tool-call", "toolName": part.tool_name, "toolCallId": part.tool_call_id})
        elif isinstance(part, ToolResultPart):
            parts.append({"type": "tool-result", "toolName": part.tool_name, "isError": part.is_error})
    return {"role": message.role, "parts": parts}


def _ordered(entries: list[TranscriptEntry], step: int) -> list[TranscriptEntry]:
    return sorted((entry for entry in entries if entry.step == step), key=lambda entry: entry.position)


def _prompt(entries: list[TranscriptEntry]) -> str | None:
    texts = []
    for entry in _ordered(entries, INPUT_STEP):
        message = _message(entry)
        if message is not None and message.role == "user" and message.text:
            texts.append(message.text)
    return _cut("\n\n".join(texts)) if texts else None


async def asked(store: Store, run_id: str, tool_call_id: str | None) -> dict[str, Any]:
    """``prompt`` (the user's words that started the run) and ``leadText`` (the model's text in the step that
    made the call ``tool_call_id``); ``None`` when there is none."""
    entries = await store.get_transcript(run_id)
    lead = None
    for entry in entries:
        if entry.part != "assistant" or entry.step < 0:
            continue
        message = _message(entry)
        if message is not None and any(call.tool_call_id == tool_call_id for call in message.tool_calls):
            lead = _cut(message.text) if message.text else None
            break
    return {"prompt": _prompt(entries), "leadText": lead}


async def run_steps(store: Store, run_id: str) -> dict[str, Any]:
    """The prompt, and per model step: the messages new to the model at that step, how many it was sent in all,
    and its tokens (``usage``: ``None`` while the step runs)."""
    entries = await store.get_transcript(run_id)
    history = len([entry for entry in entries if entry.step == HISTORY_STEP])
    first = [m for m in (_message(entry) for entry in _ordered(entries, INPUT_STEP)) if m is not None]
    last_step = max((entry.step for entry in entries), default=-1)
    steps = []
    sent = history
    new: list[Message] = first
    copied = copied_steps(entries)  # steps are numbered in the conversation: a fork's go on from its origin's
    for step in range(min(last_step + 1, MAX_STEPS_SHOWN)):
        sent += len(new)
        saved = await store.saved_outcome(run_id, keys.model_step_outcome(step))
        usage = saved.get("usage") if isinstance(saved, dict) else None
        steps.append(
            {
                "step": copied + step,
                "input": [_summary(message) for message in new],
                "inputMessages": sent,
                "historyMessages": history if step == 0 else 0,
                "usage": usage,
            }
        )
        new = [m for m in (_message(entry) for entry in _ordered(entries, step)) if m is not None]
    return {"runId": run_id, "prompt": _prompt(entries), "steps": steps}
