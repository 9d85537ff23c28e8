"""Models and tools that stop at a gate the test opens, to force races with a run's cancellation or to keep a run
streaming while its followers come and go: a gated step or call waits inside the model or the tool until the test
says so; a pausing model waits mid-stream; the deaf ones go on waiting when their activity is told to stop, as a step
or call that finished before the request reached it would."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Protocol

from tempo_agents import ScriptedModel, ScriptedResponse, ToolContext
from tempo_agents.models import ModelEvent, ModelRequest
from tempo_agents.models.model import TextDelta


class Deaf(Protocol):
    """A model or tool that goes on when told to stop: ``reached`` once inside, ``told`` once told, ``gate`` lets
    it finish."""

    reached: asyncio.Event
    told: asyncio.Event
    gate: asyncio.Event


async def _wait_deaf(gate: asyncio.Event, told: asyncio.Event) -> None:
    """Wait for ``gate``; a cancellation meanwhile is noted in ``told`` and taken back."""
    while not gate.is_set():
        try:
            await gate.wait()
        except asyncio.CancelledError:
            told.set()
            task = asyncio.current_task()
            assert task is not None
            task.uncancel()


class GatedModel(ScriptedModel):
    """A scripted model whose step ``gated`` waits, inside the model, until ``gate`` is set."""

    def __init__(self, responses: Sequence[ScriptedResponse], gated: int) -> None:
        super().__init__(list(responses))
        self.gated = gated
        self.reached = asyncio.Event()
        self.gate = asyncio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if request.step == self.gated:
            self.reached.set()
            await self._hold()
        async for event in super().stream(request):
            yield event

    async def _hold(self) -> None:
        await self.gate.wait()


class PausingModel(ScriptedModel):
    """A scripted model that streams the first ``pause_after`` words of each step's text, then waits, inside the
    stream, until ``gate`` is set: the run is live and streaming for as long as the test needs it to be."""

    def __init__(self, responses: Sequence[ScriptedResponse], pause_after: int, delta_delay: float = 0.0) -> None:
        super().__init__(list(responses), delta_delay=delta_delay)
        self.pause_after = pause_after
        self.gate = asyncio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        words = 0
        async for event in super().stream(request):
            if isinstance(event, TextDelta):
                if words == self.pause_after:
                    await self.gate.wait()
                words += 1
            yield event


class DeafModel(GatedModel):
    """A gated model that does not stop when its activity is cancelled: it notes it in ``told`` and waits on."""

    def __init__(self, responses: Sequence[ScriptedResponse], gated: int) -> None:
        super().__init__(responses, gated)
        self.told = asyncio.Event()

    async def _hold(self) -> None:
        await _wait_deaf(self.gate, self.told)


class DeafTool:
    """A tool that does not stop when its activity is cancelled: it notes it in ``told`` and waits for ``gate``."""

    def __init__(self) -> None:
        self.reached = asyncio.Event()
        self.told = asyncio.Event()
        self.gate = asyncio.Event()

    async def __call__(self, data: dict[str, str], ctx: ToolContext) -> dict[str, str]:
        self.reached.set()
        await _wait_deaf(self.gate, self.told)
        return {"noted": data["text"]}
