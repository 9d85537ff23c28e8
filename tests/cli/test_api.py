"""``tempo-agents api`` against a real server, and ``dev`` serving the HTTP API beside its worker."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import httpx
import pytest
from temporalio.testing import WorkflowEnvironment

from tests.conftest import AppFactory, running_worker
from tests.support.cli_processes import CLI, api_data, cli, read_dev_banner
from tests.support.http_api import EXAMPLE, parity_agent, served, types


@pytest.mark.timeout(300)  # about twenty CLI processes, each importing the package: minutes on a loaded machine
async def test_api_cli_tools_agents_and_runs(make_app: AppFactory) -> None:
    app = make_app([parity_agent()], tools=[t for t in parity_agent().tools.values()])
    async with served(app) as http, running_worker(app):
        url = str(http.base_url).removesuffix("/").removesuffix("/api")
        code, out, err = await cli("api", "--url", url, "tool", "list")
        assert code == 0, err
        assert set(api_data(out)) == {"weather-tool", "confirm-tool", "danger-tool", "boom-tool"}
        code, out, _ = await cli("api", "--url", url + "/api", "tool", "execute", "weather-tool", '{"city": "Oslo"}')
        assert (code, api_data(out)) == (0, {"city": "Oslo", "temperature": 21})
        code, out, _ = await cli("api", "--url", url, "tool", "execute", "weather-tool", "--schema")
        assert code == 0 and api_data(out)["required"] == ["city"]

        code, out, err = await cli("api", "--url", url, "tool", "execute", "weather-tool", "{nope")
        assert (code, out) == (1, "")
        assert json.loads(err) == {"error": {"code": "INVALID_JSON", "message": "Input must be valid JSON"}}
        code, _, err = await cli("api", "--url", url, "tool", "execute", "weather-tool", "[1]")
        assert json.loads(err)["error"]["message"] == "Input JSON must be an object"
        code, _, err = await cli("api", "--url", url, "tool", "execute", "weather-tool")
        assert json.loads(err)["error"]["code"] == "MISSING_INPUT"
        code, _, err = await cli("api", "--url", url, "tool", "get")
        assert json.loads(err)["error"] == {"code": "MISSING_ARGUMENT", "message": "Missing required argument <toolId>"}
        code, _, err = await cli("api", "--url", url, "tool", "execute", "weather-tool", '{"town": "Oslo"}')
        assert code == 1
        assert json.loads(err)["error"]["message"].startswith("Tool input validation failed for weather-tool.")
        code, _, err = await cli("api", "--url", url, "tool", "get", "nope")
        assert code == 1
        assert json.loads(err)["error"] == {
            "code": "HTTP_ERROR",
            "message": "Request failed with status 404",
            "details": {"status": 404, "body": {"error": "Tool not found"}},
        }

        code, out, _ = await cli("api", "--url", url, "agent", "list")
        assert list(api_data(out)) == ["assistant"]
        code, out, _ = await cli("api", "--url", url, "agent", "stream", "assistant", "weather in Oslo")
        chunks = [json.loads(line) for line in out.splitlines()]
        assert chunks[0]["type"] == "start" and chunks[-1]["type"] == "finish"
        code, out, _ = await cli("api", "--url", url, "agent", "generate", "assistant", "charge it")
        suspended = api_data(out)
        assert suspended["finishReason"] == "suspended"
        run_id = suspended["runId"]

        code, out, _ = await cli("api", "--url", url, "run", "show", run_id)
        assert api_data(out)["pending"][0]["toolCallId"] == "call-c1"
        code, out, err = await cli("api", "--url", url, "run", "resume", run_id, '{"confirmed": true}')
        assert code == 0, err
        offset = api_data(out)["offset"]
        code, out, _ = await cli("api", "--url", url, "run", "watch", run_id, "--offset", str(offset))
        watched = [json.loads(line) for line in out.splitlines()]
        assert types(watched)[:2] == ["start", "tool-result"] and watched[-1]["type"] == "finish"
        code, out, _ = await cli("api", "--url", url, "run", "list", "--agent", "assistant")
        assert run_id in [r["runId"] for r in api_data(out)["runs"]]
        code, _, err = await cli("api", "--url", "http://127.0.0.1:9", "tool", "list")
        assert json.loads(err)["error"]["code"] == "SERVER_UNREACHABLE"


async def test_dev_serves_the_http_api(tmp_path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        *CLI, "dev", "--port", "0", "--ui-port", "0", "--api-port", "0", "--app", f"{EXAMPLE}:app",
        cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        url = (await read_dev_banner(process)).get("HTTP API", "").removesuffix("/api")
        assert url.startswith("http://127.0.0.1:")
        async with httpx.AsyncClient(base_url=url + "/api", timeout=60) as http:
            assert list((await http.get("/agents")).json()) == ["assistant"]
            result = (await http.post("/agents/assistant/generate", json={"messages": "weather"})).json()
            assert result["finishReason"] == "stop"
            waiting = (await http.post("/agents/assistant/generate", json={"messages": "charge"})).json()
            async with http.stream("GET", f"/runs/{waiting['runId']}/stream") as following:
                assert following.status_code == 200
                await following.aiter_bytes().__anext__()  # a client follows the waiting run while dev stops
                process.send_signal(signal.SIGTERM)
                stdout, stderr = await asyncio.wait_for(process.communicate(), 30)
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            stdout, stderr = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 0, stderr.decode()
    assert stdout.decode().strip().endswith("stopped")


async def test_serve_answers_against_a_running_temporal(tmp_path: Path, temporal_env: WorkflowEnvironment) -> None:
    address = temporal_env.client.service_client.config.target_host
    process = await asyncio.create_subprocess_exec(
        *CLI, "serve", "--app", f"{EXAMPLE}:app", "--address", address, "--api-port", "0",
        cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None
    try:
        async with asyncio.timeout(60):
            line = (await process.stdout.readline()).decode()
        assert line.startswith("HTTP API at http://127.0.0.1:"), line
        url = line.split()[3]
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            assert list((await http.get("/agents")).json()) == ["assistant"]
            assert (await http.get("/runs", params={"agent": "nobody-here"})).json()["runs"] == []
    finally:
        process.send_signal(signal.SIGINT)
        stdout, stderr = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 0, stderr.decode()
    assert stdout.decode().strip().endswith("stopped")


async def test_api_cli_sends_a_token(make_app: AppFactory) -> None:
    app = make_app([parity_agent()])
    async with served(app, tokens={"cli-secret": "ops"}) as http:
        url = str(http.base_url).removesuffix("/").removesuffix("/api")

        async def run(*args: str, token_env: str | None = None) -> tuple[int, str, str]:
            env = {k: v for k, v in os.environ.items() if k != "TEMPO_AGENTS_API_TOKEN"}
            if token_env is not None:
                env["TEMPO_AGENTS_API_TOKEN"] = token_env
            return await cli("api", "--url", url, *args, env=env)

        code, _, err = await run("agent", "list")
        assert code == 1 and json.loads(err)["error"]["details"]["status"] == 401
        code, out, err = await run("--token", "cli-secret", "agent", "list")
        assert code == 0 and list(api_data(out)) == ["assistant"], err
        code, out, err = await run("agent", "list", token_env="cli-secret")
        assert code == 0 and list(api_data(out)) == ["assistant"], err
        code, _, err = await run("--token", "wrong", "agent", "list")
        assert code == 1 and json.loads(err)["error"]["details"]["body"] == {"error": "Invalid or expired token"}
