"""The agents of the upgrade test, defined once for both releases: a process of the previous release starts their
runs and leaves each waiting for a person, this checkout answers them. Only names of the top-level package, which
both releases export, are imported at run time (the subpackages were re-laid out between them).

Each agent's script says what its run ends with; the test holds the resumed runs to these texts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from tempo_agents import (
    Agent,
    ScriptedModel,
    ScriptedResponse,
    ScriptedToolCall,
    ToolContext,
    ask_user_tool,
    create_tool,
)

if TYPE_CHECKING:  # for the type checker only: the model's modules are no public names of either release
    from tempo_agents.models.messages import Message
    from tempo_agents.models.model import ModelRequest

APPROVAL_AGENT = "upgrade-approval"
"""Transfers money once a person approves the call."""
QUESTION_AGENT = "upgrade-question"
"""Asks the user a question (``ask_user``)."""
SUSPENDING_AGENT = "upgrade-suspending"
"""Calls a tool that suspends itself (``ctx.suspend``) until it is told an age."""
THREAD_AGENT = "upgrade-thread"
"""Pays after an approval, on a memory thread; answers any other message at once."""

THREAD = "upgrade-thread"
RESOURCE = "upgrade-user"
MEMORY = {"thread": THREAD, "resource": RESOURCE}

APPROVAL_PROMPT = "Send Ann 5"
QUESTION_PROMPT = "Paint the fence"
SUSPENDING_PROMPT = "How old is Ann?"
THREAD_PROMPT = "Pay Bob"

QUESTION = "Which colour?"
QUESTION_ANSWER = "Blue"
AGE = 42
NOTE_PREFIX = "(Note:"
"""How the note that a waiting run's answer came later begins (a user message of the resumed run's transcript)."""

APPROVED_TEXT = "done: sent 5 to Ann"
ANSWERED_TEXT = "painting it: User answered: Blue"
RESUMED_TEXT = "Ann is 42"


def thread_reply(text: str) -> str:
    """What the thread's agent answers a message other than a payment."""
    return f"noted: {text}"


def paid_text(said_meanwhile: list[str]) -> str:
    """What the thread's paying run ends with, once approved: the messages said on the thread while it waited."""
    return "paid Bob; said meanwhile: " + " | ".join(said_meanwhile)


def _last_result(request: ModelRequest) -> Any:
    return [part.result for message in request.messages for part in message.tool_results][-1]


def _user_texts(messages: list[Message]) -> list[str]:
    return [m.text for m in messages if m.role == "user"]


def _approval_script(request: ModelRequest) -> ScriptedResponse:
    if request.step == 0:
        return ScriptedResponse(tool_calls=[ScriptedToolCall("transfer", {"to": "Ann", "amount": 5})])
    return ScriptedResponse(text=f"done: {_last_result(request)}")


def _question_script(request: ModelRequest) -> ScriptedResponse:
    if request.step == 0:
        options = [{"label": "Red"}, {"label": QUESTION_ANSWER}]
        return ScriptedResponse(tool_calls=[ScriptedToolCall("ask_user", {"question": QUESTION, "options": options})])
    return ScriptedResponse(text=f"painting it: {_last_result(request)['content']}")


def _suspending_script(request: ModelRequest) -> ScriptedResponse:
    if request.step == 0:
        return ScriptedResponse(tool_calls=[ScriptedToolCall("ask-age", {"name": "Ann"})])
    told = _last_result(request)
    return ScriptedResponse(text=f"{told['name']} is {told['age']}")


def _thread_script(request: ModelRequest) -> ScriptedResponse:
    last = request.messages[-1]
    if request.step == 0 and last.role == "user" and last.text == THREAD_PROMPT:
        return ScriptedResponse(tool_calls=[ScriptedToolCall("pay", {"to": "Bob"})])
    if request.step == 0:
        return ScriptedResponse(text=thread_reply(last.text))
    users = _user_texts(request.messages)
    return ScriptedResponse(text=paid_text([t for t in users if t != THREAD_PROMPT and not t.startswith(NOTE_PREFIX)]))


class AgeResume(BaseModel):
    age: int


class Person(BaseModel):
    name: str


async def _ask_age(data: Person, ctx: ToolContext) -> Any:
    if ctx.resume_data is None:
        assert ctx.suspend is not None
        return await ctx.suspend({"message": f"How old is {data.name}?"})
    return {"name": data.name, "age": ctx.resume_data["age"]}


def upgrade_agents() -> list[Agent]:
    """The four agents, each with its script and tools; both releases' Apps are built from these."""
    transfer = create_tool(
        id="transfer",
        description="Sends money",
        execute=lambda data: f"sent {data['amount']} to {data['to']}",
        require_approval=True,
    )
    ask_age = create_tool(
        id="ask-age", description="Asks a person's age", input_schema=Person, resume_schema=AgeResume, execute=_ask_age
    )
    pay = create_tool(
        id="pay", description="Pays someone", execute=lambda data: f"paid {data['to']}", require_approval=True
    )
    return [
        Agent(id=APPROVAL_AGENT, model=ScriptedModel(_approval_script), tools={"transfer": transfer}),
        Agent(id=QUESTION_AGENT, model=ScriptedModel(_question_script), tools={"ask_user": ask_user_tool}),
        Agent(id=SUSPENDING_AGENT, model=ScriptedModel(_suspending_script), tools={"ask-age": ask_age}),
        Agent(id=THREAD_AGENT, model=ScriptedModel(_thread_script), tools={"pay": pay}),
    ]


__all__ = [
    "AGE",
    "ANSWERED_TEXT",
    "APPROVAL_AGENT",
    "APPROVAL_PROMPT",
    "APPROVED_TEXT",
    "MEMORY",
    "NOTE_PREFIX",
    "QUESTION",
    "QUESTION_AGENT",
    "QUESTION_ANSWER",
    "QUESTION_PROMPT",
    "RESOURCE",
    "RESUMED_TEXT",
    "SUSPENDING_AGENT",
    "SUSPENDING_PROMPT",
    "THREAD",
    "THREAD_AGENT",
    "THREAD_PROMPT",
    "AgeResume",
    "Person",
    "paid_text",
    "thread_reply",
    "upgrade_agents",
]
