"""Edit, then approve: the approver's arguments are checked against the tool's input schema by the run, the tool
runs with exactly them, the model reads them in its transcript, and the journal records who changed what."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tempo_agents.errors import ResumeError, ResumeValidationError
from tempo_agents.tools.transform import ToolTransform
from tempo_agents.tools.validation import to_schema, validate_input
from tempo_agents.workflows.payloads import ResumeRequest
from tests.conftest import AppFactory, running_worker
from tests.support.approval_agents import TRANSFER_ARGS, Transfer, payments_agent
from tests.support.cli_processes import api_data, cli_output
from tests.support.http_api import served

EDITED = {"amount": 450, "to": "acme-escrow"}


def invalid_args_text(args: Any) -> str:
    """The text the run refuses ``args`` with: the tool's input JSON schema (the run carries the schema as JSON)."""
    _, failure = validate_input("transfer", to_schema(Transfer.model_json_schema()), args)
    assert failure is not None
    return failure.message


async def test_the_tool_runs_with_exactly_the_approved_arguments_and_the_model_reads_them(
    make_app: AppFactory,
) -> None:
    ran: list[dict[str, Any]] = []
    agent, model = payments_agent(ran)
    app = make_app([agent])
    async with running_worker(app):
        first = await agent.generate("pay")
        assert first.finish_reason == "suspended"
        stream = await app.approve_tool_call("payments", run_id=first.run_id, answered_by="alice", args=EDITED)
        result = await stream.result()
        answers = await app.queries(first.run_id).answers()
        chunks = [entry.chunk for entry in await app.store.read_chunks(first.run_id)]
    assert result.finish_reason == "stop"
    assert ran == [EDITED]
    [changed] = [chunk for chunk in chunks if chunk["type"] == "data-tool-args-changed"]
    assert changed["data"] == {
        "toolCallId": "call-1",
        "toolName": "transfer",
        "before": TRANSFER_ARGS,
        "after": EDITED,
        "changedBy": "alice",
    }
    [tool_result] = [chunk for chunk in chunks if chunk["type"] == "tool-result"]
    assert tool_result["payload"]["args"] == EDITED
    assert tool_result["payload"]["result"] == {"sent": 450, "to": "acme-escrow"}
    assert [(a.action, a.answered_by, a.args) for a in answers] == [("approve", "alice", EDITED)]
    seen = model.requests[-1].messages  # the step after the call: what the model was given
    parts = [part for message in seen if message.role == "assistant" for part in message.content]
    calls = [part for part in parts if part.type == "tool-call"]
    assert [(call.tool_call_id, call.args) for call in calls] == [("call-1", EDITED)]


async def test_arguments_the_schema_refuses_are_refused_with_the_validation_text_and_the_call_waits(
    make_app: AppFactory,
) -> None:
    ran: list[dict[str, Any]] = []
    agent, _ = payments_agent(ran)
    app = make_app([agent])
    bad = {"amount": 0, "to": "acme"}
    async with running_worker(app), served(app) as http:
        first = await agent.generate("pay")
        with pytest.raises(ResumeValidationError) as refused:
            await app.approve_tool_call("payments", run_id=first.run_id, answered_by="alice", args=bad)
        assert refused.value.message == invalid_args_text(bad)
        assert refused.value.result["validationErrors"]
        over_http = await http.post(f"/runs/{first.run_id}/approve", json={"toolCallId": "call-1", "args": bad})
        assert over_http.status_code == 422
        assert over_http.json()["error"] == invalid_args_text(bad)
        with pytest.raises(ResumeError, match="arguments can be changed only when approving"):
            request = ResumeRequest(action="resume", data={"approved": False}, tool_call_id="call-1", args=EDITED)
            await app.answer(first.run_id, request, agent_id="payments")
        assert [call.tool_call_id for call in await app.pending(first.run_id)] == ["call-1"]
        assert ran == []
        accepted = await http.post(f"/runs/{first.run_id}/approve", json={"toolCallId": "call-1", "args": EDITED})
        assert accepted.status_code == 200, accepted.text
        await app.attach(first.run_id, follow="run").result()
    assert ran == [EDITED]


async def test_the_reference_approve_route_takes_edited_arguments(make_app: AppFactory) -> None:
    ran: list[dict[str, Any]] = []
    agent, _ = payments_agent(ran)
    app = make_app([agent])
    async with running_worker(app), served(app) as http:
        first = await agent.generate("pay")
        body = {"runId": first.run_id, "toolCallId": "call-1", "args": EDITED}
        answered = await http.post("/agents/payments/approve-tool-call-generate", json=body)
        assert answered.status_code == 200, answered.text
    assert ran == [EDITED]


async def test_the_api_command_approves_with_edited_arguments(make_app: AppFactory) -> None:
    ran: list[dict[str, Any]] = []
    agent, _ = payments_agent(ran)
    app = make_app([agent])
    async with running_worker(app), served(app) as http:
        first = await agent.generate("pay")
        approved = await cli_output(
            "api", "--url", str(http.base_url), "run", "approve", first.run_id, "--tool-call-id", "call-1",
            "--args", json.dumps(EDITED),
        )  # fmt: skip
        assert api_data(approved)["accepted"] is True
        await app.attach(first.run_id, follow="run").result()
    assert ran == [EDITED]


async def test_arguments_shown_through_a_display_transform_are_not_offered_for_editing(make_app: AppFactory) -> None:
    ran: list[dict[str, Any]] = []
    plain, _ = payments_agent(ran)
    hidden, _ = payments_agent(ran, agent_id="hidden")
    hidden.tools["transfer"].transform = ToolTransform.coerce(
        {"display": {"input": lambda ctx: {**ctx.input, "to": "(hidden)"}}}, "test"
    )
    app = make_app([plain, hidden])
    async with running_worker(app), served(app) as http:
        runs = {(await app.agent(agent_id).generate("pay")).run_id: agent_id for agent_id in ("payments", "hidden")}
        items = (await http.get("/inbox")).json()["items"]
    editable = {runs[item["runId"]]: (item["argsEditable"], item["args"]) for item in items}
    assert editable == {"payments": (True, TRANSFER_ARGS), "hidden": (False, {"amount": 900, "to": "(hidden)"})}
