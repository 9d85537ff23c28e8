"""Printing the demo's run: the plain run printer, plus modes, task lists and plan reviews."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tempo_agents.cli.printing import ChunkPrinter, json_preview
from tempo_agents.journal.chunks import Chunk, DataChunk, ToolCallChunk, ToolCallSuspendedChunk, ToolResultChunk

__all__ = ["TASK_ICONS", "TASK_TOOLS", "DemoPrinter", "render_tasks"]

TASK_ICONS = {"completed": "✓", "in_progress": "▸", "pending": "○"}
"""How the demo marks a task's status."""


TASK_TOOLS = frozenset({"task_write", "task_update", "task_complete", "task_check"})
"""Tools whose successful results the demo leaves out: the task list block shows what they changed."""


@dataclass
class DemoPrinter(ChunkPrinter):
    """The demo's printer: mode changes, task lists and suspensions as readable blocks.

    Task lists render as a block under a ``tasks`` line each time they change (an in-progress task
    shows its ``activeForm``); built-in tools' ``{content, ...}`` results show their text; long string
    arguments (a plan file's content) are shortened.
    """

    mode: str | None = None
    mode_changes: list[tuple[str, str]] = field(default_factory=list)
    tasks: list[dict[str, Any]] = field(default_factory=list)

    def write(self, chunk: Chunk) -> None:
        """Print one chunk, as a block for mode changes, task lists, suspensions and built-in results."""
        if isinstance(chunk, DataChunk) and chunk.type == "data-mode":
            data = _data_of(chunk)
            previous, mode = str(data.get("previousMode") or "none"), str(data.get("mode") or "none")
            self.mode_changes.append((previous, mode))
            self.mode = mode
            self._line(chunk, "mode", f"{previous} → {mode}")
        elif isinstance(chunk, DataChunk) and chunk.type == "data-task-updated":
            tasks = _data_of(chunk).get("tasks")
            self.tasks = [task for task in tasks if isinstance(task, dict)] if isinstance(tasks, list) else []
            done = sum(1 for task in self.tasks if task.get("status") == "completed")
            self._line(chunk, "tasks", f"{done}/{len(self.tasks)} completed")
            for line in render_tasks(self.tasks):
                self.out.write(f"{'':>{self._indent}}{line}\n")
            self.out.flush()
        elif isinstance(chunk, ToolCallSuspendedChunk):
            waiting = chunk.payload
            shown = waiting.suspend_payload if isinstance(waiting.suspend_payload, dict) else {}
            about = f" on {shown['path']}" if isinstance(shown.get("path"), str) else ""
            self._line(chunk, "suspended", f"{waiting.tool_name} waits for a decision{about}  [{waiting.tool_call_id}]")
        elif isinstance(chunk, ToolCallChunk):
            call = chunk.payload
            tasks = call.args.get("tasks") if isinstance(call.args, dict) else None
            args = f'{{"tasks": [{len(tasks)} tasks]}}' if isinstance(tasks, list) else json_preview(_brief(call.args))
            self._line(chunk, "tool-call", f"{call.tool_name} {args}  [{call.tool_call_id}]")
        elif isinstance(chunk, ToolResultChunk) and _content_of(chunk.payload.result) is not None:
            result = chunk.payload
            failed = result.is_error or (isinstance(result.result, dict) and bool(result.result.get("isError")))
            if result.tool_name in TASK_TOOLS and not failed:
                return  # the task list block above shows what changed
            marker = " (error)" if failed else ""
            lines = [line.strip() for line in (_content_of(result.result) or "").splitlines() if line.strip()]
            self._line(chunk, "tool-result", f"{result.tool_name}{marker}: {lines[0] if lines else ''}")
            for line in lines[1:]:
                self.out.write(f"{'':>{self._indent}}{line}\n")
            self.out.flush()
        else:
            super().write(chunk)

    @property
    def _indent(self) -> int:
        return 19 if self.offsets else 15


def render_tasks(tasks: Sequence[dict[str, Any]]) -> list[str]:
    """One line per task: an icon for its status, and its ``activeForm`` while in progress."""
    lines = []
    for task in tasks:
        status = str(task.get("status"))
        text = task.get("activeForm") if status == "in_progress" else task.get("content")
        lines.append(f"{TASK_ICONS.get(status, '?')} {text or task.get('content') or task.get('id')}")
    return lines


def _data_of(chunk: DataChunk) -> dict[str, Any]:
    data = (chunk.model_extra or {}).get("data")
    return data if isinstance(data, dict) else {}


def _content_of(result: Any) -> str | None:
    """The text of a built-in tool's ``{"content": ..., "isError": ...}`` result, else ``None``."""
    if isinstance(result, dict) and isinstance(result.get("content"), str) and "isError" in result:
        return str(result["content"])
    return None


def _brief(value: Any, limit: int = 48) -> Any:
    """``value`` with strings longer than ``limit`` shortened (a file's content in a tool call, say)."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]}… ({len(value)} characters)"
    if isinstance(value, dict):
        return {key: _brief(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [_brief(item, limit) for item in value]
    return value
