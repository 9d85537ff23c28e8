"""Runs left waiting by the previous release finish on this one.

The previous release's package (``previous_release/``, the ``tempo_agents/`` folder of its commit) runs in a
Python of its own, on this session's dev server and a SQLite store file, and leaves runs waiting for a person: a tool
approval, an ``ask_user`` question, a tool suspended with ``ctx.suspend``, and a run on a memory thread, which yielded
it. Its worker is shut down; a worker of this checkout takes the same task queue and store, lists the runs, answers
each, and each ends as its agent's script says, its journal whole: what the previous release wrote, then the rest.
The thread takes messages after the upgrade too. It passes as well with encryption turned on for this release: the
previous release's payloads, in clear, are read as they are, and what this release adds is sealed."""

from __future__ import annotations

import asyncio
import os
import sys
import tarfile
import uuid
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from temporalio.testing import WorkflowEnvironment

from tempo_agents import App, ThreadSnapshot
from tempo_agents.models.messages import Message
from tests.conftest import AppFactory, running_worker
from tests.support.encryption import keyring, payload_key_ids
from tests.support.upgrade_agents import (
    AGE,
    ANSWERED_TEXT,
    APPROVAL_AGENT,
    APPROVED_TEXT,
    MEMORY,
    NOTE_PREFIX,
    QUESTION,
    QUESTION_AGENT,
    QUESTION_ANSWER,
    RESOURCE,
    RESUMED_TEXT,
    SUSPENDING_AGENT,
    THREAD,
    THREAD_AGENT,
    THREAD_PROMPT,
    paid_text,
    thread_reply,
    upgrade_agents,
)
from tests.support.upgrade_waiting_runs import WaitingReport, WaitingRun

PREVIOUS_RELEASE = Path(__file__).parent / "previous_release" / "tempo_agents-1c7297c.tar.gz"
REPOSITORY = Path(__file__).resolve().parents[2]
PROGRAM_SECONDS = 120.0
"""How long the previous release's program may take (it takes seconds)."""
STEP_SECONDS = 30.0
"""How long one step of this release may take (each takes well under a second)."""

T = TypeVar("T")


def extract_previous_release(directory: Path) -> Path:
    """The previous release's ``tempo_agents/`` unpacked into ``directory``; ``directory``."""
    with tarfile.open(PREVIOUS_RELEASE) as archive:
        archive.extractall(directory, filter="data")
    return directory


async def leave_runs_waiting_on_the_previous_release(
    release: Path, address: str, store: str, task_queue: str, report: Path
) -> WaitingReport:
    """Run ``upgrade_waiting_runs`` in this interpreter with the previous release's package (in ``release``) first
    on its path, then this repository for the tests' modules; its report."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(release), str(REPOSITORY)])}
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "tests.support.upgrade_waiting_runs", address, store, task_queue, str(report)),
        cwd=release,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await asyncio.wait_for(process.communicate(), PROGRAM_SECONDS)
    assert process.returncode == 0, output.decode()
    return WaitingReport.model_validate_json(report.read_text())


async def journal(app: App, run_id: str) -> list[dict[str, Any]]:
    """The run's whole journal; its offsets run from 0 with no gap."""
    entries = await app.store.read_chunks(run_id, 0, 100_000)
    assert [entry.offset for entry in entries] == list(range(len(entries)))
    return [entry.chunk for entry in entries]


async def until_idle(app: App) -> ThreadSnapshot:
    """The thread, once no run of it is active or queued (it hears of a run's end just after the run's result)."""
    while (thread := await app.thread(THREAD, resource_id=RESOURCE)).active or thread.queued:
        await asyncio.sleep(0.05)
    return thread


def chunk_types(chunks: list[dict[str, Any]]) -> list[str]:
    """The chunks' types in order, a run of text deltas counted once."""
    types: list[str] = []
    for chunk in chunks:
        if not (chunk["type"] == "text-delta" and types and types[-1] == "text-delta"):
            types.append(chunk["type"])
    return types


def streamed_text(chunks: list[dict[str, Any]]) -> str:
    return "".join(chunk["payload"]["text"] for chunk in chunks if chunk["type"] == "text-delta")


