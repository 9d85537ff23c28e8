"""A failure's message can quote what a run carries: sealed in Temporal like any payload, and read back whole by the
App (a workflow tool that fails is the model's tool error, its text intact)."""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall
from tempo_agents.journal.chunks import ToolResultChunk
from tests.conftest import AppFactory, running_worker
from tests.support.encryption import keyring, readable
from tests.support.temporal_cli import show_history

FAILURE = "no invoice for customer Wendelin Oberhuber (failure-GECKO-6650)"


@workflow.defn(name="FindInvoice", sandboxed=False)
class FindInvoiceWorkflow:
    @workflow.run
    async def run(self, data: dict[str, Any]) -> dict[str, Any]:
        raise ApplicationError(FAILURE, non_retryable=True)


async def test_a_failures_message_is_sealed_in_the_history_and_whole_for_the_app(
    make_app: AppFactory, client: Client
) -> None:
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("workflow-find", {"inputData": {}}, id="bad")]),
            ScriptedResponse(text="Sorry."),
        ]
    )
    app = make_app(
        [Agent(id="finder", model=model, workflows={"find": FindInvoiceWorkflow})], encryption_keys=keyring("k1")
    )
    async with running_worker(app):
        result = await app.agent("finder").generate("find it")
        await app.client.get_workflow_handle(result.run_id).result()
    [error] = [c.payload.result for c in result.chunks if isinstance(c, ToolResultChunk)]
    assert error["error"] == FAILURE

    for run_id in (result.run_id, f"{result.run_id}-bad"):  # the parent, and the child workflow that failed
        code, history = await show_history(client, run_id)
        assert code == 0, history
        assert "GECKO" not in readable(history) and "Oberhuber" not in readable(history)
    assert "Encoded failure" in history
