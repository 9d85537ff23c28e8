"""The App of ``bench/capacity.py``, loaded by its worker and API subprocesses (``--app bench/_capacity_app.py:app``):
the agent ``refunds`` is a representative run. Three model steps (scripted, with usage): the first looks the order up
(``lookup``, an activity), the second asks to refund it (``refund``, which needs a person's approval: the run waits),
the third answers."""

from __future__ import annotations

from typing import Any

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.models.model import ModelRequest
from tempo_agents.models.usage import Usage

__all__ = ["AGENT_ID", "FINAL_TEXT", "TASK_QUEUE", "app", "build_app"]

AGENT_ID = "refunds"
TASK_QUEUE = "bench-capacity"
FINAL_TEXT = "The refund of order 1042 is on its way: 25.00 EUR back to the card it was paid with."
_USAGE = Usage(input_tokens=400, output_tokens=40, total_tokens=440)


async def lookup(data: dict[str, Any]) -> dict[str, Any]:
    return {"order": data["order"], "total": "25.00", "currency": "EUR", "status": "delivered damaged"}


async def refund(data: dict[str, Any]) -> dict[str, Any]:
    return {"order": data["order"], "refunded": data["amount"]}


def _script(request: ModelRequest) -> ScriptedResponse:
    if request.step == 0:
        call = ScriptedToolCall("lookup", {"order": "1042"}, id="lookup-0")
        return ScriptedResponse(text="Let me look the order up.", tool_calls=[call], usage=_USAGE)
    if request.step == 1:
        call = ScriptedToolCall("refund", {"order": "1042", "amount": "25.00"}, id="refund-1")
        return ScriptedResponse(text="It arrived damaged; I will refund it.", tool_calls=[call], usage=_USAGE)
    return ScriptedResponse(text=FINAL_TEXT, usage=_USAGE)


def build_app(store: str = "sqlite:///.tempo-agents/capacity.db") -> App:
    tools = {
        "lookup": create_tool(id="lookup", description="Looks an order up", execute=lookup),
        "refund": create_tool(id="refund", description="Refunds an order", execute=refund, require_approval=True),
    }
    agent = Agent(id=AGENT_ID, instructions="You handle refunds.", model=ScriptedModel(_script), tools=tools)
    return App(agents=[agent], store=store, task_queue=TASK_QUEUE)


app = build_app()
