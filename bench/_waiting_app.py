"""The App of ``bench/waiting_10k.py``, loaded by its worker subprocess (``--app bench/_waiting_app.py:app``) and by
the bench itself as the client: the agent ``waiter`` asks a person (its ``ask`` tool suspends) at step 0, is resumed
with an answer, and says :data:`FINAL_TEXT`. The ``ask`` call's result names the run and carries the answer, so the
bench can tell every run got its own."""

from __future__ import annotations

from typing import Any

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.models.model import ModelRequest

AGENT_ID = "waiter"
ASK_CALL = "ask_0"
FINAL_TEXT = "Filed."


async def ask(data: dict[str, Any], ctx: ToolContext) -> Any:
    if ctx.resume_data is None:
        assert ctx.suspend is not None
        return await ctx.suspend({"question": f"May I file report {data['run']}?"})
    return {"run": data["run"], "answer": ctx.resume_data}


def _script(request: ModelRequest) -> ScriptedResponse:
    if request.step == 0:
        return ScriptedResponse(tool_calls=[ScriptedToolCall("ask", {"run": request.run_id}, id=ASK_CALL)])
    return ScriptedResponse(text=FINAL_TEXT)


def build_app(store: str = "sqlite:///.tempo-agents/waiting.db", task_queue: str = "waiting") -> App:
    tool = create_tool(id="ask", description="Asks a person before filing", execute=ask)
    agent = Agent(id=AGENT_ID, model=ScriptedModel(_script), tools={"ask": tool})
    return App(agents=[agent], store=store, task_queue=task_queue)


app = build_app()
