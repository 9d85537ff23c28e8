"""The rule providers hold a transcript to, on our messages: every tool call of an assistant message is answered by
exactly one tool result in the tool messages right after it, and no result answers a call not made just before."""

from __future__ import annotations

from collections.abc import Sequence

from tempo_agents.models.messages import Message


def transcript_refusal(messages: Sequence[Message]) -> str | None:
    """Why a provider would refuse ``messages`` (``None``: it would accept them)."""
    open_calls: set[str] = set()
    answered: set[str] = set()
    for message in messages:
        if message.role == "tool":
            for result in message.tool_results:
                if result.tool_call_id in answered:
                    return f"two results for tool call {result.tool_call_id}"
                if result.tool_call_id not in open_calls:
                    return f"a result for tool call {result.tool_call_id}, which was not made just before"
                open_calls.discard(result.tool_call_id)
                answered.add(result.tool_call_id)
            continue
        if open_calls:
            return f"tool call(s) {', '.join(sorted(open_calls))} without a result"
        if message.role == "assistant":
            open_calls = {call.tool_call_id for call in message.tool_calls}
            answered = set()
    if open_calls:
        return f"tool call(s) {', '.join(sorted(open_calls))} without a result"
    return None
