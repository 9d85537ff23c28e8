"""Waiting for people: a charge that waits until someone confirms it (or three days pass). The answer comes from
this same program here; in production it comes from the dashboard, the HTTP API or any other process, days later,
after any number of worker and server restarts."""

from datetime import timedelta

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


class ChargeIn(BaseModel):
    amount: int


async def charge(data: ChargeIn, ctx: ToolContext) -> dict[str, int] | None:
    if ctx.resume_data is None:
        assert ctx.suspend is not None  # None only when the tool is executed outside a run
        await ctx.suspend({"amount": data.amount}, expires_in=timedelta(days=3))
        return None  # the run waits here; the answer runs execute again, with resume_data
    if ctx.expired:  # nobody answered in three days
        return {"charged": 0}
    return {"charged": data.amount if ctx.resume_data["confirmed"] else 0}


charge_tool = create_tool(id="charge", description="Charge the customer", input_schema=ChargeIn, execute=charge)
model = ScriptedModel(
    [
        ScriptedResponse(tool_calls=[ScriptedToolCall("charge", {"amount": 990})]),
        ScriptedResponse(text="Charged 990."),
    ]
)
app = App(agents=[Agent(id="pay", instructions="You charge customers.", model=model, tools={"charge": charge_tool})])


async def main() -> None:
    await app.connect("localhost:7233")
    async with app.worker():
        first = await app.agent("pay").generate("charge 990")
        print(first.finish_reason)  # suspended: the run waits, no worker is busy
        done = await app.agent("pay").resume_generate({"confirmed": True}, run_id=first.run_id)
        print(done.finish_reason, done.text, [result.payload.result for result in done.tool_results])


run_program(main())  # asyncio.run(main()), then the process ends at once (see run_program)
