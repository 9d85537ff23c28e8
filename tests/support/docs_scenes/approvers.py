"""The setting of "Who may answer": the page's ``model`` asks for a transfer of 450 to acme. The block must print
the run's refusal of mallory, naming who may answer, then the end of the run carol approved."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, redirect_stdout

from tempo_agents import ScriptedModel, ScriptedResponse, ScriptedToolCall
from tests.support.docs_scenes.scene import Names

__all__ = ["a_transfer_to_approve"]


@asynccontextmanager
async def a_transfer_to_approve(names: Names, address: str) -> AsyncIterator[None]:
    call = ScriptedToolCall("transfer", {"amount": 450, "to": "acme"}, id="call-1")
    names["model"] = ScriptedModel([ScriptedResponse(tool_calls=[call]), ScriptedResponse(text="Sent.")])
    with redirect_stdout(io.StringIO()) as printed:
        yield
    assert printed.getvalue().splitlines() == [
        'tool call "call-1" may be answered only by alice, group:finance',
        "stop",
    ]
