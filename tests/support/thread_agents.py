"""An agent whose runs hold their thread until a gate opens, and say what they saw: for the thread tests and bench.

The model answers ``"<message> after <n>"``, ``n`` the user messages it was shown (the thread's earlier ones and its
own): a run that saw half of another run's messages, or ran out of turn, answers something else. Each model step
waits for its gate: an ``asyncio.Event`` (one process), or a file that exists (workers in other processes)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tempo_agents import Agent, ScriptedModel, ScriptedResponse
from tempo_agents.models.model import ModelRequest


class Gate:
    """Open when its event is set, or, when given a path, when that file exists."""

    def __init__(self, path: Path | None = None, *, opened: bool = False) -> None:
        self.path = path
        self.event = asyncio.Event()
        if opened:
            self.event.set()

    def open(self) -> None:
        if self.path is not None:
            self.path.touch()
        self.event.set()

    async def wait(self) -> None:
        while not self.event.is_set():
            if self.path is not None and self.path.exists():
                return
            try:
                await asyncio.wait_for(self.event.wait(), 0.05)
            except TimeoutError:
                continue


def answer_of(message: str, seen: int) -> str:
    return f"{message} after {seen}"


def gated_agent(
    gate: Gate,
    agent_id: str = "chat",
    *,
    cancellation_gate: Gate | None = None,
    waiting: asyncio.Event | None = None,
) -> Agent:
    """The agent described in the module's text. With ``cancellation_gate``, a model step that is cancelled while it
    waits finishes cancelling only once that gate opens: its run stays the thread's active run until then. ``waiting``
    is set once a model step waits for its gate."""

    async def respond(request: ModelRequest) -> ScriptedResponse:
        if waiting is not None:
            waiting.set()
        try:
            await gate.wait()
        except asyncio.CancelledError:
            if cancellation_gate is not None:
                await cancellation_gate.wait()
            raise
        users = [m.text for m in request.messages if m.role == "user"]
        return ScriptedResponse(text=answer_of(users[-1], len(users)))

    return Agent(id=agent_id, model=ScriptedModel(respond))
