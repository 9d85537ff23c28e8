"""Agents whose calls wait for assigned approvers: a payments agent whose transfers need approval, the tools
recording exactly the arguments they ran with; and the model that asks for them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.tools.tool import Tool

TRANSFER_ARGS = {"amount": 900, "to": "acme"}


class Transfer(BaseModel):
    amount: int = Field(ge=1)
    to: str


def transfer_tool(ran: list[dict[str, Any]], *, approvers: Sequence[str] | str | None = None) -> Tool:
    """``transfer``: needs approval; appends the arguments it ran with to ``ran``."""

    def execute(data: Transfer, ctx: ToolContext) -> dict[str, Any]:
        ran.append(data.model_dump())
        return {"sent": data.amount, "to": data.to}

    return create_tool(
        id="transfer",
        description="Sends money",
        input_schema=Transfer,
        execute=execute,
        require_approval=True,
        approvers=approvers,
    )


def payments_agent(
    ran: list[dict[str, Any]],
    *,
    calls: Sequence[dict[str, Any]] = (TRANSFER_ARGS,),
    tool_approvers: Sequence[str] | str | None = None,
    agent_approvers: Sequence[str] | str | None = None,
    agent_id: str = "payments",
) -> tuple[Agent, ScriptedModel]:
    """An agent that asks for one ``transfer`` call per entry of ``calls`` in one step (ids ``call-1`` …), then
    says it is done; returned with its model (whose ``requests`` show what the model was given)."""
    model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=[
                    ScriptedToolCall("transfer", dict(args), id=f"call-{n}") for n, args in enumerate(calls, start=1)
                ]
            ),
            ScriptedResponse(text="Done."),
        ]
    )
    agent = Agent(
        id=agent_id,
        model=model,
        tools={"transfer": transfer_tool(ran, approvers=tool_approvers)},
        approvers=agent_approvers,
    )
    return agent, model
