"""The HTTP API under hostile input: every caller's mistake is a 4xx with a clear message, checked at the door.

Each test sends the exact input a hostile client sent (oversized and endless bodies, lone surrogates, deep
nesting, odd ``Last-Event-ID`` headers, offsets past 64 bits, run ids no route can reach, made-up cursors,
answers that do not fit the waiting call) to a real server, store and worker, and checks what a client sees.
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import httpx
import pytest
from starlette.requests import Request

from tempo_agents import App
from tempo_agents.cli.main import build_parser
from tempo_agents.cli.serve import start_api
from tempo_agents.server.request_limits import MAX_BODY_BYTES, MAX_JSON_DEPTH
from tempo_agents.server.run_views import page_cursor, page_token
from tempo_agents.server.serving import ApiServer
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import parity_agent, served, sse_blocks, sse_chunks

SURROGATE_TEXT = '"hi \\ud800"'
"""A JSON string with a lone surrogate, as the JSON text carries it (valid JSON, no valid Unicode)."""


def nested(depth: int) -> dict[str, Any]:
    """``{"a": {"a": … {}}}`` with ``depth`` levels of objects."""
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def nested_text(depth: int) -> str:
    return '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1)


def parity_app(make_app: AppFactory) -> App:
    return make_app([parity_agent()])


def _raw_request(port: int, head: bytes, body: bytes) -> bytes:
    """Send ``head`` and the start of a body on a plain socket and read the whole answer (the server closes)."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(head + body)
        received = b""
        while True:
            data = sock.recv(65536)
            if not data:
                return received
            received += data


