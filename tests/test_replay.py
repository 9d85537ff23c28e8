"""Committed histories of real runs replay against today's AgentRunWorkflow (DESIGN.md rule 8).

A change that breaks in-flight runs (an inserted, removed or reordered activity, a new timer) fails
here. Guard intentional changes with ``workflow.patched`` and record new histories alongside.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from tempo_agents.worker import TempoAgentsPlugin
from tempo_agents.workflows.payloads import RunInput, RunResult

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def load(path: Path) -> WorkflowHistory:
    return WorkflowHistory.from_json(path.stem, path.read_text())


def test_histories_are_committed() -> None:
    assert {path.stem for path in HISTORIES} >= {"suspend-resume", "approve-decline", "plan-tasks"}


@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
async def test_history_replays(path: Path) -> None:
    replayer = Replayer(workflows=[], plugins=[TempoAgentsPlugin()])
    await replayer.replay_workflow(load(path))


@workflow.defn(name="AgentRunWorkflow", sandboxed=False)
class ChangedAgentRunWorkflow:
    """A stand-in for an incompatible change: it sleeps before its first model step."""

    @workflow.run
    async def run(self, run_input: RunInput) -> RunResult:
        await asyncio.sleep(1)
        raise RuntimeError("unreachable in replay")


async def test_an_incompatible_change_fails_replay() -> None:
    replayer = Replayer(workflows=[ChangedAgentRunWorkflow], data_converter=TempoAgentsPlugin().data_converter)  # type: ignore[arg-type]
    with pytest.raises(Exception, match=r"[Nn]ondeterminism|[Nn]on-determinism"):
        await replayer.replay_workflow(load(HISTORIES[0]))
