"""The App the telemetry tests run in a worker process (``--app tests.support.telemetry_app:app``) and start runs of."""

from __future__ import annotations

import logging
from typing import Any

from temporalio import activity

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.models.usage import Usage

billing_log = logging.getLogger("billing")


def lookup(data: dict[str, Any], ctx: ToolContext) -> Any:
    activity.logger.info("looking up the balance")
    return {"balance": 1200}


async def charge(data: dict[str, Any], ctx: ToolContext) -> Any:
    billing_log.info("charging %s", data["amount"])
    if ctx.resume_data is None:
        assert ctx.suspend is not None
        return await ctx.suspend({"phase": "confirm", "amount": data["amount"]})
    return {"charged": data["amount"]}


def broken(data: dict[str, Any], ctx: ToolContext) -> Any:
    raise RuntimeError("card reader offline")


def refund(data: dict[str, Any], ctx: ToolContext) -> Any:
    return {"refunded": True}


def usage(tokens_in: int, tokens_out: int) -> Usage:
    return Usage(input_tokens=tokens_in, output_tokens=tokens_out, total_tokens=tokens_in + tokens_out)


def calls_then_answers(tool: str, args: dict[str, Any], model_id: str) -> ScriptedModel:
    """Step 0 calls ``tool``; step 1 answers."""
    return ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall(tool, args)], usage=usage(10, 3)),
            ScriptedResponse(text="Done.", usage=usage(12, 4)),
        ],
        model_id=model_id,
    )


def tool(tool_id: str, execute: Any, **options: Any) -> Any:
    return create_tool(id=tool_id, description=f"The {tool_id} tool", execute=execute, **options)


def agents() -> list[Agent]:
    """A fresh set of the App's agents (an agent belongs to one App)."""
    return [
        Agent(
            id="shop", model=calls_then_answers("lookup", {}, "shop-model"), tools={"lookup": tool("lookup", lookup)}
        ),
        Agent(
            id="pay",
            model=calls_then_answers("charge", {"amount": 990}, "pay-model"),
            tools={"charge": tool("charge", charge)},
        ),
        Agent(
            id="faulty", model=calls_then_answers("broken", {}, "pay-model"), tools={"broken": tool("broken", broken)}
        ),
        Agent(
            id="refunds",
            model=calls_then_answers("refund", {}, "pay-model"),
            tools={"refund": tool("refund", refund, require_approval=True)},
        ),
    ]


app = App(agents=agents())
