"""Reviewing the plan a run submitted: showing it, and learning the decision from the flags or the terminal."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tempo_agents.cli._console import out
from tempo_agents.cli._stop_signals import StopSignals
from tempo_agents.cli.demo.prompter import Prompter
from tempo_agents.journal.chunks import Chunk, ToolCallSuspendedChunk
from tempo_agents.workflows.payloads import PendingCall

__all__ = ["PlanDecision", "decide", "show_plan", "suspended_chunk"]


@dataclass(frozen=True)
class PlanDecision:
    """What the reviewer decided, and how the demo learned it."""

    approved: bool
    feedback: str | None
    how: str


async def decide(args: argparse.Namespace, prompter: Prompter, signals: StopSignals) -> PlanDecision | None:
    """``--approve``/``--reject``, else the terminal's answer; ``None`` when a stop signal interrupted."""
    question = "      Approve this plan? [y/N] "
    if args.approve:
        out(f"{question}y   (--approve)")
        return PlanDecision(True, None, "approved (--approve)")
    if args.reject:
        out(f"{question}n   (--reject)")
        return PlanDecision(False, args.feedback, "rejected (--reject)")
    answer = await prompter.ask(question, signals.stop)
    if signals.stop.is_set():
        return None
    if answer is None:
        if prompter.interactive:
            return PlanDecision(False, None, "rejected (no answer before the end of input)")
        out("      note: stdin is not a terminal and holds no answer, so the demo approves (--reject rejects)")
        return PlanDecision(True, None, "approved (no terminal to ask)")
    if answer.lower() in ("y", "yes"):
        return PlanDecision(True, None, "approved")
    feedback = await prompter.ask("      What should change? (Enter to skip) ", signals.stop)
    if signals.stop.is_set():
        return None
    return PlanDecision(False, feedback or None, "rejected")


def show_plan(call: PendingCall | None, chunk_payload: Any) -> None:
    """The plan the run waits on, as the suspend payload carries it (the worker read the file)."""
    payload = call.suspend_payload if call is not None else chunk_payload
    plan = payload if isinstance(payload, dict) else {}
    title = str(plan.get("title") or "(untitled)")
    path = str(plan.get("path") or "")
    body = str(plan.get("plan") or "(the worker could not read the plan file)")
    out(f"      ┌─ {title}" + (f"   ({path})" if path else ""))
    for line in body.splitlines():
        out(f"      │ {line}".rstrip())
    out("      └─")


def suspended_chunk(chunks: Sequence[Chunk]) -> ToolCallSuspendedChunk | None:
    """The last suspension among a run's chunks."""
    return next((chunk for chunk in reversed(chunks) if isinstance(chunk, ToolCallSuspendedChunk)), None)
