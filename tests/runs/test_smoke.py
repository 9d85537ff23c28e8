from __future__ import annotations

from pydantic import BaseModel

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tests.conftest import AppFactory, running_worker


class AddIn(BaseModel):
    a: int
    b: int


async def test_two_step_run(make_app: AppFactory) -> None:
    add = create_tool(id="add", description="Adds", input_schema=AddIn, execute=lambda i, c: {"sum": i.a + i.b})
    model = ScriptedModel(
        [
            ScriptedResponse(text="Let me add.", tool_calls=[ScriptedToolCall("add", {"a": 1, "b": 2})]),
            ScriptedResponse(text="The sum is 3."),
        ]
    )
    agent = Agent(id="calc", instructions="You add.", model=model, tools={"add": add})
    app = make_app([agent])
    async with running_worker(app):
        result = await app.agent("calc").generate("add 1 and 2")
    print([c.type for c in result.chunks])
    assert result.finish_reason == "stop"
    assert result.text == "Let me add.The sum is 3."
    assert result.tool_results[0].payload.result == {"sum": 3}