WAITING_SEGMENT = [
    *("start", "step-start", "tool-call-input-streaming-start", "tool-call-delta", "tool-call-delta"),
    *("tool-call-delta", "tool-call-input-streaming-end", "tool-call"),
]
"""How a run's first segment begins: the model's step streams one call (the scripted model sends its arguments in
three pieces); the call's wait, ``step-finish`` and ``finish`` follow."""
ANSWERED_SEGMENT = ["start", "tool-result", "step-finish", "step-start", "text-delta", "step-finish", "finish"]
"""The segment an answer opens: the call's result, then the model's last step, which streams the run's text."""


async def assert_whole_journal(app: App, waiting: WaitingRun, call_type: str, result: Any, text: str) -> None:
    """The run's journal begins with what the previous release wrote, unchanged: a segment that ends with the call
    waiting; then one segment written by this release: the call's result, then the text the run ends with."""
    chunks = await journal(app, waiting.run_id)
    before, after = chunks[: len(waiting.journal)], chunks[len(waiting.journal) :]
    assert before == waiting.journal
    assert chunk_types(before) == [*WAITING_SEGMENT, call_type, "step-finish", "finish"]
    assert before[-1]["payload"]["stepResult"]["reason"] == "suspended"
    call_id = waiting.pending[0]["tool_call_id"]
    assert before[len(WAITING_SEGMENT)]["payload"]["toolCallId"] == call_id
    assert chunk_types(after) == ANSWERED_SEGMENT
    assert (after[1]["payload"]["toolCallId"], after[1]["payload"]["result"]) == (call_id, result)
    assert streamed_text(after) == text
    assert after[-1]["payload"]["stepResult"]["reason"] == "stop"


async def within(what: str, step: Awaitable[T]) -> T:
    """``step``'s outcome; a step of this release on the previous release's runs that stands still (a run whose
    workflow task fails on replay, a message queued behind a run the thread thinks active) fails the test with its
    name instead of hanging it."""
    try:
        return await asyncio.wait_for(step, STEP_SECONDS)
    except TimeoutError:
        pytest.fail(f"{what}: nothing after {STEP_SECONDS} s on this release")


async def answer_the_waiting_runs(app: App, runs: dict[str, WaitingRun]) -> None:
    """List the runs, ask each what it waits on, answer each; each ends as its script says."""
    suspended = await within("list_suspended_runs", app.list_suspended_runs())
    assert sorted(run.run_id for run in suspended.runs) == sorted(run.run_id for run in runs.values())
    assert suspended.total == len(runs)
    for run in runs.values():  # this release's workflow code replays the previous release's history to answer
        pending = await within(f"the pending query of {run.agent_id}", app.pending(run.run_id))
        assert [call.model_dump(mode="json") for call in pending] == run.pending
    question = runs[QUESTION_AGENT].pending[0]
    assert question["tool_name"] == "ask_user" and question["suspend_payload"]["question"] == QUESTION

    approved = await within("the approval", app.approve_tool_call(APPROVAL_AGENT, run_id=runs[APPROVAL_AGENT].run_id))
    answered = await within(
        "the question's answer", app.resume_stream(QUESTION_AGENT, QUESTION_ANSWER, run_id=runs[QUESTION_AGENT].run_id)
    )
    resumed = await within(
        "the tool's resume", app.resume_stream(SUSPENDING_AGENT, {"age": AGE}, run_id=runs[SUSPENDING_AGENT].run_id)
    )
    ends = {
        agent_id: await within(f"the end of {agent_id}'s run", stream.result())
        for agent_id, stream in ((APPROVAL_AGENT, approved), (QUESTION_AGENT, answered), (SUSPENDING_AGENT, resumed))
    }
    assert {agent_id: (end.finish_reason, end.text) for agent_id, end in ends.items()} == {
        APPROVAL_AGENT: ("stop", APPROVED_TEXT),
        QUESTION_AGENT: ("stop", ANSWERED_TEXT),
        SUSPENDING_AGENT: ("stop", RESUMED_TEXT),
    }


