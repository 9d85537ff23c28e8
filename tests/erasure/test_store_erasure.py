"""The store's part of an erasure, on both stores, read back from underneath: the SQLite file and its write-ahead
log as bytes, PostgreSQL's tables as text. Nothing of the erased runs, threads or resource is left; everything else
is."""

from __future__ import annotations

from tempo_agents.store import Store
from tempo_agents.store.base import ChunkWrite, SavedOutcome, TranscriptEntry, WaitingCall, WaitingChange
from tests.support.store_contents import store_contents


async def _write_run(store: Store, run_id: str, thread: str, resource: str, secret: str) -> None:
    """A run of ``thread`` whose every record holds ``secret``: chunks, transcript, outcome, waiting call, messages."""
    call = WaitingCall(
        run_id=run_id,
        tool_call_id="c1",
        task_queue="tq",
        agent_id="billing",
        thread_id=thread,
        resource_id=resource,
        call={"args": {"customer": secret}},
        suspended_at=1.0,
    )
    await store.record(
        run_id,
        [TranscriptEntry(-1, "input-0000", 0, {"role": "user", "content": [{"type": "text", "text": secret}]})],
        [ChunkWrite({"type": "tool-call", "runId": run_id, "from": "AGENT", "payload": {"args": {"c": secret}}})],
        outcome=SavedOutcome(f"{run_id}-step", {"text": secret}),
        waiting=WaitingChange(waits=[call]),
    )
    await store.append_thread_messages(thread, resource, run_id, [{"role": "user", "content": [{"text": secret}]}])
    await store.set_thread_state(thread, "working-memory", {"note": secret})


async def test_erasing_runs_threads_and_a_resource_leaves_none_of_them_underneath(store: Store) -> None:
    await _write_run(store, "run-a1", "t1", "acme", "ACME-ONE-5521")
    await _write_run(store, "run-a2", "t2", "acme", "ACME-TWO-5522")
    await _write_run(store, "run-a3", "t3", "acme", "ACME-THREE-5523")
    await _write_run(store, "run-g1", "t1", "globex", "GLOBEX-ONE-8841")
    assert "ACME-ONE-5521" in store_contents(store)

    assert await store.erase(["run-a1"]) > 0  # a run: its rows, its thread's other runs untouched
    left = store_contents(store)
    assert "ACME-ONE-5521" not in left and "ACME-TWO-5522" in left
    assert await store.read_chunks("run-a1") == [] and await store.get_transcript("run-a1") == []

    await store.erase([], threads=[("t2", "acme")])  # a thread: its messages and state, whichever run wrote them
    assert await store.get_thread_messages("t2", "acme") == []
    assert await store.get_thread_state("t2", "working-memory") is None

    await store.erase(["run-a2", "run-a3"], resources=["acme"])  # a resource: every thread and call of it
    left = store_contents(store)
    assert not any(secret in left for secret in ("ACME-ONE-5521", "ACME-TWO-5522", "ACME-THREE-5523"))
    assert "GLOBEX-ONE-8841" in left
    assert await store.get_thread_messages("t3", "acme") == []
    assert len(await store.get_thread_messages("t1", "globex")) == 1
    assert await store.get_thread_state("t1", "working-memory") == {"note": "GLOBEX-ONE-8841"}  # shared thread id
    waiting = await store.waiting_runs("tq")
    assert [calls[0].run_id for calls in waiting.runs] == ["run-g1"]

    assert await store.erase(["run-a1", "run-a2", "run-a3"], resources=["acme"]) == 0  # again: nothing left to go
