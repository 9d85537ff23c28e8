"""An App that shows every part of the operations dashboard, with a scripted model (no provider key).

The ``desk`` agent reacts to the last user message:

* "question": asks (``ask_user``) "Which city should I book?" in free text, then streams its answer;
* "choose": asks to pick one of three rooms; "extras": asks to pick any of three extras;
* "delete": calls ``delete_file``, which needs approval (the reply quotes the result or the decline's reason);
* "ship": calls ``ship_order``, which waits (up to a day) for a shipping form: a nested address, a list of
  items, a boolean and a choice;
* "plan": records three tasks and works through them (``work`` takes a moment per task; start it with a
  memory thread, which keeps the task list);
* "stamp N": calls ``stamp``, which writes N ``data-stamp`` chunks carrying the time each was written;
* "research T": hands the topic to the ``researcher`` sub-agent (the tool ``agent-researcher``), which streams a
  sentence, calls ``lookup`` and reports; "research T and ask": the researcher first asks (``ask_user``) which
  source to trust, so the question waits on the desk's ``agent-researcher`` call; "research T and clean up": the
  researcher deletes its draft (``delete_file``, which needs approval: the approval waits on the desk's call).

Serve it with ``tempo-agents dev --app examples/operations_dashboard.py:app`` and open http://127.0.0.1:4111/.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.models.model import ModelRequest
from tempo_agents.models.usage import Usage
from tempo_agents.signals import TaskSignalProvider
from tempo_agents.tools import ask_user_tool


class PathIn(BaseModel):
    path: str


class OrderIn(BaseModel):
    order: str


class Address(BaseModel):
    street: str = Field(min_length=1, description="Street and number")
    postcode: str = Field(pattern=r"^[0-9]{4,5}$", description="4 or 5 digits")
    city: str


class Line(BaseModel):
    sku: str
    quantity: int = Field(ge=1, le=100)


class Shipping(BaseModel):
    address: Address
    lines: list[Line] = Field(min_length=1)
    express: bool = False
    carrier: Literal["post", "courier", "pickup"]
    note: str | None = None


class WorkIn(BaseModel):
    task: str


class TopicIn(BaseModel):
    topic: str


class StampIn(BaseModel):
    count: int = Field(ge=1, le=10_000)
    every_ms: int = Field(default=20, ge=0, le=1000)


def delete_file(data: PathIn) -> dict[str, Any]:
    return {"deleted": data.path}


async def ship_order(data: OrderIn, ctx: ToolContext) -> dict[str, Any] | None:
    if ctx.resume_data is None:
        assert ctx.suspend is not None
        await ctx.suspend({"order": data.order, "message": "Where and how should this order ship?"},
                          expires_in=timedelta(days=1))  # fmt: skip
        return None
    shipping = Shipping.model_validate(ctx.resume_data)
    return {"shipped": data.order, "to": shipping.address.city, "carrier": shipping.carrier}


async def work(data: WorkIn, ctx: ToolContext) -> str:
    await ctx.writer.write({"progress": f"working on {data.task}"})
    await asyncio.sleep(0.8)
    return f"{data.task} done"


async def stamp(data: StampIn, ctx: ToolContext) -> int:
    """Writes ``count`` chunks stamped with the wall-clock time (ms) of their writing."""
    for number in range(data.count):
        await ctx.writer.custom({"type": "data-stamp", "data": {"n": number, "writtenAt": time.time() * 1000}})
        if data.every_ms:
            await asyncio.sleep(data.every_ms / 1000)
    return data.count


def lookup(data: TopicIn) -> dict[str, Any]:
    return {"topic": data.topic, "sources": ["city archive", "annual report"]}


delete_tool = create_tool(
    id="delete_file", description="Deletes a file (needs approval)", input_schema=PathIn, require_approval=True,
    execute=delete_file,
)  # fmt: skip
ship_tool = create_tool(
    id="ship_order", description="Ships an order once a person fills in the shipping form", input_schema=OrderIn,
    resume_schema=Shipping, execute=ship_order,
)  # fmt: skip
work_tool = create_tool(id="work", description="Does one task", input_schema=WorkIn, execute=work)
stamp_tool = create_tool(id="stamp", description="Writes stamped chunks", input_schema=StampIn, execute=stamp)
lookup_tool = create_tool(id="lookup", description="Finds sources on a topic", input_schema=TopicIn, execute=lookup)

_USAGE = Usage(input_tokens=120, output_tokens=40, total_tokens=160)
TASKS = [
    ("collect", "Collect the invoices", "Collecting the invoices"),
    ("check", "Check the totals", "Checking the totals"),
    ("report", "Write the report", "Writing the report"),
]


def _task_list(done: int) -> list[dict[str, str]]:
    return [
        {"id": ident, "content": content, "activeForm": active,
         "status": "completed" if n < done else "in_progress" if n == done else "pending"}
        for n, (ident, content, active) in enumerate(TASKS)
    ]  # fmt: skip


def _plan_step(step: int) -> ScriptedResponse:
    """Even steps record the list (task n in progress; at the end, all completed), odd steps work task n."""
    task = step // 2
    if step % 2 == 0 and task <= len(TASKS):
        return ScriptedResponse(tool_calls=[ScriptedToolCall("task_write", {"tasks": _task_list(task)})], usage=_USAGE)
    if step % 2 == 1 and task < len(TASKS):
        return ScriptedResponse(tool_calls=[ScriptedToolCall("work", {"task": TASKS[task][1]})], usage=_USAGE)
    return ScriptedResponse(text="All three tasks are done: the report is ready.", usage=_USAGE)


def _answer_text(results: list[Any]) -> str:
    result = results[0] if results else None
    if isinstance(result, dict) and "content" in result:  # ask_user: "User answered: ..."
        answer = str(result["content"]).removeprefix("User answered: ")
        return f"Thank you. I will go ahead with {answer}, and I will confirm the booking by email shortly."
    return f"Done: {json.dumps(results)}"


def react(request: ModelRequest) -> ScriptedResponse:
    """The model's next step, chosen from the conversation so far."""
    # The task tools add <task-list-update ...> observations as user messages: the request is the last other one.
    said = next((m.text for m in reversed(request.messages) if m.role == "user" and not m.text.startswith("<")), "")
    said = said.lower()
    if "plan" in said:
        return _plan_step(request.step)
    last = request.messages[-1] if request.messages else None
    if last is not None and last.role == "tool":
        parts = last.tool_results
        if parts and parts[0].tool_name == "agent-researcher":  # the model reads the sub-agent's text
            sentences = re.split(r"(?<=[.!?])\s*(?=[A-Z])", str(parts[0].result).strip())  # its last sentence
            text = f"The researcher reports: {sentences[-1]} That settles it."
            return ScriptedResponse(text=text, usage=_USAGE)
        return ScriptedResponse(text=_answer_text([part.result for part in parts]), usage=_USAGE)
    if "question" in said:
        ask = {"question": "Which city should I book?"}
        return ScriptedResponse(
            text="One question first.", tool_calls=[ScriptedToolCall("ask_user", ask)], usage=_USAGE
        )
    if "choose" in said:
        rooms: dict[str, Any] = {
            "question": "Which room?",
            "options": [{"label": n} for n in ("Single", "Double", "Suite")],
        }
        return ScriptedResponse(tool_calls=[ScriptedToolCall("ask_user", rooms)], usage=_USAGE)
    if "extras" in said:
        extras: dict[str, Any] = {"question": "Which extras?", "selectionMode": "multi_select",
               "options": [{"label": "Breakfast"}, {"label": "Parking"}, {"label": "Late checkout"}]}  # fmt: skip
        return ScriptedResponse(tool_calls=[ScriptedToolCall("ask_user", extras)], usage=_USAGE)
    if "delete" in said:
        path = re.search(r"delete (\S+)", said)
        args = {"path": path.group(1) if path else "reports/old.csv"}
        return ScriptedResponse(text="Deleting.", tool_calls=[ScriptedToolCall("delete_file", args)], usage=_USAGE)
    if "ship" in said:
        return ScriptedResponse(tool_calls=[ScriptedToolCall("ship_order", {"order": "A-1042"})], usage=_USAGE)
    topic = re.search(r"research (.+)", said)
    if topic:
        call = ScriptedToolCall("agent-researcher", {"prompt": f"research {topic.group(1)}"})
        return ScriptedResponse(text="Asking the researcher.", tool_calls=[call], usage=_USAGE)
    stamps = re.search(r"stamp (\d+)", said)
    if stamps:
        call = ScriptedToolCall("stamp", {"count": int(stamps.group(1))})
        return ScriptedResponse(tool_calls=[call], usage=_USAGE)
    return ScriptedResponse(text="Hello there. Ask me a question, or to plan, ship, choose or delete.", usage=_USAGE)


