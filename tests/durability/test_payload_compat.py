"""Activities scheduled by workers from before the outbox (the committed pre-v2 histories) are read by
today's activity inputs: an in-flight run upgraded mid-way loses nothing its old workflow handed over."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowHistory

from tempo_agents.workflows.activity_names import FINISH_RUN, MODEL_STEP, TOOL_CALL
from tempo_agents.workflows.payloads import FinishInput, ModelStepInput, ToolCallInput

HISTORIES = Path(__file__).parents[1] / "histories"
OLD = ["suspend-resume", "approve-decline", "plan-tasks"]
MODELS: dict[str, Any] = {MODEL_STEP: ModelStepInput, TOOL_CALL: ToolCallInput, FINISH_RUN: FinishInput}


def scheduled_inputs(name: str) -> list[tuple[str, dict[str, Any]]]:
    history = WorkflowHistory.from_json(name, (HISTORIES / f"{name}.json").read_text())
    found = []
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            attributes = event.activity_task_scheduled_event_attributes
            [payload] = attributes.input.payloads
            found.append((attributes.activity_type.name, json.loads(payload.data)))
    return found


@pytest.mark.parametrize("name", OLD)
def test_old_activity_inputs_are_read_whole(name: str) -> None:
    inputs = scheduled_inputs(name)
    assert {kind for kind, _ in inputs} >= {MODEL_STEP, FINISH_RUN}
    for kind, raw in inputs:
        parsed = MODELS[kind].model_validate(raw)
        if kind in (MODEL_STEP, FINISH_RUN):
            # What the old workflow handed over (chunks to write, the step-finish of the step before) is in the
            # outbox (or, for the finish activity, its close), not dropped.
            old_records = raw.get("pending", [])
            assert [r.model_dump(by_alias=True) for r in parsed.outbox.records] == [
                {"chunk": r["chunk"], "key": r.get("key")} for r in old_records
            ]
            step_finish = parsed.close.step_finish if kind == FINISH_RUN else parsed.outbox.step_finish
            assert (step_finish is None) == (raw.get("previousStep") is None)
        if kind == FINISH_RUN:
            assert parsed.close.reason == raw["reason"] and parsed.close.segment == raw["segment"]


def test_the_old_histories_hold_handed_over_chunks() -> None:
    """The check above is not vacuous: old inputs did carry chunks and step-finish notes."""
    inputs = [raw for name in OLD for kind, raw in scheduled_inputs(name) if kind in (MODEL_STEP, FINISH_RUN)]
    assert any(raw.get("pending") for raw in inputs)
    assert any(raw.get("previousStep") for raw in inputs)
