"""The runs of a scenario, followed from the harness: each to its end (resumed once it is suspended, when allowed;
through restarts of the Temporal server), and through the API server's run stream (what guarantee 7 checks)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

import httpx
from temporalio.client import WorkflowFailureError
from temporalio.service import RPCError

from tempo_agents import App
from tempo_agents.errors import ResumeError
from tempo_agents.workflows.payloads import RunResult
from tests.support.chaos.check import RunOutcome
from tests.support.chaos.progress import say

__all__ = ["RESUME_DATA", "RunFollower", "read_run_stream"]


async def read_run_stream(base_url: str, run_id: str) -> list[tuple[int, str]]:
    """Follow ``GET /api/runs/{run_id}/stream`` from offset 0 on one connection until ``[DONE]``; returns the
    ``(id, chunk type)`` of every event, in order."""
    events: list[tuple[int, str]] = []
    timeout = httpx.Timeout(10.0, read=120.0)  # the server pings every 15 s while a run is idle
    async with (
        httpx.AsyncClient(base_url=base_url, timeout=timeout) as http,
        http.stream("GET", f"/api/runs/{run_id}/stream", params={"offset": 0}) as response,
    ):
        response.raise_for_status()
        buffer = ""
        async for text in response.aiter_text():
            buffer += text
            *blocks, buffer = buffer.split("\n\n")
            for block in blocks:
                event_id: int | None = None
                data = ""
                for line in block.split("\n"):
                    if line.startswith("id: "):
                        event_id = int(line[4:])
                    elif line.startswith("data: "):
                        data = line[6:]
                if data == "[DONE]":
                    return events
                if event_id is not None and data:
                    events.append((event_id, json.loads(data)["type"]))
    raise RuntimeError(f"the stream of {run_id[:8]} ended without [DONE] after {len(events)} events")


RESUME_DATA = {"ok": True}


@dataclass
class RunFollower:
    """Starts one run and follows it to its end: resumes it once it is suspended (when allowed), and reports
    how its workflow ended. Survives the Temporal server going away (RPC errors are retried)."""

    app: App
    agent_id: str
    may_resume: asyncio.Event
    run_id: str = ""
    suspended: asyncio.Event = field(default_factory=asyncio.Event)
    outcome: RunOutcome | None = None

    async def start(self, prompt: str) -> None:
        stream = await self.app.agent(self.agent_id).stream(prompt)
        self.run_id = stream.run_id

    async def follow(self) -> RunOutcome:
        if self.agent_id == "chaos-suspend":
            await self._until_suspended()
            if not self.suspended.is_set():
                return await self._result()
            await self.may_resume.wait()
            await self._resume()
        self.outcome = await self._result()
        return self.outcome

    async def _until_suspended(self) -> None:
        store = self.app.store
        offset = 0
        while True:
            for entry in await store.read_chunks(self.run_id, offset, 10_000):
                offset = entry.offset + 1
                chunk = entry.chunk
                if chunk["type"] == "finish":
                    if chunk["payload"]["stepResult"]["reason"] == "suspended":
                        self.suspended.set()
                    return
            await asyncio.sleep(0.2)

    async def _resume(self) -> None:
        while True:
            try:
                await self.app.agent(self.agent_id).resume_stream(RESUME_DATA, run_id=self.run_id)
                return
            except ResumeError as error:
                # An earlier attempt may have been applied although its answer was lost with the server.
                say(f"resume of {self.run_id[:8]} refused: {error}; not retried")
                return
            except (RPCError, RuntimeError) as error:
                say(f"resume of {self.run_id[:8]} failed ({type(error).__name__}: {error}); retrying")
                await asyncio.sleep(0.5)

    async def _result(self) -> RunOutcome:
        handle = self.app.client.get_workflow_handle(self.run_id, result_type=RunResult)
        while True:
            try:
                result = await asyncio.wait_for(handle.result(), 30)
            except TimeoutError:
                continue
            except WorkflowFailureError as error:
                cause = error.cause
                return RunOutcome(self.agent_id, "failed", f"{cause}" if cause is not None else str(error))
            except RPCError:
                await asyncio.sleep(0.5)
                continue
            return RunOutcome(self.agent_id, "completed", result.finish_reason)