async def go_on_with_the_thread(app: App, waiting: WaitingRun) -> ThreadSnapshot:
    """A message to the thread while its run waits (it yielded the thread: the message starts at once), the run's
    approval (its rest reads that message), and a message once the thread is idle; the thread after them."""
    hello = await within("a message beside the waiting run", app.stream(THREAD_AGENT, "hello", memory=MEMORY))
    assert hello.thread_outcome is not None and hello.thread_outcome.outcome == "started"
    assert (await within("the reply", hello.finish_reason), await hello.text) == ("stop", thread_reply("hello"))
    approved = await within("the thread run's approval", app.approve_tool_call(THREAD_AGENT, run_id=waiting.run_id))
    paid = await within("the end of the thread's run", approved.result())
    assert (paid.finish_reason, paid.text) == ("stop", paid_text(["hello"]))
    await within("the thread's idleness", until_idle(app))
    bye = await within("a message to the idle thread", app.generate(THREAD_AGENT, "bye", memory=MEMORY))
    assert (bye.finish_reason, bye.text) == ("stop", thread_reply("bye"))
    return await within("the thread's idleness", until_idle(app))


@pytest.mark.timeout(180)
@pytest.mark.parametrize("encrypted", [False, True], ids=["in-clear", "encryption-turned-on"])
async def test_runs_left_waiting_by_the_previous_release_finish_on_this_one(
    temporal_env: WorkflowEnvironment, make_app: AppFactory, tmp_path: Path, encrypted: bool
) -> None:
    release = extract_previous_release(tmp_path / "previous-release")
    store = f"sqlite:///{tmp_path / 'store.db'}"
    task_queue = f"tq-{uuid.uuid4()}"
    address = temporal_env.client.service_client.config.target_host
    left = await leave_runs_waiting_on_the_previous_release(
        release, address, store, task_queue, tmp_path / "report.json"
    )
    assert left.tempo_agents_file == str((release / "tempo_agents" / "__init__.py").resolve())
    runs = {run.agent_id: run for run in left.runs}
    assert sorted(runs) == sorted([APPROVAL_AGENT, QUESTION_AGENT, SUSPENDING_AGENT, THREAD_AGENT])
    assert all(len(run.pending) == 1 for run in left.runs)
    assert sorted(left.listed) == sorted(run.run_id for run in left.runs)
    assert left.thread_waiting == [runs[THREAD_AGENT].run_id]

    app = make_app(
        upgrade_agents(), store=store, task_queue=task_queue, encryption_keys=keyring("k1") if encrypted else None
    )
    async with running_worker(app):
        await answer_the_waiting_runs(app, runs)
        thread = await go_on_with_the_thread(app, runs[THREAD_AGENT])
        assert (await within("list_suspended_runs", app.list_suspended_runs())).runs == []

    await assert_whole_journal(app, runs[APPROVAL_AGENT], "tool-call-approval", "sent 5 to Ann", APPROVED_TEXT)
    await assert_whole_journal(
        app,
        runs[QUESTION_AGENT],
        "tool-call-suspended",
        {"content": f"User answered: {QUESTION_ANSWER}", "isError": False},
        ANSWERED_TEXT,
    )
    await assert_whole_journal(
        app, runs[SUSPENDING_AGENT], "tool-call-suspended", {"name": "Ann", "age": AGE}, RESUMED_TEXT
    )
    await assert_whole_journal(app, runs[THREAD_AGENT], "tool-call-approval", "paid Bob", paid_text(["hello"]))

    assert thread.waiting == [] and thread.active == [] and thread.queued == []
    said = [Message.model_validate(m) for m in thread.messages]
    texts = [(m.role, m.text) for m in said if m.role in ("user", "assistant")]
    assert texts[4][0] == "user" and texts[4][1].startswith(NOTE_PREFIX)  # the answer came after "hello"
    assert texts == [
        ("user", THREAD_PROMPT),
        ("assistant", ""),  # the call to pay
        ("user", "hello"),
        ("assistant", thread_reply("hello")),
        texts[4],
        ("assistant", paid_text(["hello"])),
        ("user", "bye"),
        ("assistant", thread_reply("bye")),
    ]
    assert [p.result for m in said for p in m.tool_results] == ["paid Bob"]
    for run in left.runs:  # the previous release's payloads in clear, this release's sealed when it encrypts
        events = list((await temporal_env.client.get_workflow_handle(run.run_id).fetch_history()).events)
        assert payload_key_ids(events) == ({"clear", "k1"} if encrypted else {"clear"})
