"""Committed histories of real runs replay against today's AgentRunWorkflow.

(ARCHITECTURE.md, "Durable-execution rules" 6.)

A change that breaks in-flight runs (an inserted, removed or reordered activity, a new timer) fails
here. Guard intentional changes with ``workflow.patched`` and record new histories alongside.
"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from tempo_agents.worker import TempoAgentsPlugin
from tempo_agents.workflows.activity_calls import LOCAL_ACTIVITIES
from tempo_agents.workflows.payloads import RunInput, RunResult
from tempo_agents.workflows.run_patches import (
    APPROVED_ARGUMENTS,
    BUDGET_WAITS,
    CALL_ALARMS,
    CANCELLATION_OUTLIVES_ACTIVITIES,
    REFUSED_RESUMES_RUN_ANEW,
    RESUMED_CALLS_KEEP_OPTIONS,
    RUNS_YIELD_THREADS,
    SEGMENTS_CLOSED_BY_ACTIVITIES,
)
from tempo_agents.workflows.steering import STEERING_PATCH
from tempo_agents.workflows.thread import JUMPERS_IN_ARRIVAL_ORDER_PATCH, SLIM_WAITING_PATCH
from tempo_agents.workflows.thread import RUNS_YIELD_THREADS as THREADS_YIELD

HISTORIES = sorted((Path(__file__).parents[1] / "histories").glob("*.json"))
RUN_HISTORIES = [path for path in HISTORIES if not path.stem.startswith("thread-")]
"""Histories of ``AgentRunWorkflow`` (``thread-*`` are of ``ThreadWorkflow``)."""


def load(path: Path) -> WorkflowHistory:
    return WorkflowHistory.from_json(path.stem, path.read_text())


def test_histories_are_committed() -> None:
    """Every path: runs started before the ``segments-closed-by-activities`` patch, after it (``v2-``), and with
    local activities (``v3-``)."""
    names = {"suspend-resume", "approve-decline", "plan-tasks"}
    expected = names | {f"{prefix}{name}" for prefix in ("v2-", "v3-") for name in names}
    assert {path.stem for path in HISTORIES} >= expected


def _markers(path: Path, name: str) -> list[Any]:
    return [
        event.marker_recorded_event_attributes
        for event in load(path).events
        if event.HasField("marker_recorded_event_attributes")
        and event.marker_recorded_event_attributes.marker_name == name
    ]


@pytest.mark.parametrize("path", RUN_HISTORIES, ids=lambda p: p.stem)
def test_history_takes_its_path(path: Path) -> None:
    """The v2 and v3 histories carry the segments patch marker and no finish activity (activities end segments;
    ``v2-cancel-waiting``, cancelled while it waited for an approval, is ended by the finish activity);
    the older ones have neither; only ``v2-reminders-escalation`` has the reminders' patch. Only v3 histories ran
    local activities, behind their patch (and a resumed local call behind the resumed-calls patch; an answer after
    a refused one behind the refused-resumes patch)."""
    text = path.read_text()
    version = path.stem.split("-")[0] if path.stem.startswith(("v2-", "v3-", "v4-", "v5-", "v6-")) else "v1"
    patches = [
        json.loads(payload.data)["id"]
        for marker in _markers(path, "core_patch")
        for payload in marker.details["patch-data"].payloads
    ]
    reminded = path.stem == "v2-reminders-escalation"  # a waiting call with reminders and an escalation
    assert (CALL_ALARMS in patches) == reminded
    patches = [patch for patch in patches if patch != CALL_ALARMS]
    local = [  # model steps and tool calls run as local activities (the journal one is older)
        marker
        for marker in _markers(path, "core_local_activity")
        if b"tempo_agents.tool_call" in marker.SerializeToString()
        or b"tempo_agents.model_step" in marker.SerializeToString()
    ]
    if version == "v1":
        assert patches == [] and "tempo_agents.finish_run" in text
    elif version == "v6":  # cancelled while its step ran, which completed anyway: it ends cancelled, behind its patch
        assert patches == [SEGMENTS_CLOSED_BY_ACTIVITIES, CANCELLATION_OUTLIVES_ACTIVITIES]
        assert "tempo_agents.finish_run" in text and "WORKFLOW_EXECUTION_CANCELED" in text
    elif version == "v5":  # a thread's run that yielded its thread while it waited, behind its patch
        assert patches == [SEGMENTS_CLOSED_BY_ACTIVITIES, RUNS_YIELD_THREADS]
        assert "tempo_agents.finish_run" not in text
    elif version == "v4":  # steered and interrupted runs: the steering patch, asked only once a steer or interrupt came
        assert patches == [SEGMENTS_CLOSED_BY_ACTIVITIES, STEERING_PATCH]
        assert ("tempo_agents.finish_run" in text) == path.stem.startswith("v4-interrupt")
    elif version == "v2":
        # A cancelled run, and one its budget's answer ended, end with the finish activity on every path.
        finished = path.stem in ("v2-cancel-waiting", "v2-budget-ended")
        waited = path.stem in ("v2-budget-raised", "v2-budget-ended")  # a budget wait, behind its patch
        edited = path.stem == "v2-approvers-edit"  # changed arguments, behind their patch (asked only for them)
        expected = [*([BUDGET_WAITS] if waited else []), *([APPROVED_ARGUMENTS] if edited else [])]
        assert patches == [SEGMENTS_CLOSED_BY_ACTIVITIES, *expected]
        assert ("tempo_agents.finish_run" in text) == finished
        # Cancelled while its step ran, which completed anyway: before the patch, the run completed.
        assert ("WORKFLOW_EXECUTION_COMPLETED" in text) == (path.stem != "v2-cancel-waiting")
    else:
        assert patches[:2] == [SEGMENTS_CLOSED_BY_ACTIVITIES, LOCAL_ACTIVITIES] and local
        assert set(patches[2:]) <= {RESUMED_CALLS_KEEP_OPTIONS, REFUSED_RESUMES_RUN_ANEW}
        resumed_local = path.stem in ("v3-suspend-resume", "v3-approve-decline", "v3-resume-refused")
        assert (RESUMED_CALLS_KEEP_OPTIONS in patches) == resumed_local
        assert (REFUSED_RESUMES_RUN_ANEW in patches) == (path.stem == "v3-resume-refused")
    assert bool(local) == (version == "v3")


@pytest.mark.parametrize("sandboxed", [False, True], ids=["as-run", "in-sandbox"])
@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
async def test_history_replays(path: Path, sandboxed: bool) -> None:
    """As workers run it (outside the sandbox), and inside it: the sandbox's runtime restrictions fail the replay
    if workflow code on any recorded path makes a non-deterministic call (reads the clock, does I/O)."""
    replayer = Replayer(workflows=[], plugins=[TempoAgentsPlugin(sandboxed_runs=sandboxed)])
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
        events = load(Path(__file__).parents[1] / "histories" / f"{name}.json").events
        assert any(e.HasField("start_child_workflow_execution_initiated_event_attributes") for e in events)
        assert any(e.HasField("child_workflow_execution_completed_event_attributes") for e in events)
    child = load(Path(__file__).parents[1] / "histories" / "v2-sub-agent-child.json").events
    assert child[0].workflow_execution_started_event_attributes.parent_workflow_execution.workflow_id == (
        "sub-agent-parent"
    )


def test_budget_histories_are_committed() -> None:
    """Runs with budgets: one finished by its limit (no new command), one that waited and was raised by the
    ``budget`` update (its step ran again), one whose wait the person ended."""
    histories = Path(__file__).parents[1] / "histories"
    for name, updates, model_steps in (("finish", 0, 3), ("raised", 1, 5), ("ended", 1, 3)):
        events = load(histories / f"v2-budget-{name}.json").events
        accepted = [e for e in events if e.HasField("workflow_execution_update_accepted_event_attributes")]
        assert [
            e.workflow_execution_update_accepted_event_attributes.accepted_request.input.name for e in accepted
        ] == ["budget"] * updates
        steps = [
            e for e in events if e.activity_task_scheduled_event_attributes.activity_type.name.endswith("model_step")
        ]
        assert len(steps) == model_steps
        completed = events[-1].workflow_execution_completed_event_attributes
        reason = json.loads(completed.result.payloads[0].data)["finishReason"]
        assert reason == ("stop" if name == "raised" else "budget-exceeded")


def test_steered_and_interrupted_histories_are_committed_and_a_steer_rides_in_one_activity_input() -> None:
    """A steer is in the history twice: in its update, and in the input of the one model step that delivered it (its
    outbox), never again in later inputs; an interrupted run's last activity is the finish activity."""
    folder = Path(__file__).parents[1] / "histories"
    events = load(folder / "v4-steer.json").events
    inputs = [
        b"".join(p.data for p in e.activity_task_scheduled_event_attributes.input.payloads)
        for e in events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    for text in (b"Then delete it", b"Say when done"):
        assert sum(1 for data in inputs if text in data) == 1
    updates = [e for e in events if e.HasField("workflow_execution_update_accepted_event_attributes")]
    assert len(updates) == 3  # two steers and the approval
    for name in ("v4-interrupt", "v4-interrupt-waiting"):
        interrupted = load(folder / f"{name}.json").events
        assert any(e.HasField("workflow_execution_signaled_event_attributes") for e in interrupted)
        scheduled = [
            e.activity_task_scheduled_event_attributes.activity_type.name
            for e in interrupted
            if e.HasField("activity_task_scheduled_event_attributes")
        ]
        assert scheduled[-1] == "tempo_agents.finish_run"


def test_a_history_of_a_refused_answer_is_committed() -> None:
    """A local tool refused an answer, then ran the next one: three local tool calls (the suspension, the refused
    resume, the answered one), none through the task queue."""
    path = Path(__file__).parents[1] / "histories" / "v3-resume-refused.json"
    tool_calls = [
        marker
        for marker in _markers(path, "core_local_activity")
        if b"tempo_agents.tool_call" in marker.SerializeToString()
    ]
    assert len(tool_calls) == 3
    assert "tempo_agents.tool_call" not in [
        e.activity_task_scheduled_event_attributes.activity_type.name for e in load(path).events
    ]


def test_a_fork_history_is_committed() -> None:
    """A fork: its input names its origin (run and step, never its transcript); its two parallel calls ran after the
    model step that copied the origin's transcript, one of them answered from the origin."""
    events = load(Path(__file__).parents[1] / "histories" / "v2-fork-reuse.json").events
    started = events[0].workflow_execution_started_event_attributes
    run_input = json.loads(started.input.payloads[0].data)
    assert run_input["options"]["fork"]["runId"] == "fork-origin" and run_input["options"]["fork"]["step"] == 1
    tool_calls = [
        e for e in events if e.activity_task_scheduled_event_attributes.activity_type.name.endswith("tool_call")
    ]
    assert len(tool_calls) == 2


def test_a_thread_history_is_committed() -> None:
    """A thread's workflow: started by the update that sent its first message, its run started as a child (abandoned
    if the thread's workflow closes), a second queued, a third queued and cancelled, a fourth refused; when the first
    run ended, continued as new carrying the second in its queue."""
    events = load(Path(__file__).parents[1] / "histories" / "thread-queue.json").events
    assert events[0].workflow_execution_started_event_attributes.workflow_type.name == "tempo_agents.thread"
    updates = [e for e in events if e.HasField("workflow_execution_update_completed_event_attributes")]
    assert len(updates) == 5  # four sends (two ran, one was taken out of the queue, one refused) and the cancel
    children = [e for e in events if e.HasField("start_child_workflow_execution_initiated_event_attributes")]
    assert [c.start_child_workflow_execution_initiated_event_attributes.workflow_id for c in children] == [
        "thread-run-1"
    ]
    assert all(c.start_child_workflow_execution_initiated_event_attributes.parent_close_policy == 2 for c in children)
    continued = events[-1].workflow_execution_continued_as_new_event_attributes
    carried = json.loads(continued.input.payloads[0].data)
    assert [queued["runInput"]["runId"] for queued in carried["queue"]] == ["thread-run-2"]
    assert [(done["runId"], done["status"]) for done in carried["done"]] == [
        ("thread-run-3", "removed"),
        ("thread-run-1", "COMPLETED"),
    ]


def _signals(path: Path) -> tuple[list[str], list[str]]:
    """The signals a history's workflow sent (to other workflows) and received, in order."""
    events = load(path).events
    sent = [
        e.signal_external_workflow_execution_initiated_event_attributes.signal_name
        for e in events
        if e.HasField("signal_external_workflow_execution_initiated_event_attributes")
    ]
    received = [
        e.workflow_execution_signaled_event_attributes.signal_name
        for e in events
        if e.HasField("workflow_execution_signaled_event_attributes")
    ]
    return sent, received


def test_histories_of_a_run_that_yields_its_thread_are_committed() -> None:
    """The thread's workflow: its first run yields while it waits, a second message starts at once (a second child
    while the first still runs), the first asks for its turn once answered and is given the go-ahead; the run: it
    tells its thread that it waits, that it was answered, and that it ended, and waits for the go-ahead."""
    histories = Path(__file__).parents[1] / "histories"
    thread = load(histories / "thread-yield.json").events
    children = [
        e.start_child_workflow_execution_initiated_event_attributes.workflow_id
        for e in thread
        if e.HasField("start_child_workflow_execution_initiated_event_attributes")
    ]
    assert children == ["yield-run-1", "yield-run-2"]
    assert _signals(histories / "thread-yield.json") == (
        ["tempo_agents.thread_go_ahead"],
        ["tempo_agents.thread_run_waiting", "tempo_agents.thread_run_answered", "tempo_agents.thread_run_ended"],
    )
    assert _signals(histories / "v5-thread-yield-run.json") == (
        ["tempo_agents.thread_run_waiting", "tempo_agents.thread_run_answered", "tempo_agents.thread_run_ended"],
        ["tempo_agents.thread_go_ahead"],
    )


def test_a_thread_history_carrying_a_slim_waiting_run_is_committed() -> None:
    """A run waits, having yielded the thread; later messages run; the thread continues as new carrying the waiting
    run as what it uses of it (behind the ``thread-carries-slim-waiting-runs`` patch): no messages."""
    events = load(Path(__file__).parents[1] / "histories" / "thread-slim-waiting.json").events
    patches = [
        json.loads(payload.data)["id"]
        for event in events
        if event.HasField("marker_recorded_event_attributes")
        and event.marker_recorded_event_attributes.marker_name == "core_patch"
        for payload in event.marker_recorded_event_attributes.details["patch-data"].payloads
    ]
    assert patches[-1] == SLIM_WAITING_PATCH and set(patches) == {THREADS_YIELD, SLIM_WAITING_PATCH}
    continued = events[-1].workflow_execution_continued_as_new_event_attributes
    carried = json.loads(continued.input.payloads[0].data)
    assert [(run["runInput"]["runId"], run["runInput"]["messages"]) for run in carried["waiting"]] == [
        ("slim-run-1", [])
    ]
    assert carried["queue"] == []


def test_a_thread_history_with_interrupters_is_committed() -> None:
    """Two ``interrupt`` messages behind a queued one: behind the ``thread-jumpers-in-arrival-order`` patch, each
    told its true position (1, then 2), and the runs started first to last."""
    events = load(Path(__file__).parents[1] / "histories" / "thread-jumpers.json").events
    patches = [
        json.loads(payload.data)["id"]
        for event in events
        if event.HasField("marker_recorded_event_attributes")
        and event.marker_recorded_event_attributes.marker_name == "core_patch"
        for payload in event.marker_recorded_event_attributes.details["patch-data"].payloads
    ]
    assert patches == [JUMPERS_IN_ARRIVAL_ORDER_PATCH]
    outcomes = [
        json.loads(e.workflow_execution_update_completed_event_attributes.outcome.success.payloads[0].data)
        for e in events
        if e.HasField("workflow_execution_update_completed_event_attributes")
    ]
    assert [(o["outcome"], o.get("position")) for o in outcomes] == [
        ("started", None),
        ("queued", 1),
        ("queued", 1),
        ("queued", 2),
    ]
    children = [e for e in events if e.HasField("start_child_workflow_execution_initiated_event_attributes")]
    assert [c.start_child_workflow_execution_initiated_event_attributes.workflow_id for c in children] == [
        "jump-run-1",
        "jump-run-3",
        "jump-run-4",
        "jump-run-2",
    ]


def test_a_reminders_history_is_committed() -> None:
    """A waiting call reminded every day, escalated after two and declined by its deadline after three: one timer a
    day on workflow time, and the journal activity that wrote each reminder's and the escalation's notes."""
    events = load(Path(__file__).parents[1] / "histories" / "v2-reminders-escalation.json").events
    timers = [
        e.timer_started_event_attributes.start_to_fire_timeout.ToTimedelta()
        for e in events
        if e.HasField("timer_started_event_attributes")
    ]
    assert [round(t / timedelta(hours=1)) for t in timers] == [24, 24, 24]
    journaled = [
        e
        for e in events
        if e.HasField("marker_recorded_event_attributes") and b"tempo_agents.journal" in e.SerializeToString()
    ]
    assert len(journaled) == 2  # day 1: a reminder; day 2: the escalation and a reminder


def test_an_assigned_and_edited_approval_history_is_committed() -> None:
    """Calls assigned to approvers: a refused signal from someone else (journaled while the run waited), an
    approval with changed arguments (the approved call's activity runs with them), a decline by a group member."""
    events = load(Path(__file__).parents[1] / "histories" / "v2-approvers-edit.json").events
    assert any(e.HasField("workflow_execution_signaled_event_attributes") for e in events)
    inputs = [
        json.loads(e.activity_task_scheduled_event_attributes.input.payloads[0].data)
        for e in events
        if e.activity_task_scheduled_event_attributes.activity_type.name == "tempo_agents.tool_call"
    ]
    resumed = {i["call"]["toolCallId"]: i for i in inputs if i.get("resolution")}
    assert resumed["pay-1"]["call"]["args"] == {"amount": 450}
    assert resumed["pay-1"]["resolution"]["argsBefore"] == {"amount": 900}
    assert resumed["pay-1"]["resolution"]["answeredBy"] == "alice"
    assert resumed["pay-2"]["resolution"]["action"] == "decline"
    assert resumed["pay-2"]["resolution"]["answeredBy"] == "carol"
