"""``ask_user``: the agent asks the user a question and the run waits for the answer."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel
from pydantic.alias_generators import to_camel

from tempo_agents.tools.context import ToolContext
from tempo_agents.tools.tool import Tool, create_tool

__all__ = [
    "ASK_USER_DESCRIPTION",
    "AskUserAnswer",
    "AskUserInput",
    "AskUserOption",
    "AskUserSuspend",
    "SelectionMode",
    "ask_user_tool",
]

ASK_USER_DESCRIPTION = (
    "Ask the user a question and wait for their response. Use this when you need clarification, want to validate "
    "assumptions, or need the user to make a decision between options. Provide options for structured choices "
    "(2-4 options), or omit them for open-ended questions. Use selectionMode to choose whether the user can pick "
    "one option or multiple options."
)

SelectionMode = Literal["single_select", "multi_select"]


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class AskUserOption(_Model):
    """One choice offered to the user."""

    label: str = Field(description="Short display text for this option (1-5 words)")
    description: str | None = Field(default=None, description="Explanation of what this option means")


class AskUserInput(_Model):
    """What the model passes to ``ask_user``."""

    question: str = Field(min_length=1, description="The question to ask the user. Should be clear and specific.")
    options: list[AskUserOption] | None = Field(
        default=None,
        description="Optional choices. If provided, shows a selection list. If omitted, shows a free-text input.",
    )
    selection_mode: SelectionMode | None = Field(
        default=None,
        description="Controls how many provided options the user can select. Defaults to single_select when options "
        "are provided. Requires options.",
    )


class AskUserSuspend(_Model):
    """The suspend payload a UI shows: the question, and the options if any."""

    question: str
    options: list[AskUserOption] | None = None
    selection_mode: SelectionMode | None = None


class AskUserAnswer(RootModel[str | list[str]]):
    """Free text or a single choice resume with a string; several choices with a list of labels."""


def _ok(content: str) -> dict[str, Any]:
    return {"content": content, "isError": False}


def _failed(message: str) -> dict[str, Any]:
    return {"content": f"Failed to ask user: {message}", "isError": True}


async def _ask_user(data: AskUserInput, ctx: ToolContext) -> dict[str, Any] | None:
    try:
        options = data.options or []
        if data.selection_mode is not None and not options:
            return _failed("selectionMode requires options.")
        mode = (data.selection_mode or "single_select") if options else None
        if ctx.resume_data is not None:
            answer = ctx.resume_data
            return _ok("User answered: " + (", ".join(answer) if isinstance(answer, list) else str(answer)))
        if ctx.suspend is not None:
            payload: dict[str, Any] = {"question": data.question}
            if data.options is not None:
                payload["options"] = [option.model_dump(by_alias=True, exclude_none=True) for option in data.options]
            if mode is not None:
                payload["selectionMode"] = mode
            await ctx.suspend(payload)
            return None
        content = "[Question for user]: " + data.question
        if options:
            content += "\nOptions: " + ", ".join(option.label for option in options)
        if mode is not None:
            content += "\nSelection mode: " + mode
        return _ok(content)
    except Exception as error:
        return _failed(str(error) or "Unknown error")


ask_user_tool: Tool = create_tool(
    id="ask_user",
    description=ASK_USER_DESCRIPTION,
    input_schema=AskUserInput,
    suspend_schema=AskUserSuspend,
    resume_schema=AskUserAnswer,
    execute=_ask_user,
)
"""The ``ask_user`` tool. Resume it with a string (free text, one choice) or a list of option labels."""
