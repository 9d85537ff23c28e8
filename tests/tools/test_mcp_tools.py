"""Tools of a real MCP server (tests/support/mcp_servers/inventory.py, written with the mcp SDK's server side),
started by the test over stdio and over streamable HTTP on 127.0.0.1, called by agent runs on the dev server."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tempo_agents import Agent, GenerateResult, ScriptedModel, ScriptedResponse, ScriptedToolCall
from tempo_agents.journal.chunks import ToolErrorChunk, ToolResultChunk
from tempo_agents.mcp import McpServerUnavailableError, list_mcp_tools, mcp_tools
from tempo_agents.worker.dev_server import free_port
from tests.conftest import AppFactory, running_worker

SERVER_FILE = Path(__file__).parents[1] / "support" / "mcp_servers" / "inventory.py"
STDIO_COMMAND = [sys.executable, str(SERVER_FILE)]
INVENTORY_TOOLS = ["inventory_stock", "inventory_shout", "inventory_fail", "inventory_find_item", "inventory_pid"]


class HttpServer:
    """The inventory server over streamable HTTP, in a process of its own."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process = subprocess.Popen([*STDIO_COMMAND, "http", str(self.port)], stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while not self._accepts():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                stderr = self.process.stderr.read() if self.process.stderr else b""
                pytest.fail(f"the MCP server did not start: {stderr!r}")
            time.sleep(0.05)

    def _accepts(self) -> bool:
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", self.port)) == 0

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(10)


@pytest.fixture
def http_server() -> Iterator[HttpServer]:
    server = HttpServer()
    try:
        yield server
    finally:
        server.stop()


async def test_stdio_tools_are_listed_with_their_schemas_and_their_results_reach_the_model(
    make_app: AppFactory,
) -> None:
    tools = mcp_tools(STDIO_COMMAND)  # as an App module does at import; inside a running loop it lists from a thread
    assert list(tools) == INVENTORY_TOOLS  # prefixed with the server's name; "find.item" sanitised
    model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=[
                    ScriptedToolCall("inventory_stock", {"item": "apples"}),
                    ScriptedToolCall("inventory_find_item", {"name": "pears"}),
                ]
            ),
            ScriptedResponse(text="12 apples; pears in aisle 3."),
        ]
    )
    app = make_app([Agent(id="shop", model=model, tools=tools)])
    async with running_worker(app):
        result = await app.agent("shop").generate("how many apples, and where are the pears?")

    (offered, *_) = model.requests[0].tools
    assert (offered.name, offered.description) == ("inventory_stock", "How many of an item are in stock")
    assert offered.input_schema["properties"] == {"item": {"title": "Item", "type": "string"}}
    assert offered.input_schema["required"] == ["item"]
    results = {c.payload.tool_name: c.payload.result for c in result.chunks if isinstance(c, ToolResultChunk)}
    # the structured content of the server's answer (its SDK wraps a returned string as {"result": ...})
    assert results == {
        "inventory_stock": {"item": "apples", "count": 12},
        "inventory_find_item": {"result": "pears is in aisle 3"},
    }
    seen = [part for message in model.requests[1].messages for part in message.tool_results]
    assert [(part.tool_name, part.is_error, part.result) for part in seen] == [
        ("inventory_stock", False, {"item": "apples", "count": 12}),
        ("inventory_find_item", False, {"result": "pears is in aisle 3"}),
    ]
    assert result.text == "12 apples; pears in aisle 3."


