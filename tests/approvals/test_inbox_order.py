"""The inbox shows the calls waiting for the signed-in principal first (assigned to it or to one of its groups),
then those anyone may answer, then those assigned to others."""

from __future__ import annotations

from typing import Any

from tempo_agents import Agent
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
