"""``submit_plan``: the agent submits a plan file for review and the run waits (given the plan file's path).

The plan file is read **on the worker** and its title and body go into the suspend payload, so a
dashboard on another machine shows the plan without sharing files with the worker. Only ``.md``
files directly inside the plans directory are read. Approval switches the run's mode.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from tempo_agents.tools.context import ToolContext
from tempo_agents.tools.tool import Tool, create_tool

__all__ = [
    "APPROVED_TEXT",
    "DEFAULT_MAX_PLAN_BYTES",
    "DEFAULT_PLANS_DIR",
    "PROJECT_ROOT_ENV",
    "REJECTED_TEXT",
    "REJECTED_WITH_FEEDBACK_TEXT",
    "PlanFile",
    "PlanTooLargeError",
    "SubmitPlanDecision",
    "SubmitPlanSuspend",
    "create_submit_plan_tool",
    "parse_plan",
    "path_description",
    "project_root",
    "read_plan_file",
    "submit_plan_description",
    "submit_plan_tool",
]

DEFAULT_PLANS_DIR = ".plans"
DEFAULT_MAX_PLAN_BYTES = 256 * 1024
PROJECT_ROOT_ENV = "TEMPO_AGENTS_PROJECT_ROOT"

APPROVED_TEXT = "Plan approved. Proceed with implementation following the approved plan."
REJECTED_WITH_FEEDBACK_TEXT = (
    "Plan was not approved. The user wants revisions.\n\nUser feedback: {feedback}\n\n"
    "Please revise the plan based on the feedback and submit again with submit_plan."
)
REJECTED_TEXT = (
    "Plan was not approved. The user will send revision instructions in their next message. Stop now and wait for "
    "the user to provide feedback before revising the plan."
)


def submit_plan_description(plans_dir: str = DEFAULT_PLANS_DIR) -> str:
    """The tool description, with the example path inside the configured plans directory."""
    example = f"{plans_dir.rstrip('/')}/add-dark-mode.md"
    return (
        f"Submit a plan you wrote to a markdown file for review. Pass the `path` to that file (e.g. `{example}`). "
        "Write/edit the file first — do not paste the plan contents here. Reuse the same file across revisions; "
        "only create a new file for a genuinely new plan. The user can approve, reject, or request changes. On "
        "approval, the system automatically switches to the default mode so you can implement."
    )


def path_description(plans_dir: str = DEFAULT_PLANS_DIR) -> str:
    return f"Path to the plan markdown file on disk (e.g. `{plans_dir.rstrip('/')}/add-dark-mode.md`)."


class SubmitPlanSuspend(BaseModel):
    """What a reviewer is shown: the path, and the plan's title and body when the file could be read."""

    path: str
    title: str | None = None
    plan: str | None = None


class SubmitPlanDecision(BaseModel):
    """How a reviewer answers; ``path``, ``title`` and ``plan`` are echoed back into ``submittedPlan``."""

    action: Literal["approved", "rejected"]
    feedback: str | None = None
    path: str | None = None
    title: str | None = None
    plan: str | None = None


@dataclass(frozen=True)
class PlanFile:
    title: str
    plan: str


class PlanTooLargeError(Exception):
    """A plan file above the size bound."""


def project_root() -> Path:
    """``TEMPO_AGENTS_PROJECT_ROOT``, else the worker's working directory."""
    return Path(os.environ.get(PROJECT_ROOT_ENV) or os.getcwd()).resolve()


def read_plan_file(path: str, *, plans_dir: str, max_bytes: int, root: Path | None = None) -> PlanFile | None:
    """The plan at ``path`` if it is a ``.md`` file directly inside the plans directory, else ``None``.

    Raises :class:`PlanTooLargeError` for a file above ``max_bytes``.
    """
    base = root or project_root()
    folder = (base / plans_dir).resolve()
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = base / candidate
    if candidate.suffix.lower() != ".md" or ".." in Path(path).parts:
        return None
    try:
        resolved = candidate.resolve(strict=True)
        if resolved.parent != folder or not resolved.is_file():
            return None
        size = resolved.stat().st_size
        if size > max_bytes:
            raise PlanTooLargeError(
                f"{path} is {size} bytes; plans larger than {max_bytes} bytes are not submitted. "
                "Shorten the plan and submit again."
            )
        raw = resolved.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return parse_plan(raw)


def parse_plan(raw: str) -> PlanFile:
    """A first non-empty line ``# Title`` becomes the title; the rest (leading blank lines removed) the plan."""
    lines = raw.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or not lines[first].startswith("# "):
        return PlanFile(title="", plan=raw.rstrip())
    rest = lines[first + 1 :]
    while rest and not rest[0].strip():
        rest.pop(0)
    return PlanFile(title=lines[first][2:].strip(), plan="\n".join(rest).rstrip())


def create_submit_plan_tool(*, plans_dir: str = DEFAULT_PLANS_DIR, max_bytes: int = DEFAULT_MAX_PLAN_BYTES) -> Tool:
    """A ``submit_plan`` tool reading plans from ``plans_dir`` (relative to the project root)."""

    class SubmitPlanInput(BaseModel):
        path: str = Field(description=path_description(plans_dir))

    async def execute(data: SubmitPlanInput, ctx: ToolContext) -> dict[str, Any] | None:
        try:
            if ctx.resume_data is not None:
                return _decided(SubmitPlanDecision.model_validate(ctx.resume_data), ctx)
            if ctx.suspend is not None:
                plan = read_plan_file(data.path, plans_dir=plans_dir, max_bytes=max_bytes)
                payload: dict[str, Any] = {"path": data.path}
                if plan is not None:
                    if plan.title:
                        payload["title"] = plan.title
                    payload["plan"] = plan.plan
                await ctx.suspend(payload)
                return None
            return {"content": "[Plan submitted for review]\n\nPath: " + data.path, "isError": False}
        except Exception as error:
            return {"content": "Failed to submit plan: " + (str(error) or "Unknown error"), "isError": True}

    return create_tool(
        id="submit_plan",
        description=submit_plan_description(plans_dir),
        input_schema=SubmitPlanInput,
        suspend_schema=SubmitPlanSuspend,
        resume_schema=SubmitPlanDecision,
        execute=execute,
    )


def _decided(decision: SubmitPlanDecision, ctx: ToolContext) -> dict[str, Any]:
    submitted = {"title": decision.title, "path": decision.path, "plan": decision.plan}
    if decision.action == "approved":
        ctx.switch_mode()
        content = APPROVED_TEXT
    elif decision.feedback:
        content = REJECTED_WITH_FEEDBACK_TEXT.format(feedback=decision.feedback)
    else:
        content = REJECTED_TEXT
    return {"content": content, "isError": False, "submittedPlan": submitted}


submit_plan_tool: Tool = create_submit_plan_tool()
"""``submit_plan`` reading plans from ``.plans/`` under the project root."""