async def test_http_tools_run_and_an_mcp_error_is_a_tool_error(make_app: AppFactory, http_server: HttpServer) -> None:
    tools = await asyncio.to_thread(mcp_tools, http_server.url, prefix="stock room")
    assert list(tools) == [name.replace("inventory_", "stock_room_") for name in INVENTORY_TOOLS]
    model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=[
                    ScriptedToolCall("stock_room_shout", {"text": "open up"}),
                    ScriptedToolCall("stock_room_fail", {"reason": "holiday"}),
                    ScriptedToolCall("stock_room_stock", {"count": 3}),
                ]
            ),
            ScriptedResponse(text="It is closed."),
        ]
    )
    app = make_app([Agent(id="room", model=model, tools=tools)])
    async with running_worker(app):
        result = await app.agent("room").generate("shout, then try the shop")

    results = [(c.payload.tool_name, c.payload.result) for c in result.chunks if isinstance(c, ToolResultChunk)]
    errors = [(c.payload.tool_name, c.payload.error) for c in result.chunks if isinstance(c, ToolErrorChunk)]
    assert ("stock_room_shout", {"result": "OPEN UP"}) in results
    assert ("stock_room_fail", "Error executing tool fail: the warehouse is closed: holiday") in errors
    # arguments are checked against the server's input schema before the server is called
    (invalid,) = [result for name, result in results if name == "stock_room_stock"]
    assert invalid["error"] is True and "item" in invalid["message"]
    seen = {part.tool_name: part for message in model.requests[1].messages for part in message.tool_results}
    assert seen["stock_room_fail"].is_error
    assert seen["stock_room_fail"].result == "Error executing tool fail: the warehouse is closed: holiday"


async def test_a_server_that_is_down_gives_a_clear_error(make_app: AppFactory, http_server: HttpServer) -> None:
    tools = await list_mcp_tools(http_server.url)
    http_server.stop()
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("inventory_stock", {"item": "apples"})]),
            ScriptedResponse(text="The inventory is down."),
        ]
    )
    app = make_app([Agent(id="down", model=model, tools=tools)])
    async with running_worker(app):
        result = await app.agent("down").generate("how many apples?")
    (error,) = [c.payload.error for c in result.chunks if isinstance(c, ToolErrorChunk)]
    unavailable = f"MCP server {http_server.url} is unavailable: ConnectError: All connection attempts failed"
    assert error == unavailable
    assert result.text == "The inventory is down."

    with pytest.raises(McpServerUnavailableError) as listing:
        await list_mcp_tools(http_server.url)
    assert listing.value.message == unavailable
    with pytest.raises(McpServerUnavailableError, match=r"^MCP server /no/such/server is unavailable: FileNotFound"):
        await list_mcp_tools(["/no/such/server"])


def pids(result: GenerateResult) -> list[int]:
    """The process ids that answered the run's ``inventory_pid`` calls."""
    return [c.payload.result["result"] for c in result.chunks if isinstance(c, ToolResultChunk)]


def pid_calls(*steps: int) -> ScriptedModel:
    """A model whose steps call ``inventory_pid`` so many times each (in parallel), then answer."""
    responses = [ScriptedResponse(tool_calls=[ScriptedToolCall("inventory_pid", {})] * count) for count in steps]
    return ScriptedModel([*responses, ScriptedResponse(text="done")])


async def test_a_worker_keeps_one_session_and_opens_a_new_one_when_the_server_died(make_app: AppFactory) -> None:
    tools = await list_mcp_tools(STDIO_COMMAND)
    first_model, second_model = pid_calls(3, 1), pid_calls(1)
    app = make_app(
        [Agent(id="first", model=first_model, tools=tools), Agent(id="second", model=second_model, tools=tools)]
    )
    async with running_worker(app):
        first = await app.agent("first").generate("which process answers?")
        (server_pid,) = set(pids(first))  # four calls in two steps, one server process
        os.kill(server_pid, signal.SIGKILL)
        second = await app.agent("second").generate("and now?")
    assert len(pids(first)) == 4
    (new_pid,) = pids(second)  # the dead session was noticed and the call sent on a new one
    assert new_pid != server_pid
    assert not [c for c in second.chunks if isinstance(c, ToolErrorChunk)]


async def test_without_a_kept_session_every_call_connects_on_its_own(make_app: AppFactory) -> None:
    tools = await list_mcp_tools(STDIO_COMMAND, keep_session=False)
    app = make_app([Agent(id="each", model=pid_calls(2), tools=tools)])
    async with running_worker(app):
        result = await app.agent("each").generate("which processes answer?")
    answered = pids(result)
    assert len(answered) == len(set(answered)) == 2
