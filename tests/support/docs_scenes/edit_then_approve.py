"""The setting of "Edit, then approve": the example's payment waits for approval (the page's ``app``, connected,
its worker running, and the waiting run's ``run_id``); the block's answer must pay 450 to acme-escrow."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from pydantic import BaseModel

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tests.support.docs_scenes.scene import Names, served_app

__all__ = ["waiting_payment"]


class PaymentIn(BaseModel):
    amount: int
    to: str


@asynccontextmanager
async def waiting_payment(names: Names, address: str) -> AsyncIterator[None]:
    paid: list[PaymentIn] = []

    async def pay(data: PaymentIn, ctx: ToolContext) -> dict[str, object]:
        paid.append(data)
        return {"paid": data.amount, "to": data.to}

    payment = create_tool(
        id="pay", description="Pay a supplier", input_schema=PaymentIn, execute=pay, require_approval=True
    )
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("pay", {"amount": 990, "to": "acme"}, id="call-1")]),
            ScriptedResponse(text="Paid."),
        ]
    )
    async with served_app(address, [Agent(id="payments", model=model, tools={"pay": payment})]) as app:
        first = await app.agent("payments").generate("Pay the supplier's invoice")
        assert first.finish_reason == "suspended"
        names.update(app=app, run_id=first.run_id)
        yield
        await app.client.get_workflow_handle(first.run_id).result()
    assert paid == [PaymentIn(amount=450, to="acme-escrow")]
