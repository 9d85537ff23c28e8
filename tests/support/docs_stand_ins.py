"""What a docs page's Python block may use without defining it: the names its page's prose has already
introduced (an agent, a model, a tool's function, an input schema), each a real object of the kind the page
means, and the secrets its code reads from the environment. The site's tests run each block in a namespace
holding these, so a block whose call no longer matches the code fails there."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from temporalio import workflow

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ToolContext, create_tool
from tempo_agents.worker.dev_server import free_port

__all__ = ["ENVIRONMENT", "FindUserWorkflow", "local_mcp_servers", "stand_ins"]

ENVIRONMENT = {
    "OPS_SECRET": "whsec_c2VjcmV0LWZvci10aGUtZG9jcw==",
    "SLACK_WEBHOOK_URL": "http://127.0.0.1:9/slack",
    "SMTP_PASSWORD": "password",
    "LINK_SECRET": "a-link-secret",
    "TRACKER_SECRET": "whsec_dHJhY2tlci1zZWNyZXQ=",
    "CI_TOKEN": "a-ci-token",
    "TRIAGE_WEBHOOK_SECRET": "whsec_dHJpYWdlLXNlY3JldA==",
}
"""The variables the docs' blocks read (``os.environ[...]``), with values of the form each one takes."""


class CityIn(BaseModel):
    city: str


class Transfer(BaseModel):
    amount: int
    to: str


@workflow.defn(name="FindUser", sandboxed=False)
class FindUserWorkflow:
    """A workflow the docs pass as a tool."""

    @workflow.run
    async def run(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"user": data.get("name")}


async def _tool_function(data: Any, ctx: ToolContext) -> dict[str, str]:
    return {"done": "yes"}


def _ticket(payload: dict[str, Any]) -> str:
    return f"ticket {payload['id']}"


def stand_ins() -> dict[str, Any]:
    """A fresh namespace of the names the docs' blocks use before they define them."""
    model = ScriptedModel([ScriptedResponse(text="done")])
    tool = create_tool(id="weather-tool", description="Weather for a city", input_schema=CityIn, execute=_tool_function)
    agent = Agent(id="assistant", model=model)
    return {
        "__name__": "docs_block",
        "json": json,
        "os": os,
        "Agent": Agent,
        "App": App,
        "create_tool": create_tool,
        "model": model,
        "agent": agent,
        "app": App(agents=[Agent(id="assistant", model=model), Agent(id="reporter", model=model)]),
        "triage": Agent(id="triage", model=model),
        "billing": Agent(id="billing", model=model),
        "weather": tool,
        "ticket": _ticket,
        "CityIn": CityIn,
        "Transfer": Transfer,
        "FindUserWorkflow": FindUserWorkflow,
        **{name: _tool_function for name in ("send_wire", "render", "look_up_weather", "do_refund", "send")},
    }


MCP_SERVER = Path(__file__).parent / "mcp_servers" / "inventory.py"


@contextmanager
def local_mcp_servers(folder: Path) -> Iterator[dict[str, str]]:
    """The environment under which the MCP page's servers are the tests' own: an ``npx`` on ``PATH`` that runs the
    inventory server over stdio (whatever package it is asked for) and the same server over streamable HTTP, its
    address in ``TRACKER_MCP_URL``."""
    bin_folder = folder / "bin"
    bin_folder.mkdir()
    npx = bin_folder / "npx"
    npx.write_text(f"#!/bin/sh\nexec {sys.executable} {MCP_SERVER} stdio\n")
    npx.chmod(0o755)
    port = free_port()
    server = subprocess.Popen([sys.executable, str(MCP_SERVER), "http", str(port)], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not _accepts(port):
            assert server.poll() is None and time.monotonic() < deadline, "the MCP server did not start"
            time.sleep(0.05)
        path = f"{bin_folder}:{os.environ['PATH']}"
        yield {"PATH": path, "TRACKER_MCP_URL": f"http://127.0.0.1:{port}/mcp"}
    finally:
        server.kill()
        server.wait(10)


def _accepts(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0
