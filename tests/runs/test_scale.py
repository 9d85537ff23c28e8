"""Many runs waiting for people at once on one dev server, all resumed, all complete."""

from __future__ import annotations

import asyncio
from typing import Any

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tests.conftest import AppFactory, running_worker

RUNS = 100


async def test_many_suspended_runs_resume_and_complete(make_app: AppFactory) -> None:
    async def ask(data: dict[str, Any], ctx: ToolContext) -> Any:
        assert ctx.suspend is not None
        if ctx.resume_data is None:
            return await ctx.suspend({"question": f"ok for {data['n']}?"})
        return f"{data['n']}: {ctx.resume_data}"

    model = ScriptedModel(
        lambda r: (
            ScriptedResponse(tool_calls=[ScriptedToolCall("ask", {"n": r.run_id})])
            if r.step == 0
            else ScriptedResponse(text="thanks")
        )
    )
    app = make_app(
        [Agent(id="many", model=model, tools={"ask": create_tool(id="ask", description="Ask", execute=ask)})]
    )
    async with running_worker(app):
        streams = await asyncio.gather(*(app.agent("many").stream("go", run_id=f"many-{i}") for i in range(RUNS)))
        firsts = await asyncio.gather(*(s.result() for s in streams))
        assert {f.finish_reason for f in firsts} == {"suspended"}
        for _ in range(100):
            listed = await app.list_suspended_runs(agent_id="many")
            if listed.total == RUNS:
                break
            await asyncio.sleep(0.1)
        assert listed.total == RUNS
        resumed = await asyncio.gather(*(app.agent("many").resume_generate("yes", run_id=f.run_id) for f in firsts))
    assert {r.finish_reason for r in resumed} == {"stop"}
    assert sorted(r.tool_results[0].payload.result for r in resumed) == sorted(f"many-{i}: yes" for i in range(RUNS))
