"""The inbox shows the calls waiting for the signed-in principal first (assigned to it or to one of its groups),
then those anyone may answer, then those assigned to others."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.workflows.payloads import ResumeRequest
from tests.conftest import AppFactory, running_worker
from tests.support.approval_agents import payments_agent
from tests.support.http_api import served

TOKENS = {"tok-alice": "alice", "tok-bob": "bob", "tok-carol": "carol"}


async def test_waiting_for_me_comes_first_for_each_principal(make_app: AppFactory) -> None:
    ran: list[dict[str, Any]] = []
    agents: list[Agent] = [
        payments_agent(ran, agent_id="for-alice", tool_approvers=["alice"])[0],
        payments_agent(ran, agent_id="for-finance", tool_approvers=["group:finance"])[0],
        payments_agent(ran, agent_id="for-anyone")[0],
        payments_agent(ran, agent_id="for-bob", tool_approvers=["bob"])[0],
    ]
    app = make_app(agents)
    runs: dict[str, str] = {}
    async with running_worker(app), served(app, tokens=TOKENS, groups={"alice": ["finance"]}) as http:
        for agent in agents:  # alice's call waits longest: without the order it would come last (newest first)
            first = await app.agent(agent.id).generate("pay")
            assert first.finish_reason == "suspended"
            runs[first.run_id] = agent.id

        async def inbox(token: str) -> list[tuple[str, bool, bool]]:
            answer = await http.get("/inbox", headers={"authorization": f"Bearer {token}"})
            assert answer.status_code == 200, answer.text
            return [(runs[item["runId"]], item["waitingForMe"], item["mayAnswer"]) for item in answer.json()["items"]]

        alice, bob, carol = await inbox("tok-alice"), await inbox("tok-bob"), await inbox("tok-carol")
    assert alice == [
        ("for-finance", True, True),
        ("for-alice", True, True),
        ("for-anyone", False, True),
        ("for-bob", False, False),
    ]
    assert bob == [
        ("for-bob", True, True),
        ("for-anyone", False, True),
        ("for-finance", False, False),
        ("for-alice", False, False),
    ]
    assert carol == [
        ("for-anyone", False, True),
        ("for-bob", False, False),
        ("for-finance", False, False),
        ("for-alice", False, False),
    ]


class Confirm(BaseModel):
    confirmed: bool


async def test_a_call_whose_tool_refused_its_answer_waits_again_for_the_same_approvers(make_app: AppFactory) -> None:
    async def execute(data: dict[str, Any], ctx: ToolContext) -> Any:
        if ctx.resume_data is None:
            assert ctx.suspend is not None
            return await ctx.suspend({"amount": data["amount"]})
        return {"charged": data["amount"]}

    confirm = create_tool(
        id="confirm", description="Charges", resume_schema=Confirm, execute=execute, approvers=["alice"]
    )
    model = ScriptedModel(
        [ScriptedResponse(tool_calls=[ScriptedToolCall("confirm", {"amount": 12}, id="c-1")]), ScriptedResponse("ok")]
    )
    app = make_app([Agent(id="charger", model=model, tools={"confirm": confirm})])
    async with running_worker(app), served(app, tokens=TOKENS) as http:
        first = await app.agent("charger").generate("charge")
        # An approval of a call that waits for data: the run takes it as {"approved": true}, the tool refuses it.
        await app.client.get_workflow_handle(first.run_id).signal(
            "resume", ResumeRequest(action="approve", answered_by="alice")
        )

        async def refused() -> bool:
            chunks = [entry.chunk["type"] for entry in await app.store.read_chunks(first.run_id)]
            return chunks.count("finish") >= 2  # the refusal's segment ended: the call waits again

        async with asyncio.timeout(30):
            while not await refused():
                await asyncio.sleep(0.05)
        items = (await http.get("/inbox", headers={"authorization": "Bearer tok-alice"})).json()["items"]
    assert [(item["toolCallId"], item["approvers"], item["waitingForMe"]) for item in items] == [
        ("c-1", ["alice"], True)
    ]
