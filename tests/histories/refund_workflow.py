"""A workflow tool that waits for a person, for the recorded parent-with-child histories."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

from tempo_agents.workflows.tool_suspension import wait_for_resume


@workflow.defn(name="RecordedRefund")
class RecordedRefundWorkflow:
    @workflow.run
    async def run(self, data: dict[str, Any]) -> dict[str, Any]:
        answer = await wait_for_resume({"refund": data["amount"]})
        return {"refunded": data["amount"] if answer.get("ok") else 0}
