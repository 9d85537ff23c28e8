"""Edit, then approve: a payment waits for approval, and the approver changes its arguments before it runs. The
tool runs with exactly the approved arguments; the journal records the change and who made it."""

from pydantic import BaseModel

from tempo_agents import (
    Agent,
    App,
    ScriptedModel,
    ScriptedResponse,
    ScriptedToolCall,
    ToolContext,
    create_tool,
    run_program,
)


class PaymentIn(BaseModel):
    amount: int
    to: str


async def pay(data: PaymentIn, ctx: ToolContext) -> dict[str, object]:
    return {"paid": data.amount, "to": data.to}


payment = create_tool(
    id="pay", description="Pay a supplier", input_schema=PaymentIn, execute=pay, require_approval=True
)
model = ScriptedModel(
    [
        ScriptedResponse(tool_calls=[ScriptedToolCall("pay", {"amount": 990, "to": "acme"})]),
        ScriptedResponse(text="Paid."),
    ]
)
app = App(agents=[Agent(id="payments", instructions="You pay invoices.", model=model, tools={"pay": payment})])


async def main() -> None:
    await app.connect("localhost:7233")
    async with app.worker():
        first = await app.agent("payments").generate("Pay the supplier's invoice")
        print(first.finish_reason)  # suspended: the call waits for an approval
        approved = await app.approve_tool_call(
            "payments", run_id=first.run_id, answered_by="alice", args={"amount": 450, "to": "acme-escrow"}
        )
        done = await approved.result()
        print(done.finish_reason, [result.payload.result for result in done.tool_results])


run_program(main())  # asyncio.run(main()), then the process ends at once (see run_program)
