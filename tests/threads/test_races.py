"""Races forced from outside: clients in two processes, every one ready before any sends, send to one thread at
once under each strategy. Per strategy the outcome is exact, the thread's messages are in the order its runs ran, and
no message is lost or doubled."""

from __future__ import annotations

import asyncio
import collections

import pytest
from temporalio.testing import WorkflowEnvironment

from tempo_agents import App
from tempo_agents.agent.threads import ThreadSnapshot
from tests.conftest import AppFactory, running_worker
from tests.support.thread_agents import Gate, answer_of, gated_agent
from tests.support.thread_clients import Race, race_from_processes

pytestmark = pytest.mark.timeout(240)

PER_PROCESS = 4
MESSAGES = [[f"p{p}-m{m}" for m in range(PER_PROCESS)] for p in range(2)]
SENT = [message for messages in MESSAGES for message in messages]


def _race(app: App, temporal_env: WorkflowEnvironment, strategy: str) -> Race:
    return Race(
        address=temporal_env.client.service_client.config.target_host,
        store=app.store.url,
        task_queue=app.task_queue,
        thread="busy",
        resource="everyone",
        strategy=strategy,
    )


async def _finished(app: App, count: int) -> ThreadSnapshot:
    """The thread once ``count`` runs are done and none is active or queued."""
    for _ in range(1500):
        view = await app.thread("busy", resource_id="everyone")
        if not view.active and not view.queued and len(view.done) == count:
            return view
        await asyncio.sleep(0.05)
    raise AssertionError(f"the thread did not finish: {view}")


async def _texts(app: App) -> list[tuple[str, str]]:
    messages = await app.store.get_thread_messages("busy", "everyone")
    return [(m["role"], "".join(p.get("text", "") for p in m["content"])) for m in messages]


async def test_enqueue_race_runs_every_message_once_in_queue_order(
    make_app: AppFactory, temporal_env: WorkflowEnvironment
) -> None:
    gate = Gate()
    app = make_app([gated_agent(gate)])
    async with running_worker(app):
        results = await asyncio.to_thread(race_from_processes, _race(app, temporal_env, "enqueue"), MESSAGES)
        outcomes = collections.Counter(r["outcome"] for r in results)
        assert outcomes == {"started": 1, "queued": len(SENT) - 1}
        (first,) = [r for r in results if r["outcome"] == "started"]
        queued = sorted((r for r in results if r["outcome"] == "queued"), key=lambda r: r["position"])
        assert [r["position"] for r in queued] == list(range(1, len(SENT)))
        assert {r["activeRunId"] for r in queued} == {first["runId"]}
        assert len({r["runId"] for r in results}) == len(SENT)
        gate.open()
        view = await _finished(app, len(SENT))
    ran = [first, *queued]
    assert [(d.run_id, d.status) for d in view.done] == [(r["runId"], "COMPLETED") for r in ran]
    expected: list[tuple[str, str]] = []
    for n, result in enumerate(ran, start=1):
        expected += [("user", result["message"]), ("assistant", answer_of(result["message"], n))]
    assert await _texts(app) == expected  # every message once, in the order the runs ran, each seeing all before it
    assert sorted(text for role, text in expected if role == "user") == sorted(SENT)


async def test_reject_race_starts_exactly_one_run(make_app: AppFactory, temporal_env: WorkflowEnvironment) -> None:
    gate = Gate()
    app = make_app([gated_agent(gate)])
    async with running_worker(app):
        results = await asyncio.to_thread(race_from_processes, _race(app, temporal_env, "reject"), MESSAGES)
        outcomes = collections.Counter(r["outcome"] for r in results)
        assert outcomes == {"started": 1, "rejected": len(SENT) - 1}
        (winner,) = [r for r in results if r["outcome"] == "started"]
        assert {r["activeRunId"] for r in results if r["outcome"] == "rejected"} == {winner["runId"]}
        gate.open()
        view = await _finished(app, 1)
    assert [d.run_id for d in view.done] == [winner["runId"]]
    assert await _texts(app) == [("user", winner["message"]), ("assistant", answer_of(winner["message"], 1))]


@pytest.mark.parametrize("strategy", ["interrupt", "rollback"])
async def test_jumping_race_runs_every_message_once_each_seeing_all_before(
    make_app: AppFactory, temporal_env: WorkflowEnvironment, strategy: str
) -> None:
    """Every message after the first jumps to the head of the queue (the last accepted runs next); under
    ``rollback`` the first run is cancelled and leaves nothing in the thread."""
    gate = Gate()
    app = make_app([gated_agent(gate)])
    async with running_worker(app):
        results = await asyncio.to_thread(race_from_processes, _race(app, temporal_env, strategy), MESSAGES)
        outcomes = collections.Counter(r["outcome"] for r in results)
        assert outcomes == {"started": 1, "queued": len(SENT) - 1}
        (first,) = [r for r in results if r["outcome"] == "started"]
        assert {r["position"] for r in results if r["outcome"] == "queued"} == {1}
        if strategy == "rollback":  # the first run ends cancelled while its model step waits
            for _ in range(600):
                if (await app.thread("busy", resource_id="everyone")).done:
                    break
                await asyncio.sleep(0.05)
        gate.open()
        view = await _finished(app, len(SENT))
    statuses = collections.Counter(d.status for d in view.done)
    first_status = "CANCELED" if strategy == "rollback" else "COMPLETED"
    assert view.done[0].run_id == first["runId"] and view.done[0].status == first_status
    assert statuses == {
        "COMPLETED": len(SENT) - (strategy == "rollback"),
        **({"CANCELED": 1} if strategy == "rollback" else {}),
    }
    texts = await _texts(app)
    users = [text for role, text in texts if role == "user"]
    ran = [m for m in SENT if m != first["message"]] if strategy == "rollback" else SENT
    assert sorted(users) == sorted(ran)  # every message once; the rolled-back one's gone
    assert [text for role, text in texts if role == "assistant"] == [
        answer_of(user, n) for n, user in enumerate(users, start=1)
    ]  # each run saw every message before it
