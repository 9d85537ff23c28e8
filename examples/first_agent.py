"""A first agent: a tool, a scripted model and one streamed run on a local Temporal server (localhost:7233)."""

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


class WeatherIn(BaseModel):
    city: str


async def get_weather(data: WeatherIn, ctx: ToolContext) -> dict[str, object]:
    await ctx.writer.write({"progress": f"looking up {data.city}"})  # a `tool-output` chunk
    return {"city": data.city, "temperature": 21}


weather = create_tool(id="weather-tool", description="Weather for a city", input_schema=WeatherIn, execute=get_weather)

model = ScriptedModel(
    [
        ScriptedResponse(text="Let me check.", tool_calls=[ScriptedToolCall("weather", {"city": "Oslo"})]),
        ScriptedResponse(text="It is 21 degrees in Oslo."),
    ]
)
agent = Agent(id="assistant", instructions="You answer weather questions.", model=model, tools={"weather": weather})
app = App(agents=[agent])  # store: sqlite:///.tempo-agents/store.db


async def main() -> None:
    await app.connect("localhost:7233")
    async with app.worker():  # usually a separate process: tempo-agents worker
        stream = await app.agent("assistant").stream("Weather in Oslo?")
        async for chunk in stream.full_stream:
            print(chunk.offset, chunk.type)
        print(await stream.text, await stream.finish_reason, await stream.usage)


run_program(main())  # asyncio.run(main()), then the process ends at once (see run_program)
