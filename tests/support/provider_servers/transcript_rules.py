"""What real providers refuse in a transcript, on their wire formats: a tool call without its result, a result
without its call, two results for one call. Both servers answer such a request with a 400, as the providers do."""

from __future__ import annotations

from typing import Any


def _unanswered(calls: set[str]) -> str:
    return (
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(sorted(calls))}"
    )


def openai_refusal(messages: Any) -> str | None:
    """Why OpenAI's Chat Completions refuses ``messages`` (``None``: it accepts them). A tool message must answer
    a call of the assistant message just before it (or of the tool messages following that one)."""
    if not isinstance(messages, list):
        return None
    open_calls: set[str] = set()
    answered: set[str] = set()
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id in answered:
                return f"messages[{index}]: a second response message for tool_call_id {call_id}."
            if call_id not in open_calls:
                return (
                    f"Invalid parameter: messages[{index}] with role 'tool' must be a response to a preceeding "
                    "message with 'tool_calls'."
                )
            open_calls.discard(call_id)
            answered.add(call_id)
            continue
        if open_calls:
            return _unanswered(open_calls)
        answered = set()
        if role == "assistant":
            open_calls = {str(call.get("id")) for call in message.get("tool_calls") or [] if isinstance(call, dict)}
    if open_calls:
        return _unanswered(open_calls)
    return None


def _blocks(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict) and block.get("type") == kind]


def anthropic_refusal(messages: Any) -> str | None:
    """Why Anthropic's Messages API refuses ``messages`` (``None``: it accepts them). Every ``tool_use`` block needs
    one ``tool_result`` block in the next message, and a ``tool_result`` answers a ``tool_use`` of the message
    just before."""
    if not isinstance(messages, list):
        return None
    previous_uses: set[str] = set()
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        results = [str(block.get("tool_use_id")) for block in _blocks(message, "tool_result")]
        seen: set[str] = set()
        for position, result in enumerate(results):
            if result in seen:
                return f"messages.{index}.content.{position}: each tool_use must have a single result: {result}"
            if result not in previous_uses:
                return (
                    f"messages.{index}.content.{position}: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{result}. Each `tool_result` block must have a corresponding `tool_use` block in the previous "
                    "message."
                )
            seen.add(result)
        missing = previous_uses - seen
        if missing:
            return (
                f"messages.{index - 1}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                f"{', '.join(sorted(missing))}. Each `tool_use` block must have a corresponding `tool_result` block "
                "in the next message."
            )
        previous_uses = (
            {str(block.get("id")) for block in _blocks(message, "tool_use")}
            if message.get("role") == "assistant"
            else set()
        )
    if previous_uses:
        return (
            f"messages.{len(messages) - 1}: `tool_use` ids were found without `tool_result` blocks immediately "
            f"after: {', '.join(sorted(previous_uses))}. Each `tool_use` block must have a corresponding "
            "`tool_result` block in the next message."
        )
    return None
