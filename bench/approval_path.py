"""The path of one approval through the code: which files it passes, in order, and how often it crosses between them.

    python bench/approval_path.py [--files] [--back]

One process holds the embedded dev server's client, the worker and the HTTP API (as ``tempo-agents dev`` does). An
agent on a ``ScriptedModel`` calls a tool that needs approval; an HTTP client posts ``/api/agents/support/stream``,
reads the SSE stream until the run waits, posts ``/api/agents/support/approve-tool-call`` and reads that stream to
its end. While it does, a profile hook sees every call from a function in one ``tempo_agents`` file to a function
in another (every thread: the event loop, the workflow task threads, the activity threads). It prints:

- ``crossings``: the distinct (caller file, called file) pairs: the file boundaries the path crosses;
- ``into a file entered earlier``: those of them whose called file the path entered before the calling one;
- ``back into a file still on the stack``: those whose called file has a function further up the
  call stack (A calls B, which calls back into A): control that goes back and forth between files;
- ``calls across files``: every such call, repeats included (grows with the number of chunks streamed);
- with ``--files``, the files in the order the path first enters them; with ``--back``, the crossings back.

The figures depend on the code's layout, not on the machine; nothing here is timed. Only top-level names of the
package and ``tempo_agents.server.serving`` are imported, so the same script measures earlier layouts too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tempo_agents
from bench._common import start_server
from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.server.serving import ApiServer

PACKAGE = str(Path(tempo_agents.__file__).parent) + "/"


def _still_inside(frame: FrameType | None, filename: str) -> bool:
    """Whether ``filename`` has a function on the call stack from ``frame`` up (awaits included)."""
    while frame is not None:
        if frame.f_code.co_filename == filename:
            return True
        frame = frame.f_back
    return False


class CrossingRecorder:
    """Records calls from one package file into another, from every thread."""

    def __init__(self) -> None:
        self.pairs: dict[tuple[str, str], int] = {}
        self.first_entered: dict[str, int] = {}
        self.into_earlier: set[tuple[str, str]] = set()
        self.back_into_stack: set[tuple[str, str]] = set()
        self.recording = False
        self.finished = False
        self._lock = threading.Lock()

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if not self.recording:
            if self.finished:
                sys.setprofile(None)  # this thread's hook goes at its next call, before the interpreter stops
            return
        if event != "call" or frame.f_back is None:
            return
        callee, caller = frame.f_code.co_filename, frame.f_back.f_code.co_filename
        if callee == caller or not callee.startswith(PACKAGE) or not caller.startswith(PACKAGE):
            return
        pair = (caller[len(PACKAGE) :], callee[len(PACKAGE) :])
        with self._lock:
            for name in pair:
                self.first_entered.setdefault(name, len(self.first_entered))
            if pair not in self.pairs and self.first_entered[pair[1]] < self.first_entered[pair[0]]:
                self.into_earlier.add(pair)
            if pair not in self.pairs and _still_inside(frame.f_back.f_back, callee):
                self.back_into_stack.add(pair)
            self.pairs[pair] = self.pairs.get(pair, 0) + 1

    def install(self) -> None:
        """Hook every thread started from now on (and this one); nothing is recorded before ``recording``."""
        threading.setprofile(self)
        sys.setprofile(self)

    def stop(self) -> None:
        self.finished = True
        sys.setprofile(None)
        threading.setprofile(None)


async def refund(data: dict[str, Any]) -> dict[str, Any]:
    return {"refunded": data.get("order")}


def support_app(store_dir: Path, client: Any) -> App:
    tool = create_tool(id="refund", description="Refunds an order", execute=refund, require_approval=True)
    model = ScriptedModel(
        [
            ScriptedResponse(text="I will refund it.", tool_calls=[ScriptedToolCall("refund", {"order": 7})]),
            ScriptedResponse(text="Refunded."),
        ]
    )
    agent = Agent(id="support", instructions="You refund orders.", model=model, tools={"refund": tool})
    store = f"sqlite:///{store_dir / 'store.db'}"
    return App(agents=[agent], store=store, task_queue="approval-path", client=client)


async def sse_lines(client: httpx.AsyncClient, path: str, body: dict[str, Any]) -> list[str]:
    async with client.stream("POST", path, json=body) as response:
        response.raise_for_status()
        return [line async for line in response.aiter_lines() if line.startswith("data: ")]


def waiting_call(lines: list[str]) -> tuple[str, str]:
    for line in lines:
        if line == "data: [DONE]":
            continue
        chunk = json.loads(line[len("data: ") :])
        if chunk.get("type") == "tool-call-approval":
            return chunk["runId"], chunk["payload"]["toolCallId"]
    raise SystemExit(f"the run asked for no approval: {lines}")


async def main() -> None:
    parser = argparse.ArgumentParser(description="The files one approval passes through, and its file crossings.")
    parser.add_argument("--files", action="store_true", help="list the files in the order the path enters them")
    parser.add_argument("--back", action="store_true", help="list the crossings back into a file still on the stack")
    options = parser.parse_args()
    recorder = CrossingRecorder()
    environment = await start_server(None, stock=False)
    with tempfile.TemporaryDirectory() as directory:
        app = support_app(Path(directory), environment.client)
        server = ApiServer(app, port=0)
        await server.start()
        recorder.install()  # before the worker, so its task threads are seen too
        try:
            async with app.worker(environment.client), httpx.AsyncClient(base_url=server.url, timeout=60) as client:
                recorder.recording = True
                first = await sse_lines(client, "/api/agents/support/stream", {"messages": "Refund order 7"})
                run_id, call_id = waiting_call(first)
                rest = await sse_lines(
                    client, "/api/agents/support/approve-tool-call", {"runId": run_id, "toolCallId": call_id}
                )
                recorder.recording = False
        finally:
            recorder.stop()
            await server.stop()
            await environment.shutdown()
    if not any('"Refunded."' in line or "Refunded." in line for line in rest):
        raise SystemExit(f"the approved run did not end as scripted: {rest[-3:]}")
    calls = sum(recorder.pairs.values())
    print(
        f"approval_path: files={len(recorder.first_entered)} crossings={len(recorder.pairs)} "
        f"into a file entered earlier={len(recorder.into_earlier)} "
        f"back into a file still on the stack={len(recorder.back_into_stack)} calls across files={calls}"
    )
    if options.files:
        for name in sorted(recorder.first_entered, key=recorder.first_entered.__getitem__):
            print(f"  {name}")
    if options.back:
        for caller, callee in sorted(recorder.back_into_stack):
            print(f"  {caller} -> {callee} ({recorder.pairs[(caller, callee)]} calls)")


if __name__ == "__main__":
    asyncio.run(main())
