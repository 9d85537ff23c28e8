"""The settings of "Threads": a support agent whose first run is still working when the block sends more messages
to its thread (the block's queued run must be taken out of the queue and its refused message start nothing), and a
payments agent whose payment waits for a manager while the person goes on chatting on the same thread (the rest of
the payment must read what was said meanwhile)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.models.model import ModelRequest
from tests.support.docs_scenes.scene import Names, served_app
from tests.support.thread_agents import Gate, gated_agent

__all__ = ["busy_thread", "payment_waits_on_a_thread"]

MEMORY = {"thread": "T-42", "resource": "acme"}


@asynccontextmanager
async def busy_thread(names: Names, address: str) -> AsyncIterator[None]:
    gate = Gate()
    async with served_app(address, [gated_agent(gate, "support")]) as app:
        names["app"] = app
        yield
        first, second, thread = names["first"], names["second"], names["thread"]
        outcome = second.thread_outcome
        assert (outcome.outcome, outcome.active_run_id, outcome.position) == ("queued", first.run_id, 1)
        assert [entry.run_id for entry in thread.active] == [first.run_id]
        assert [entry.run_id for entry in thread.queued] == [second.run_id]  # the refused message is not there
        gate.open()
        assert await first.text == "My order has not arrived. after 1"
        said = (await app.thread("T-42", resource_id="acme")).messages
        assert [(message["role"], message["content"][0]["text"]) for message in said] == [
            ("user", "My order has not arrived."),
            ("assistant", "My order has not arrived. after 1"),
        ]


def _payments(request: ModelRequest) -> ScriptedResponse:
    """Pays when asked to (a call waiting for a manager), answers anything else at once; the rest of the payment
    says what it read."""
    said = [message.text for message in request.messages if message.role == "user"]
    if request.step > 0:
        return ScriptedResponse(text="Paid. Read meanwhile: " + " | ".join(said[1:]))
    if said[-1] == "Pay the supplier's invoice":
        return ScriptedResponse(tool_calls=[ScriptedToolCall("pay", {"amount": 990}, id="call-1")])
    return ScriptedResponse(text=f"Done: {said[-1]}")


@asynccontextmanager
async def payment_waits_on_a_thread(names: Names, address: str) -> AsyncIterator[None]:
    paid: list[int] = []

    async def pay(data: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        paid.append(data["amount"])
        return {"paid": data["amount"]}

    schema = {"type": "object", "properties": {"amount": {"type": "integer"}}, "required": ["amount"]}
    tool = create_tool(id="pay", description="Pay", input_schema=schema, execute=pay, require_approval=True)
    model = ScriptedModel(_payments)
    agent = Agent(id="payments", model=model, tools={"pay": tool})
    async with served_app(address, [agent]) as app:
        names.update(app=app, memory=dict(MEMORY))
        yield
        assert names["first"].finish_reason == "suspended"
        await app.client.get_workflow_handle(names["first"].run_id).result()
    assert paid == [990]
    [rest] = [request for request in model.requests if request.step == 1]
    said = [message.text for message in rest.messages if message.role == "user"]
    assert said[:3] == ["Pay the supplier's invoice", "Also, what is our balance?", "And book a call with Bob"]
