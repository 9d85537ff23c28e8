"""The command line with a keys file: ``tempo-agents dev`` seals its runs and wires its Temporal UI to its own codec
server; ``tempo-agents run`` seals what it starts; the stock ``temporal`` CLI reads the run only through the codec."""

from __future__ import annotations

import base64
import json
import os
import signal
from pathlib import Path

import httpx
from temporalio.client import Client

from tests.support.cli_processes import cli, read_dev_banner, start_cli, stop_cli
from tests.support.encryption import readable
from tests.support.polling import until
from tests.support.temporal_cli import show_history

APP_MODULE = """
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse

app = App(agents=[Agent(id="echo", model=ScriptedModel([ScriptedResponse(text="noted")]))])
"""
PROMPT = "cli-prompt-MARMOT-4471 payroll of Ilse Brandauer"


def write_keys(path: Path) -> Path:
    key = base64.b64encode(os.urandom(32)).decode()
    path.write_text(json.dumps({"keys": [{"id": "cli-1", "key": key}]}))
    return path


async def test_dev_with_a_keys_file_seals_runs_and_points_its_ui_at_its_codec_server(tmp_path: Path) -> None:
    (tmp_path / "echoapp.py").write_text(APP_MODULE)
    keys = write_keys(tmp_path / "keys.json")
    ports = ["--port", "0", "--ui-port", "0", "--api-port", "0"]
    dev = await start_cli(["dev", *ports, "--app", "echoapp:app", "--encryption-keys", str(keys)], tmp_path)
    try:
        said = await read_dev_banner(dev)
        api, ui = said["HTTP API"].removesuffix("/api"), said["Temporal UI"]
        async with httpx.AsyncClient() as http:
            settings = (await http.get(f"{ui}/api/v1/settings")).json()
            preflight = await http.options(
                f"{api}/codec/decode",
                headers={
                    "Origin": ui,
                    "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "x-namespace",
                },
            )
        address = said["Temporal dev server"]
        run_code, run_out, run_err = await cli(
            "run", "echo", PROMPT, "--app", "echoapp:app", "--address", address, "--encryption-keys", str(keys),
            cwd=tmp_path, timeout=120,
        )  # fmt: skip
        client = await Client.connect(address)
        run_id = await until(lambda: listed_run(client))
        code, sealed = await show_history(client, run_id)
        code_through, opened = await show_history(client, run_id, "--codec-endpoint", f"{api}/codec")
    finally:
        stopped, _, stderr = await stop_cli(dev, signal.SIGINT)
    assert settings["Codec"]["Endpoint"] == f"{api}/codec"
    assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] == ui
    assert run_code == 0, run_err
    assert "noted" in run_out
    assert code == 0 and "MARMOT" not in readable(sealed) and "cli-1" in readable(sealed)
    assert code_through == 0 and PROMPT in readable(opened)
    assert stopped == 0, stderr


async def listed_run(client: Client) -> str | None:
    """The id of the one agent run visibility lists, once it does."""
    runs = [execution.id async for execution in client.list_workflows("WorkflowType = 'AgentRunWorkflow'")]
    return runs[0] if len(runs) == 1 else None
