"""Sub-agents through the HTTP API: the nested stream, the parent's pending call, resume over HTTP, children."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.conftest import AppFactory, running_worker
from tests.support.agents import clerk_agent, delegate, scripted_agent
from tests.support.http_api import served, sse_chunks


async def test_a_sub_agent_suspension_is_listed_and_resumed_over_http(make_app: AppFactory) -> None:
    seen: list[Any] = []
    lead = scripted_agent(
        "office", [delegate("clerk", "pay", "k1")], "Paid, says the clerk.", agents={"clerk": clerk_agent(seen)}
    )
    app = make_app([lead])
    async with served(app) as http, running_worker(app):
        started = await http.post("/agents/office/stream", json={"messages": "pay the invoice"})
        chunks = sse_chunks(started.content)
        run_id = chunks[0]["runId"]
        nested = [c["payload"]["output"]["type"] for c in chunks if c["type"] == "tool-output"]
        assert nested[0] == "start" and "tool-call-suspended" in nested and nested[-1] == "finish"
        [suspended] = [c for c in chunks if c["type"] == "tool-call-suspended"]
        assert suspended["payload"]["toolName"] == "agent-clerk"
        assert suspended["payload"]["suspendPayload"] == {"question": "pay 12?"}
        [link] = [c for c in chunks if c["type"] == "data-child-run"]
        assert link["data"]["childRunId"] == f"{run_id}-k1"  # a client can attach to the child directly

        for _ in range(300):  # the call's activity has journaled the suspension; the workflow hears it next
            detail = (await http.get(f"/runs/{run_id}")).json()
            if detail["pending"]:
                break
            await asyncio.sleep(0.05)
        [pending] = detail["pending"]
        assert pending["toolName"] == "agent-clerk" and pending["toolCallId"] == "k1"
        assert json.loads(pending["resumeSchema"])["required"] == ["ok"]
        assert detail["children"] == [
            {
                "toolCallId": "k1",
                "toolName": "agent-clerk",
                "childRunId": f"{run_id}-k1",
                "kind": "agent",
                "workflow": "AgentRunWorkflow",
            }
        ]

        invalid = await http.post(f"/runs/{run_id}/resume", json={"resumeData": {"ok": "yes"}})
        assert invalid.status_code == 422
        resumed = await http.post(
            "/agents/office/resume-stream", json={"runId": run_id, "toolCallId": "k1", "resumeData": {"ok": True}}
        )
        after = sse_chunks(resumed.content)
        [result] = [c for c in after if c["type"] == "tool-result"]
        assert result["payload"]["toolName"] == "agent-clerk" and result["payload"]["result"]["text"] == "Paid 12."
        assert seen == [{"ok": True}]
        child = (await http.get(f"/runs/{run_id}-k1")).json()
        assert child["agentId"] == "clerk"