async def test_oversized_bodies_are_refused_unparsed(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    server = ApiServer(app, port=0)
    await server.start()
    too_large = {"error": f"Request body too large: at most {MAX_BODY_BYTES} bytes are accepted"}
    try:
        async with httpx.AsyncClient(base_url=server.url + "/api", timeout=60) as http:
            for size in (3_000_000, 5_000_000, 50_000_000):
                for route in ("/agents/assistant/generate", "/agents/assistant/stream"):
                    answer = await http.post(route, json={"messages": "x" * size})
                    assert (answer.status_code, answer.json()) == (413, too_large), (route, size)
            fits = await http.post("/tools/weather-tool/execute", json={"data": {"city": "x" * 500_000}})
            assert fits.status_code == 200  # the same client, on a connection the refusals left usable

        # 100 MB announced, 1 KB sent: the answer comes at once, without the rest (so nothing was read or parsed).
        head = (
            b"POST /api/agents/assistant/generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100000000\r\n\r\n"
        )
        raw = await asyncio.to_thread(_raw_request, server.port, head, b'{"messages": "' + b"x" * 1000)
        assert raw.startswith(b"HTTP/1.1 413 "), raw[:200]
        assert b"connection: close" in raw.lower()
        # Without a length (chunked), what is kept stops at the limit.
        chunked_head = (
            b"POST /api/agents/assistant/generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        )
        piece = b"x" * 65536
        chunks = (b"%x\r\n" % len(piece) + piece + b"\r\n") * ((MAX_BODY_BYTES // len(piece)) + 2) + b"0\r\n\r\n"
        raw = await asyncio.to_thread(_raw_request, server.port, chunked_head, chunks)
        assert raw.startswith(b"HTTP/1.1 413 "), raw[:200]
    finally:
        await server.stop()


async def test_lone_surrogates_deep_nesting_and_bad_run_ids_are_400(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    async with served(app) as http:

        async def post(route: str, text: str) -> httpx.Response:
            return await http.post(route, content=text, headers={"content-type": "application/json"})

        surrogates = {
            "messages": '{"messages": ' + SURROGATE_TEXT + "}",
            "requestContext.k": '{"messages": "hi", "requestContext": {"k": ' + SURROGATE_TEXT + "}}",
            "memory.thread": '{"messages": "hi", "memory": {"thread": ' + SURROGATE_TEXT + ', "resource": "u"}}',
            "runId": '{"messages": "hi", "runId": ' + SURROGATE_TEXT + "}",
        }
        for field, text in surrogates.items():
            for route in ("/agents/assistant/generate", "/agents/assistant/stream"):
                answer = await post(route, text)
                assert answer.status_code == 400, (field, route, answer.text)
                assert answer.json() == {
                    "error": "Invalid request body",
                    "issues": [{"field": field, "message": "a lone surrogate (\\ud800) is not valid Unicode text"}],
                }
        in_a_key = await post("/agents/assistant/stream", '{"messages": "hi", "requestContext": {"\\udc00": 1}}')
        assert in_a_key.json()["issues"] == [
            {"field": "requestContext.\\udc00", "message": "a lone surrogate (\\udc00) is not valid Unicode text"}
        ]
        tool_data = await post("/tools/weather-tool/execute", '{"data": {"city": ' + SURROGATE_TEXT + "}}")
        assert tool_data.status_code == 400 and tool_data.json()["issues"][0]["field"] == "data.city"
        agent_tool = await post(
            "/agents/assistant/tools/weather-tool/execute", '{"data": {"city": ' + SURROGATE_TEXT + "}}"
        )
        assert agent_tool.status_code == 400

        for depth in (200, 300, 900):
            deep_context = await post(
                "/agents/assistant/generate", '{"messages": "hi", "requestContext": ' + nested_text(depth) + "}"
            )
            assert deep_context.status_code == 400, (depth, deep_context.text)
            [issue] = deep_context.json()["issues"]
            assert issue["message"] == f"nested more than {MAX_JSON_DEPTH} levels deep"
            assert issue["field"].startswith("requestContext.a")
            deep_resume = await post(
                "/agents/assistant/resume-stream", '{"runId": "r", "resumeData": ' + nested_text(depth) + "}"
            )
            assert deep_resume.status_code == 400 and deep_resume.json()["error"] == "Invalid request body"
        very_deep = await post("/agents/assistant/generate", '{"messages": ' + "[" * 100_000 + "]" * 100_000 + "}")
        assert very_deep.status_code == 400
        assert very_deep.json()["issues"][0]["message"] == f"nested more than {MAX_JSON_DEPTH} levels deep"
        fine = await http.post(
            "/tools/weather-tool/execute", json={"data": {"city": "Oslo"}, "requestContext": nested(MAX_JSON_DEPTH - 2)}
        )
        assert fine.status_code == 200

        long_id = await http.post("/agents/assistant/generate", json={"messages": "hi", "runId": "r" * 1001})
        assert long_id.status_code == 400
        assert long_id.json()["issues"] == [{"field": "runId", "message": "a run id is at most 1000 bytes long"}]
        slash = await http.post("/agents/assistant/stream", json={"messages": "hi", "runId": "a/b"})
        assert slash.status_code == 400
        assert slash.json()["issues"] == [
            {"field": "runId", "message": 'a run id cannot contain "/": no route could address the run'}
        ]
        listed = (await http.get("/runs")).json()
        assert listed["runs"] == []  # nothing was started by any of these


async def test_ids_no_list_filter_can_name_are_refused_at_the_start_and_at_the_erasure(make_app: AppFactory) -> None:
    """A NUL character ends a list filter's string early on Temporal's SQL visibility stores: a run started under
    such an id could never be listed or erased, and an erasure naming one failed after Temporal's retries (503)."""
    app = parity_app(make_app)
    async with served(app) as http, running_worker(app):
        for body, reason in (
            (
                {"messages": "hi", "memory": {"thread": "t", "resource": "acme\x00"}},
                "memory resource cannot contain a NUL",
            ),
            (
                {"messages": "hi", "memory": {"thread": "t\x00", "resource": "acme"}},
                "memory thread cannot contain a NUL",
            ),
            ({"messages": "hi", "runId": "r\x00"}, "a run id cannot contain control characters"),
        ):
            started = await http.post("/agents/assistant/generate", json=body)
            assert started.status_code == 400 and reason in started.text, (body, started.text)
        for body in ({"resourceId": "acme\x00"}, {"resourceId": "acme", "threadId": "t\x00"}, {"runId": "r\x00"}):
            erased = await http.post("/erasure", json=body)
            assert erased.status_code == 400, (body, erased.text)
            assert "cannot contain a NUL character: Temporal's list filters cannot name it" in erased.json()["error"]
        listed = await http.get("/runs", params={"resource": "acme\x00"})
        assert listed.status_code == 400
    started_runs = await app.client.count_workflows(f"TaskQueue = '{app.task_queue}'")
    assert started_runs.count == 0  # nothing was started under the refused ids


async def test_offsets_last_event_ids_and_reconnecting_past_the_end(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    async with served(app) as http, running_worker(app):
        done = (await http.post("/agents/assistant/generate", json={"messages": "hello"})).json()
        run_id = done["runId"]
        full = sse_blocks((await http.get(f"/runs/{run_id}/stream")).content)
        events = [block for block in full if block.startswith("id: ")]
        last_id = int(events[-1].split("\n")[0][4:])
        assert json.loads(events[-1].split("\n")[1][6:])["type"] == "finish"

        for header in (b"\xb2", b"1" * 5000, str(2**63 - 1).encode(), b"-1", b"1e3"):
            answer = await http.get(f"/runs/{run_id}/stream", headers={b"Last-Event-ID": header})
            assert answer.status_code == 400, (header[:20], answer.text)
            assert answer.json() == {
                "error": "Invalid request headers",
                "issues": [
                    {"field": "Last-Event-ID", "message": "expected the id of an event of this stream (an offset)"}
                ],
            }
        for offset in (2**63, 10**30):
            query = await http.get(f"/runs/{run_id}/stream", params={"offset": offset})
            assert query.status_code == 400 and query.json()["issues"][0]["field"] == "offset"
            observed = await http.post("/agents/assistant/observe", json={"runId": run_id, "offset": offset})
            assert observed.status_code == 400 and observed.json()["issues"][0]["field"] == "offset"

        # A client that lost only [DONE] reconnects after the finish: it gets [DONE], not an error.
        after_finish = await http.get(f"/runs/{run_id}/stream", headers={"Last-Event-ID": str(last_id)})
        assert after_finish.status_code == 200
        assert [b for b in sse_blocks(after_finish.content) if not b.startswith(":")] == ["data: [DONE]"]
        for offset in (last_id + 1, last_id + 50, 2**63 - 1):
            past = await http.get(f"/runs/{run_id}/stream", params={"offset": offset})
            assert [b for b in sse_blocks(past.content) if not b.startswith(":")] == ["data: [DONE]"], offset
            observed = await http.post("/agents/assistant/observe", json={"runId": run_id, "offset": offset})
            assert sse_chunks(observed.content) == [], offset
        huge_id = await http.get(f"/runs/{run_id}/stream", headers={"Last-Event-ID": str(2**63 - 2)})
        assert [b for b in sse_blocks(huge_id.content) if not b.startswith(":")] == ["data: [DONE]"]
        again = await http.get(f"/runs/{run_id}/stream", headers={"Last-Event-ID": str(last_id - 1)})
        assert [b for b in sse_blocks(again.content) if not b.startswith(":")][-2:] == [events[-1], "data: [DONE]"]


async def test_approving_a_call_that_waits_for_data_is_refused_and_not_recorded(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    async with served(app) as http, running_worker(app):
        run_id = (await http.post("/agents/assistant/generate", json={"messages": "charge 990"})).json()["runId"]
        refusals = [
            await http.post(f"/runs/{run_id}/approve", json={}),
            await http.post(f"/runs/{run_id}/decline", json={"reason": "no"}),
            await http.post("/agents/assistant/approve-tool-call", json={"runId": run_id, "toolCallId": "call-c1"}),
            await http.post(
                "/agents/assistant/approve-tool-call-generate", json={"runId": run_id, "toolCallId": "call-c1"}
            ),
            await http.post("/agents/assistant/decline-tool-call", json={"runId": run_id, "toolCallId": "call-c1"}),
            await http.post(
                "/agents/assistant/decline-tool-call-generate", json={"runId": run_id, "toolCallId": "call-c1"}
            ),
            await http.post("/inbox/answer", json={"runId": run_id, "toolCallId": "call-c1", "action": "decline"}),
            await http.post("/inbox/answer", json={"runId": run_id, "toolCallId": "call-c1", "action": "approve"}),
        ]
        for refused in refusals:
            assert refused.status_code == 422, refused.text
            assert "validation failed for confirm-tool" in refused.json()["error"]
            assert refused.json()["validationErrors"]
        detail = (await http.get(f"/runs/{run_id}")).json()
        assert detail["answers"] == []
        assert [call["toolCallId"] for call in detail["pending"]] == ["call-c1"]
        accepted = await http.post(f"/runs/{run_id}/resume", json={"resumeData": {"confirmed": True}})
        assert accepted.status_code == 200
        for _ in range(200):
            detail = (await http.get(f"/runs/{run_id}")).json()
            if detail["answers"]:
                break
            await asyncio.sleep(0.05)
        assert [(a["toolCallId"], a["action"]) for a in detail["answers"]] == [("call-c1", "resume")]


async def test_bogus_cursors_are_refused(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    async with served(app) as http:
        for route in ("/runs", "/dashboard/runs", "/inbox"):
            for cursor in ("aaaa", "!!", page_cursor(b"not a token of Temporal's")[:-4] + "AAAA"):
                answer = await http.get(route, params={"cursor": cursor})
                assert answer.status_code == 400, (route, cursor, answer.text)
                assert answer.json()["issues"] == [{"field": "cursor", "message": "bad cursor"}]
    assert page_token("aaaa") is None
    assert page_token(page_cursor(b"\x01token")) == b"\x01token"


async def test_a_server_error_says_it_closes_the_connection(make_app: AppFactory) -> None:
    def authorize(request: Request) -> None:
        if request.url.path.endswith("/tools"):
            raise RuntimeError("the authorize hook broke")

    app = parity_app(make_app)
    async with served(app, authorize=authorize) as http:
        broken = await http.get("/tools")
        assert broken.status_code == 500 and broken.headers["connection"] == "close"
        assert broken.json() == {"error": "the authorize hook broke"}
        for _ in range(3):  # the same client goes on: no request is sent on the dropped connection
            assert (await http.get("/agents")).status_code == 200


HOSTILE_BODIES: list[tuple[str, str]] = [
    ("3 MB messages", json.dumps({"messages": "x" * 3_000_000})),
    ("5 MB messages", json.dumps({"messages": "x" * 5_000_000})),
    ("surrogate in messages", '{"messages": ' + SURROGATE_TEXT + "}"),
    ("surrogate in data", '{"data": {"city": ' + SURROGATE_TEXT + "}}"),
    ("surrogate in requestContext", '{"messages": "hi", "requestContext": {"k": ' + SURROGATE_TEXT + "}}"),
    ("surrogate in memory.thread", '{"messages": "hi", "memory": {"thread": ' + SURROGATE_TEXT + ', "resource": "u"}}'),
    ("surrogate in runId", '{"messages": "hi", "runId": ' + SURROGATE_TEXT + ', "resumeData": {}}'),
    ("surrogate in resumeData", '{"runId": "r", "resumeData": ' + SURROGATE_TEXT + "}"),
    ("surrogate in a key", '{"messages": "hi", "requestContext": {"\\ud800": ' + SURROGATE_TEXT + "}}"),
    ("runId of 1001 characters", json.dumps({"messages": "hi", "runId": "r" * 1001, "resumeData": {}})),
    ("runId with a slash", json.dumps({"messages": "hi", "runId": "a/b", "resumeData": {}})),
    ("requestContext 200 deep", '{"messages": "hi", "requestContext": ' + nested_text(200) + "}"),
    ("requestContext 300 deep", '{"messages": "hi", "requestContext": ' + nested_text(300) + "}"),
    ("resumeData 900 deep", '{"runId": "r", "resumeData": ' + nested_text(900) + "}"),
    ("offset 2^63", json.dumps({"runId": "r", "offset": 2**63})),
    ("NUL in resourceId", json.dumps({"messages": "hi", "resourceId": "acme\x00", "threadId": "t"})),
    ("NUL in memory.resource", json.dumps({"messages": "hi", "memory": {"thread": "t", "resource": "acme\x00"}})),
    ("NUL in runId", json.dumps({"runId": "r\x00", "resumeData": {}})),
]
HOSTILE_QUERIES: list[tuple[str, str, dict[bytes, bytes]]] = [
    ("cursor aaaa", "cursor=aaaa", {}),
    ("offset 2^63", f"offset={2**63}", {}),
    ("Last-Event-ID superscript two", "", {b"Last-Event-ID": b"\xb2"}),
    ("Last-Event-ID of 5000 digits", "", {b"Last-Event-ID": b"9" * 5000}),
    ("surrogates in the query", "thread=%ED%A0%80&requestContext=%7B%22k%22%3A%22%5Cud800%22%7D", {}),
]


def _paths(document: dict[str, Any], runs: list[str]) -> list[tuple[str, str]]:
    """Every operation (method, path) with its path parameters filled with a known agent, tool or run."""
    found = []
    for template, operations in document["paths"].items():
        if template.endswith("/dashboard/events"):
            continue  # a live feed that never ends
        for method in operations:
            for run_id in runs if "{run_id}" in template else runs[:1]:
                path = template.replace("{agent_id}", "assistant").replace("{tool_id}", "weather-tool")
                found.append((method.upper(), path.replace("{run_id}", run_id)))
    return found


@pytest.mark.timeout(360)  # hundreds of requests, each a changing one recorded twice in the audit trail: 83 s alone
async def test_no_route_answers_a_server_error_to_hostile_input(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    async with served(app) as http, running_worker(app):
        closed = (await http.post("/agents/assistant/generate", json={"messages": "hello"})).json()["runId"]
        suspended = (await http.post("/agents/assistant/generate", json={"messages": "charge 990"})).json()["runId"]
        base = str(http.base_url).rstrip("/").removesuffix("/api")
        async with httpx.AsyncClient(base_url=base, timeout=60) as root:
            document = (await root.get("/openapi.json")).json()
            server_errors: list[str] = []
            operations = _paths(document, [closed, suspended])
            assert len(operations) >= 30
            for method, path in operations:
                if method == "POST":
                    for name, body in HOSTILE_BODIES:
                        answer = await root.post(path, content=body, headers={"content-type": "application/json"})
                        if answer.status_code >= 500:
                            server_errors.append(f"POST {path} with {name}: {answer.status_code} {answer.text[:200]}")
                elif method == "GET":
                    if path.endswith("/stream") and suspended in path:
                        continue  # a waiting run's stream follows it until it ends
                    for name, query, headers in HOSTILE_QUERIES:
                        answer = await root.get(f"{path}?{query}", headers=headers)
                        if answer.status_code >= 500:
                            server_errors.append(f"GET {path} with {name}: {answer.status_code} {answer.text[:200]}")
            assert server_errors == []


async def test_a_run_that_cannot_decode_its_input_never_fails_a_list(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    async with served(app) as http, running_worker(app):
        refused = await http.post("/agents/assistant/generate", json={"messages": "hi", "requestContext": nested(200)})
        assert refused.status_code == 400  # at the door; a client of the App itself can still start one:
        broken = await app.stream("assistant", "hi", request_context=nested(200))
        for _ in range(600):
            listed = (await http.get("/dashboard/runs", params={"status": "failed"})).json()
            if listed.get("runs"):
                break
            await asyncio.sleep(0.05)
        assert [run["runId"] for run in listed["runs"]] == [broken.run_id]
        plain = await http.get("/dashboard/runs")
        assert plain.status_code == 200
        assert [(run["runId"], run["steps"]) for run in plain.json()["runs"]] == [(broken.run_id, None)]


async def test_serve_and_dev_take_the_body_limit(make_app: AppFactory) -> None:
    app = parity_app(make_app)
    for command in ("serve", "dev"):
        args = build_parser().parse_args([command, "--app", "x:app", "--api-port", "0", "--max-body-bytes", "2000"])
        server = await start_api(app, args)
        try:
            async with httpx.AsyncClient(base_url=server.url + "/api", timeout=60) as http:
                refused = await http.post("/tools/weather-tool/execute", json={"data": {"city": "x" * 2000}})
                assert refused.json() == {"error": "Request body too large: at most 2000 bytes are accepted"}
                assert (await http.post("/tools/weather-tool/execute", json={"data": {"city": "x"}})).status_code == 200
        finally:
            await server.stop()
    assert build_parser().parse_args(["serve", "--app", "x:app"]).max_body_bytes == MAX_BODY_BYTES
