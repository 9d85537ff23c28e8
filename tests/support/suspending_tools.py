"""A tool that suspends until it is told a user's age (auto-resume tests and the eviction test share it)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from tempo_agents import ToolContext, create_tool


class AgeResume(BaseModel):
    age: int


class UserIn(BaseModel):
    name: str


async def ask_age(data: UserIn, ctx: ToolContext) -> Any:
    if ctx.resume_data is None:
        assert ctx.suspend is not None
        return await ctx.suspend({"message": "Please provide the age of the user"})
    return {"name": data.name, "age": ctx.resume_data["age"]}


def age_tool() -> Any:
    return create_tool(
        id="ask-age", description="Asks for a user's age", input_schema=UserIn, resume_schema=AgeResume, execute=ask_age
    )