def research(request: ModelRequest) -> ScriptedResponse:
    """The researcher sub-agent: asks which source to trust when told to ask, looks the topic up, reports."""
    said = next((m.text for m in reversed(request.messages) if m.role == "user"), "").lower()
    topic = said.removeprefix("research ").removesuffix(" and ask").strip() or "the topic"
    last = request.messages[-1] if request.messages else None
    if last is not None and last.role == "tool":
        result = last.tool_results[0].result if last.tool_results else None
        if isinstance(result, dict) and "content" in result:  # ask_user answered: now look it up
            trusted = str(result["content"]).removeprefix("User answered: ")
            text = f"I will trust the {trusted.lower()}."
            call = ScriptedToolCall("lookup", {"topic": topic})
            return ScriptedResponse(text=text, tool_calls=[call], usage=_USAGE)
        if isinstance(result, dict) and "deleted" in result:
            return ScriptedResponse(text=f"I deleted {result['deleted']}.", usage=_USAGE)
        if isinstance(result, str):  # declined
            return ScriptedResponse(text=f"I kept the draft: {result}.", usage=_USAGE)
        sources = " and the ".join(result.get("sources", [])) if isinstance(result, dict) else "nothing"
        return ScriptedResponse(text=f"On {topic}, I found the {sources}.", usage=_USAGE)
    if said.endswith(" and clean up"):
        call = ScriptedToolCall("delete_file", {"path": f"drafts/{topic.removesuffix(' and clean up')}.md"})
        return ScriptedResponse(tool_calls=[call], usage=_USAGE)
    if said.endswith(" and ask"):
        ask = {"question": "Which source should I trust?", "options": [{"label": "Archive"}, {"label": "Press"}]}
        return ScriptedResponse(tool_calls=[ScriptedToolCall("ask_user", ask)], usage=_USAGE)
    call = ScriptedToolCall("lookup", {"topic": topic})
    return ScriptedResponse(text=f"Looking up {topic} in the records.", tool_calls=[call], usage=_USAGE)


