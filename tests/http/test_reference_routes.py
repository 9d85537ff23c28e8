"""The reference's routes over a real uvicorn, with the wire shapes of the captured protocol."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fastapi import Request

from tempo_agents.server import ApiError
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import parity_agent, served, sse_chunks, types

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


def parity_app(make_app: AppFactory) -> Any:
    module_tools = [t for t in parity_agent().tools.values() if t.id != "boom-tool"]
    return make_app([parity_agent()], tools=module_tools)


async def test_tools_list_details_and_execute(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    async with served(app) as http:
        listing = (await http.get("/tools")).json()
        assert set(listing) == {"weather-tool", "confirm-tool", "danger-tool", "boom-tool"}
        weather = listing["weather-tool"]
        assert weather["id"] == "weather-tool" and weather["requireApproval"] is False
        schema = json.loads(weather["inputSchema"])["json"]
        assert schema["$schema"] == DRAFT_2020_12 and schema["required"] == ["city"]
        assert "outputSchema" in weather and "outputSchema" not in listing["danger-tool"]
        assert listing["danger-tool"]["requireApproval"] is True

        encoded = "eyJ0ZW5hbnQiOiJhIn0%3D"  # {"tenant":"a"}, as the client sends it
        assert (await http.get(f"/tools/weather-tool?requestContext={encoded}")).json() == weather
        missing = await http.get("/tools/weather")
        assert (missing.status_code, missing.json()) == (404, {"error": "Tool not found"})

        ran = await http.post("/tools/weather-tool/execute?", json={"data": {"city": "Oslo"}})
        assert (ran.status_code, ran.json()) == (200, {"city": "Oslo", "temperature": 21})
        invalid = await http.post("/tools/weather-tool/execute?runId=r1", json={"data": {"town": "Oslo"}})
        assert invalid.status_code == 200
        assert invalid.json()["error"] is True and "validationErrors" in invalid.json()
        assert invalid.json()["message"].startswith("Tool input validation failed for weather-tool.")
        no_data = await http.post("/tools/weather-tool/execute", json={})
        assert no_data.status_code == 400 and no_data.json()["error"] == "Invalid request body"
        assert no_data.json()["issues"][0]["field"] == "data"
        null_data = await http.post("/tools/weather-tool/execute", json={"data": None})
        assert (null_data.status_code, null_data.json()) == (400, {"error": 'Argument "data" is required'})
        not_json = await http.post(
            "/tools/weather-tool/execute", content=b"{x", headers={"content-type": "application/json"}
        )
        assert not_json.status_code == 400 and not_json.json()["issues"][0]["field"] == "body"
        boom = await http.post("/tools/boom-tool/execute", json={"data": {}})
        assert boom.status_code == 422 and boom.json() == {"error": "boom failed"}

        by_id = await http.get("/agents/assistant/tools/weather-tool")
        assert by_id.status_code == 200 and by_id.json()["id"] == "weather-tool"
        by_key = await http.get("/agents/assistant/tools/weather")
        assert (by_key.status_code, by_key.json()) == (404, {"error": "Tool not found"})
        agent_ran = await http.post("/agents/assistant/tools/weather-tool/execute", json={"data": {"city": "Bergen"}})
        assert agent_ran.json() == {"city": "Bergen", "temperature": 21}


async def test_agents_list_and_details(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    async with served(app) as http:
        listing = (await http.get("/agents")).json()
        assert list(listing) == ["assistant"]
        entry = listing["assistant"]
        assert entry["id"] == "assistant" and entry["name"] == "Assistant"
        assert entry["instructions"] == "You answer weather questions."
        assert set(entry["tools"]) == {"weather", "confirm", "danger", "boom"}
        assert entry["tools"]["weather"]["id"] == "weather-tool"
        for key in ("agents", "workflows"):
            assert entry[key] == {}
        for key in ("skills", "workspaceTools", "browserTools", "inputProcessors", "outputProcessors"):
            assert entry[key] == []
        assert entry["hasBrowser"] is False
        partial = (await http.get("/agents?partial=true")).json()["assistant"]["tools"]["weather"]
        assert partial == {"id": "weather-tool", "description": "Weather for a city", "requireApproval": False}
        details = (await http.get("/agents/assistant")).json()
        assert "id" not in details and details["tools"] == entry["tools"]
        unknown = await http.get("/agents/nobody")
        assert (unknown.status_code, unknown.json()) == (404, {"error": "Agent with id nobody not found"})


async def test_stream_sends_the_captured_chunk_shapes(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    async with served(app) as http, running_worker(app):
        response = await http.post("/agents/assistant/stream", json={"messages": "What is the weather in Oslo?"})
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["cache-control"] == "no-cache"
        assert response.headers["x-accel-buffering"] == "no"
        chunks = sse_chunks(response.content)
    seen = types(chunks)
    assert seen[0] == "start" and seen[-1] == "finish"
    run_id = chunks[0]["runId"]
    assert all(c["runId"] == run_id for c in chunks)
    assert all(set(c) >= {"type", "runId", "from", "payload"} for c in chunks)
    step_start = next(c for c in chunks if c["type"] == "step-start")
    assert isinstance(step_start["payload"]["messageId"], str)
    call = next(c for c in chunks if c["type"] == "tool-call")
    assert call["payload"] == {"toolCallId": "call-w1", "toolName": "weather", "args": {"city": "Oslo"}}
    output = next(c for c in chunks if c["type"] == "tool-output")
    assert output["from"] == "USER" and output["payload"]["output"] == {"progress": "looking up Oslo"}
    result = next(c for c in chunks if c["type"] == "tool-result")
    assert result["payload"]["result"] == {"city": "Oslo", "temperature": 21}
    assert result["payload"]["toolName"] == "weather"
    first_finish = next(c for c in chunks if c["type"] == "step-finish")
    assert first_finish["payload"]["stepResult"] == {"reason": "tool-calls", "isContinued": True, "warnings": []}
    assert chunks[-1]["payload"]["stepResult"]["reason"] == "stop"
    text = "".join(c["payload"]["text"] for c in chunks if c["type"] == "text-delta")
    assert text == 'Let me check.Done: [{"city": "Oslo", "temperature": 21}]'


async def test_stream_honours_run_id_and_refuses_caller_errors(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    async with served(app) as http, running_worker(app):
        response = await http.post(
            "/agents/assistant/stream", json={"messages": [{"role": "user", "content": "hi"}], "runId": "my-run-42"}
        )
        chunks = sse_chunks(response.content)
        assert {c["runId"] for c in chunks} == {"my-run-42"}
        again = await http.post("/agents/assistant/stream", json={"messages": "hi", "runId": "my-run-42"})
        assert again.status_code == 409
        empty = await http.post("/agents/assistant/stream", json={"messages": ""})
        assert (empty.status_code, empty.json()) == (400, {"error": 'Argument "messages" is required'})
        missing = await http.post("/agents/assistant/stream", json={})
        assert missing.status_code == 400 and missing.json()["issues"][0]["field"] == "messages"
        unknown = await http.post("/agents/nobody/stream", json={"messages": "hi"})
        assert unknown.status_code == 404
        bad_tool = await http.post("/agents/assistant/stream", json={"messages": "hi", "toolChoice": "sometimes"})
        assert bad_tool.status_code == 400
        ui = await http.post(
            "/agents/assistant/generate",
            json={"messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "yo"}]}]},
        )
        assert ui.json()["text"] == "Hello there."


async def test_generate_returns_full_output(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    async with served(app) as http, running_worker(app):
        body = (await http.post("/agents/assistant/generate", json={"messages": "weather?", "maxSteps": 3})).json()
    assert body["finishReason"] == "stop" and body["text"].startswith("Let me check.Done:")
    assert body["usage"] == {"inputTokens": 20, "outputTokens": 10, "totalTokens": 30}
    assert body["toolCalls"][0]["type"] == "tool-call" and body["toolCalls"][0]["payload"]["toolName"] == "weather"
    assert body["toolResults"][0]["type"] == "tool-result"
    for key in ("steps", "warnings", "messages", "sources", "files", "reasoning"):
        assert body[key] == []


async def test_suspension_resume_and_suspended_runs(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    async with served(app) as http, running_worker(app):
        chunks = sse_chunks((await http.post("/agents/assistant/stream", json={"messages": "charge 990"})).content)
        suspended = next(c for c in chunks if c["type"] == "tool-call-suspended")
        run_id = suspended["runId"]
        assert suspended["payload"]["suspendPayload"] == {"phase": "confirm", "amount": 990}
        assert json.loads(suspended["payload"]["resumeSchema"])["required"] == ["confirmed"]
        assert chunks[-1]["type"] == "finish" and chunks[-1]["payload"]["stepResult"]["reason"] == "suspended"

        for _ in range(300):  # visibility is eventually consistent (up to seconds on a loaded machine)
            listing = (await http.get("/agents/assistant/suspended-runs?perPage=5&page=0")).json()
            if listing["total"]:
                break
            await asyncio.sleep(0.05)
        assert listing["total"] == 1
        entry = listing["runs"][0]
        assert entry["runId"] == run_id and entry["status"] == "suspended" and entry["suspendedAt"].endswith("Z")
        assert entry["toolCalls"] == [
            {
                "toolCallId": "call-c1",
                "toolName": "confirm",
                "args": {"amount": 990},
                "requiresApproval": False,
                "suspendPayload": {"phase": "confirm", "amount": 990},
            }
        ]

        later = await http.get("/agents/assistant/suspended-runs", params={"fromDate": "2999-01-01T00:00:00Z"})
        assert later.json() == {"runs": [], "total": 0}
        naive = await http.get("/agents/assistant/suspended-runs", params={"fromDate": "2000-01-01T00:00:00"})
        assert naive.json()["total"] == 1

        invalid = await http.post(
            "/agents/assistant/resume-stream", json={"runId": run_id, "resumeData": {"confirmed": "yes"}}
        )
        assert invalid.status_code == 422
        assert "validation failed for confirm-tool" in invalid.json()["error"]
        assert "validationErrors" in invalid.json()
        unknown = await http.post("/agents/assistant/resume-stream", json={"runId": "nope", "resumeData": {}})
        assert unknown.status_code == 404
        assert "could not find a suspended run for runId" in unknown.json()["error"]
        no_run = await http.post("/agents/assistant/resume-stream", json={"resumeData": {}})
        assert no_run.status_code == 400 and no_run.json()["issues"][0]["field"] == "runId"

        resumed = await http.post(
            "/agents/assistant/resume-stream",
            json={"runId": run_id, "toolCallId": "call-c1", "resumeData": {"confirmed": True}},
        )
        assert resumed.status_code == 200
        continuation = sse_chunks(resumed.content)
        assert types(continuation)[0] == "tool-result", [(c["type"], c.get("offset")) for c in continuation]
        assert "start" not in types(continuation)
        assert continuation[0]["payload"]["result"] == {"charged": 990}
        assert continuation[-1]["payload"]["stepResult"]["reason"] == "stop"

        again = await http.post(
            "/agents/assistant/resume-stream",
            json={"runId": run_id, "toolCallId": "call-c1", "resumeData": {"confirmed": False}},
        )
        assert again.status_code == 409
        assert (await http.get("/agents/assistant/suspended-runs")).json() == {"runs": [], "total": 0}


async def test_approve_and_decline(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    async with served(app) as http, running_worker(app):
        first = sse_chunks((await http.post("/agents/assistant/stream", json={"messages": "delete it"})).content)
        approval = next(c for c in first if c["type"] == "tool-call-approval")
        run_id = approval["runId"]
        assert approval["payload"]["toolName"] == "danger" and approval["payload"]["args"] == {"path": "notes/x.txt"}
        no_call = await http.post("/agents/assistant/approve-tool-call", json={"runId": run_id})
        assert (no_call.status_code, no_call.json()) == (400, {"error": "Tool call id is required"})
        approved = sse_chunks(
            (
                await http.post("/agents/assistant/approve-tool-call", json={"runId": run_id, "toolCallId": "call-d1"})
            ).content
        )
        assert approved[0]["type"] == "tool-result" and approved[0]["payload"]["result"] == {"deleted": "notes/x.txt"}

        second = (await http.post("/agents/assistant/generate", json={"messages": "delete again"})).json()
        assert second["finishReason"] == "suspended"
        assert second["suspendPayload"]["toolCallId"] == "call-d1"
        assert json.loads(second["resumeSchema"])["required"] == ["approved"]
        declined = await http.post(
            "/agents/assistant/decline-tool-call-generate",
            json={"runId": second["runId"], "toolCallId": "call-d1", "reason": "not allowed"},
        )
        assert declined.status_code == 200 and declined.json()["finishReason"] == "stop"
        assert declined.json()["text"].startswith("Done:")

        third = (await http.post("/agents/assistant/generate", json={"messages": "delete once more"})).json()
        denied = sse_chunks(
            (
                await http.post(
                    "/agents/assistant/decline-tool-call",
                    json={"runId": third["runId"], "toolCallId": "call-d1", "reason": "no"},
                )
            ).content
        )
        assert denied[0]["type"] == "tool-output-denied"
        assert denied[0]["payload"]["approval"] == {"id": "call-d1", "approved": False, "reason": "no"}
        later = await http.post(
            "/agents/assistant/approve-tool-call-generate", json={"runId": third["runId"], "toolCallId": "call-d1"}
        )
        assert later.status_code == 409


async def test_errors_after_start_arrive_as_chunks(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    async with served(app) as http, running_worker(app):
        exploded = sse_chunks((await http.post("/agents/assistant/stream", json={"messages": "explode"})).content)
        tool_error = next(c for c in exploded if c["type"] == "tool-error")
        assert tool_error["payload"]["toolName"] == "boom" and "boom failed" in tool_error["payload"]["error"]
        failed = await http.post("/agents/assistant/stream", json={"messages": "modelerror"})
        assert failed.status_code == 200
        chunks = sse_chunks(failed.content)
        assert "error" in types(chunks)
        assert "model exploded" in next(c for c in chunks if c["type"] == "error")["payload"]["error"]
        assert chunks[-1]["payload"]["stepResult"]["reason"] == "error"
        generated = await http.post("/agents/assistant/generate", json={"messages": "modelerror"})
        assert generated.status_code == 200 and generated.json()["finishReason"] == "error"
        assert "model exploded" in generated.json()["error"]


async def test_observe_replays_from_an_offset(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    async with served(app) as http, running_worker(app):
        chunks = sse_chunks((await http.post("/agents/assistant/stream", json={"messages": "weather"})).content)
        run_id = chunks[0]["runId"]
        replay = sse_chunks((await http.post("/agents/assistant/observe", json={"runId": run_id, "offset": 3})).content)
        assert replay == chunks[3:]
        unknown = await http.post("/agents/assistant/observe", json={"runId": "nope"})
        assert unknown.status_code == 404


async def test_openapi_document(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    async with served(app) as http:
        origin = f"{http.base_url.scheme}://{http.base_url.netloc.decode()}"
        document = (await http.get(origin + "/openapi.json")).json()
    paths = document["paths"]
    for path in (
        "/api/agents",
        "/api/agents/{agent_id}/stream",
        "/api/agents/{agent_id}/resume-stream",
        "/api/tools/{tool_id}/execute",
        "/api/runs/{run_id}/stream",
    ):
        assert path in paths


async def test_every_route_runs_the_authorization_dependency(make_app: AppFactory) -> None:
    def deny(request: Request) -> None:
        if request.headers.get("authorization") != "Bearer good":
            raise ApiError(401, "Invalid or expired token")

    app = parity_app(make_app)
    async with served(app, authorize=deny) as http:
        for method, path in (
            ("GET", "/tools"),
            ("GET", "/agents"),
            ("POST", "/agents/assistant/stream"),
            ("GET", "/runs"),
        ):
            refused = await http.request(method, path, json={"messages": "hi"} if method == "POST" else None)
            assert (refused.status_code, refused.json()) == (401, {"error": "Invalid or expired token"})
        allowed = await http.get("/tools", headers={"authorization": "Bearer good"})
        assert allowed.status_code == 200
