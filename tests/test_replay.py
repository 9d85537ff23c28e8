"""Committed histories of real runs replay against today's AgentRunWorkflow.

(ARCHITECTURE.md, "Durable-execution rules" 6.)

A change that breaks in-flight runs (an inserted, removed or reordered activity, a new timer) fails
here. Guard intentional changes with ``workflow.patched`` and record new histories alongside.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from tempo_agents.worker import TempoAgentsPlugin
from tempo_agents.workflows.agent_run import SEGMENTS_CLOSED_BY_ACTIVITIES
from tempo_agents.workflows.payloads import RunInput, RunResult

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def load(path: Path) -> WorkflowHistory:
    return WorkflowHistory.from_json(path.stem, path.read_text())


def test_histories_are_committed() -> None:
    """Both paths of the ``segments-closed-by-activities`` patch: runs started before it, and after."""
    names = {"suspend-resume", "approve-decline", "plan-tasks"}
    assert {path.stem for path in HISTORIES} >= names | {f"v2-{name}" for name in names}


@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
def test_history_takes_its_path(path: Path) -> None:
    """The v2 histories carry the patch marker and no finish activity (activities end segments); the older
    ones have neither."""
    text = path.read_text()
    v2 = path.stem.startswith("v2-")
    patches = [
        json.loads(payload.data)
        for event in load(path).events
        if event.HasField("marker_recorded_event_attributes")
        for payload in event.marker_recorded_event_attributes.details["patch-data"].payloads
    ]
    assert (patches == [{"id": SEGMENTS_CLOSED_BY_ACTIVITIES, "deprecated": False}]) == v2
    assert ("tempo_agents.finish_run" in text) != v2


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


def test_parent_with_child_histories_are_committed() -> None:
    """Runs whose calls ran as child workflows: a sub-agent that suspended and was resumed through its
    parent (both histories), and a workflow tool that waited for a person."""
    for name in ("v2-sub-agent-parent", "v2-workflow-tool-parent"):
        events = load(Path(__file__).parent / "histories" / f"{name}.json").events
        assert any(e.HasField("start_child_workflow_execution_initiated_event_attributes") for e in events)
        assert any(e.HasField("child_workflow_execution_completed_event_attributes") for e in events)
    child = load(Path(__file__).parent / "histories" / "v2-sub-agent-child.json").events
    assert child[0].workflow_execution_started_event_attributes.parent_workflow_execution.workflow_id == (
        "sub-agent-parent"
    )