def build_researcher() -> Agent:
    """The ``researcher`` sub-agent of ``desk`` (a new one per App)."""
    return Agent(
        id="researcher",
        description="Finds sources on a topic",
        instructions="You find sources.",
        model=ScriptedModel(research, model_id="scripted-researcher", delta_delay=0.03),
        tools={"ask_user": ask_user_tool, "lookup": lookup_tool, "delete_file": delete_tool},
    )


def build_desk(**overrides: Any) -> Agent:
    """The ``desk`` agent (a new one per App)."""
    options: dict[str, Any] = {
        "id": "desk",
        "name": "Front desk",
        "instructions": "You help the office: bookings, shipping, files and reports.",
        "model": ScriptedModel(react, model_id="scripted-desk", delta_delay=0.03),
        "tools": {
            "ask_user": ask_user_tool,
            "delete_file": delete_tool,
            "ship_order": ship_tool,
            "work": work_tool,
            "stamp": stamp_tool,
        },
        "agents": {"researcher": build_researcher()},  # the tool agent-researcher, each call a child run
        "signals": [TaskSignalProvider()],  # the task tools (task_write …); they keep the list per memory thread
        "default_options": {"max_steps": 20},
    }
    options.update(overrides)
    return Agent(**options)


app = App(agents=[build_desk()], store="sqlite:///.tempo-agents/dashboard-example.db", task_queue="dashboard-example")
