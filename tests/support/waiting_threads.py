"""Runs that wait on a thread: an agent that pays after an approval, and waits for a thread's state."""

from __future__ import annotations

import asyncio

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.models.messages import Message
from tempo_agents.models.model import ModelRequest
from tests.support.transcripts import transcript_refusal

RESOURCE = "u1"


def texts(messages: list[Message], role: str) -> list[str]:
    return [m.text for m in messages if m.role == role]


async def until_idle(app: App, thread_id: str) -> None:
    while (await app.thread(thread_id, resource_id=RESOURCE)).active:
        await asyncio.sleep(0.05)


async def until_waiting(app: App, thread_id: str, count: int) -> list[str]:
    """The runs that yielded the thread, once ``count`` have (a run tells its thread just after it suspends)."""
    while len(waiting := (await app.thread(thread_id, resource_id=RESOURCE)).waiting) < count:
        await asyncio.sleep(0.05)
    return [entry.run_id for entry in waiting]


def payments_agent(*, agent_id: str = "payments", seen: list[list[Message]] | None = None) -> Agent:
    """Pays after an approval; answers anything else at once; after the approval, says what it saw since."""

    def script(request: ModelRequest) -> ScriptedResponse:
        refusal = transcript_refusal(request.messages)
        if refusal is not None:  # as a provider would: the run fails with it
            raise AssertionError(refusal)
        if seen is not None:
            seen.append(list(request.messages))
        last = request.messages[-1]
        if last.role == "user" and last.text.startswith("Pay ") and request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("pay", {"to": last.text[4:]})])
        if request.step == 0:
            return ScriptedResponse(text=f"noted: {last.text}")
        users = texts(request.messages, "user")
        return ScriptedResponse(text="paid; said meanwhile: " + " | ".join(users))

    pay = create_tool(
        id="pay", description="Pays someone", execute=lambda data: f"paid {data['to']}", require_approval=True
    )
    return Agent(id=agent_id, model=ScriptedModel(script), tools={"pay": pay})
