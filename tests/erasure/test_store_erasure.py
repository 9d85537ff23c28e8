"""The store's part of an erasure, on both stores, read back from underneath: the SQLite file and its write-ahead
log as bytes, PostgreSQL's tables as text. Nothing of the erased runs, threads or resource is left; everything else
is. Nothing more is written under an erased run's id, not even by a write that was under way when the erasure
began."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from tempo_agents.budgets import step_counters
from tempo_agents.errors import ErasedRunError
from tempo_agents.store import Store, open_store
from tempo_agents.store.base import (
    ChunkWrite,
    SavedOutcome,
    TranscriptEntry,
    UsageCharge,
    WaitingCall,
    WaitingChange,
)
from tempo_agents.store.sqlite import erasure as sqlite_erasure
from tests.support.polling import until
from tests.support.postgres_server import PostgresServer
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
        charges=[UsageCharge(key, "total", 100, 7) for key in _usage_keys(run_id, thread, resource)],
    )
    await store.append_thread_messages(thread, resource, run_id, [{"role": "user", "content": [{"text": secret}]}])
    await store.set_thread_state(thread, "working-memory", {"note": secret})


def _usage_keys(run_id: str, thread: str, resource: str) -> list[str]:
    """The usage counters a model step of the run adds to: the run's, its thread's, its resource's."""
    return sorted({counter.scope_key for counter in step_counters(run_id, thread, resource, datetime.now(UTC))})


async def _counted(store: Store, run_id: str, thread: str, resource: str) -> list[str]:
    """Which of the run's, its thread's and its resource's usage counters the store still holds."""
    keys = _usage_keys(run_id, thread, resource)
    return sorted(scope for scope, _ in await store.usage_counters([(key, "total") for key in keys]))


async def test_erasing_runs_threads_and_a_resource_leaves_none_of_them_underneath(store: Store) -> None:
    await _write_run(store, "run-a1", "t1", "acme", "ACME-ONE-5521")
    await _write_run(store, "run-a2", "t2", "acme", "ACME-TWO-5522")
    await _write_run(store, "run-a3", "t3", "acme", "ACME-THREE-5523")
    await _write_run(store, "run-g1", "t1", "globex", "GLOBEX-ONE-8841")
    await _write_run(store, "run-x1", "t9", "acme:x", "ACMEX-ONE-7001")  # a resource whose id begins like acme's
    assert "ACME-ONE-5521" in store_contents(store)
    assert await _counted(store, "run-a1", "t1", "acme") == _usage_keys("run-a1", "t1", "acme")

    assert await store.erase(["run-a1"]) > 0  # a run: its rows, its thread's other runs untouched
    left = store_contents(store)
    assert "ACME-ONE-5521" not in left and "ACME-TWO-5522" in left
    assert await store.read_chunks("run-a1") == [] and await store.get_transcript("run-a1") == []
    assert await _counted(store, "run-a1", "t1", "acme") == ["resource:acme", "thread:4:acme:t1"]

    await store.erase([], threads=[("t2", "acme")])  # a thread: its messages and state, whichever run wrote them
    assert await store.get_thread_messages("t2", "acme") == []
    assert await store.get_thread_state("t2", "working-memory") is None
    assert await _counted(store, "run-a2", "t2", "acme") == ["resource:acme", "run:run-a2"]

    await store.erase(["run-a2", "run-a3"], resources=["acme"])  # a resource: every thread and call of it
    left = store_contents(store)
    assert not any(secret in left for secret in ("ACME-ONE-5521", "ACME-TWO-5522", "ACME-THREE-5523"))
    assert "GLOBEX-ONE-8841" in left and "ACMEX-ONE-7001" in left
    assert await _counted(store, "run-a3", "t3", "acme") == []
    assert await _counted(store, "run-a1", "t1", "acme") == []  # its thread's counter, though no message names t1
    for run_id, thread, resource in (("run-g1", "t1", "globex"), ("run-x1", "t9", "acme:x")):
        assert await _counted(store, run_id, thread, resource) == _usage_keys(run_id, thread, resource)
    assert await store.get_thread_messages("t3", "acme") == []
    assert len(await store.get_thread_messages("t1", "globex")) == 1
    assert await store.get_thread_state("t1", "working-memory") == {"note": "GLOBEX-ONE-8841"}  # shared thread id
    waiting = await store.waiting_runs("tq")
    assert [calls[0].run_id for calls in waiting.runs] == ["run-g1", "run-x1"]

    assert await store.erase(["run-a1", "run-a2", "run-a3"], resources=["acme"]) == 0  # again: nothing left to go


async def test_a_reader_holding_the_log_makes_the_erasure_fail_loudly_until_it_lets_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader still on a snapshot from before the deletion keeps the write-ahead log, which holds the erased rows'
    pages as they were. The erasure does not return as if done: past its wait it raises, naming the file and asking
    to erase again; once the reader lets go, erasing again leaves nothing in the file or its log."""
    store = open_store(f"sqlite:///{tmp_path}/store.db")
    try:
        await _write_run(store, "run-a1", "t1", "acme", "ACME-ONE-5521")
        await _write_run(store, "run-g1", "t1", "globex", "GLOBEX-ONE-8841")
        reader = sqlite3.connect(tmp_path / "store.db", isolation_level=None)
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM journal").fetchone()[0] == 2  # its snapshot holds acme's rows
        monkeypatch.setattr(sqlite_erasure, "LOG_TRUNCATE_SECONDS", 1.5)
        with pytest.raises(TimeoutError, match=r"store\.db: the erased rows are deleted, but a reader kept the"):
            await store.erase(["run-a1"], resources=["acme"])
        assert await store.read_chunks("run-a1") == []
        assert "ACME-ONE-5521" in store_contents(store)  # in the log, as the error says
        reader.execute("COMMIT")
        reader.close()
        assert await store.erase(["run-a1"], resources=["acme"]) == 0
        left = store_contents(store)
        assert "ACME-ONE-5521" not in left and "GLOBEX-ONE-8841" in left
    finally:
        await store.close()


def _late_writes(store: Store, run_id: str, secret: str) -> list[Callable[[], Awaitable[object]]]:
    """Every kind of write under a run id, each bringing ``secret`` back."""
    entry = TranscriptEntry(0, "text-0000", 1, {"role": "assistant", "content": [{"type": "text", "text": secret}]})
    chunk = ChunkWrite({"type": "tool-result", "runId": run_id, "from": "AGENT", "payload": {"result": secret}})
    return [
        lambda: store.record(run_id, [entry], [chunk], outcome=SavedOutcome(f"{run_id}-late", {"text": secret})),
        lambda: store.append_chunks(run_id, [chunk]),
        lambda: store.put_transcript(run_id, [entry]),
        lambda: store.append_thread_messages("t1", "acme", run_id, [{"role": "user", "content": [{"text": secret}]}]),
        lambda: store.saved_or_counted(run_id, f"{run_id}-call", f"{run_id}-call-starts"),
        lambda: store.set_thread_state("t1", "working-memory", {"note": secret}, run_id=run_id),
    ]


async def test_nothing_more_is_written_under_an_erased_runs_id(store: Store) -> None:
    await _write_run(store, "run-a1", "t1", "acme", "ACME-ONE-5521")
    await _write_run(store, "run-g1", "t1", "globex", "GLOBEX-ONE-8841")
    assert await store.erase(["run-a1"]) > 0
    assert await store.is_erased("run-a1") and not await store.is_erased("run-g1")

    for write in _late_writes(store, "run-a1", "ACME-LATE-5529"):  # an activity that finished after the erasure
        with pytest.raises(ErasedRunError, match='run "run-a1" was erased on request'):
            await write()
    left = store_contents(store)
    assert "ACME-LATE-5529" not in left and "ACME-ONE-5521" not in left
    assert await store.read_chunks("run-a1") == [] and await store.get_transcript("run-a1") == []
    assert await _counted(store, "run-a1", "t1", "acme") == ["resource:acme", "thread:4:acme:t1"]
    assert await store.get_thread_messages("t1", "acme") == []

    for write in _late_writes(store, "run-g1", "GLOBEX-LATE-8849"):  # the other runs write as before
        await write()
    assert "GLOBEX-LATE-8849" in store_contents(store)

    assert await store.erase(["run-a1"]) == 0  # erasing it again: nothing left, still refused
    with pytest.raises(ErasedRunError):
        await store.append_chunks("run-a1", [ChunkWrite({"type": "start", "runId": "run-a1"})])


async def test_a_thousand_runs_erased_at_once_are_each_kept(store: Store) -> None:
    """More runs than one of the store's erasure batches (PostgreSQL erases 500 at a time, each batch with its own
    locks): every one is deleted and refuses later writes."""
    run_ids = [f"run-{n:04d}" for n in range(1_200)]
    for run_id in run_ids[::100]:
        await store.append_chunks(run_id, [ChunkWrite({"type": "start", "runId": run_id, "payload": {"n": run_id}})])
    assert await store.erase(run_ids) > 0
    for run_id in (run_ids[0], run_ids[499], run_ids[500], run_ids[999], run_ids[1_000], run_ids[-1]):
        assert await store.is_erased(run_id), run_id
        with pytest.raises(ErasedRunError):
            await store.append_chunks(run_id, [ChunkWrite({"type": "start", "runId": run_id})])
    assert all([await store.read_chunks(run_id) == [] for run_id in run_ids[::100]])
    assert not await store.is_erased("run-1200")


async def test_the_retention_sweepers_deletions_leave_a_runs_id_free(store: Store) -> None:
    await _write_run(store, "run-old", "t1", "acme", "ACME-OLD-5530")
    assert await store.erase(["run-old"], refuse_later_writes=False) > 0
    assert not await store.is_erased("run-old")
    await store.append_chunks("run-old", [ChunkWrite({"type": "start", "runId": "run-old"})])
    assert len(await store.read_chunks("run-old")) == 1


async def _waiting_on_locks(url: str) -> int:
    """How many sessions of the store's database wait for a lock now."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        row = await cursor.fetchone()
    assert row is not None
    return int(row[0])


async def test_a_write_under_way_when_an_erasure_begins_is_erased_with_its_run(postgres_server: PostgresServer) -> None:
    """PostgreSQL: a write's transaction is held open (its usage counter's row is locked by someone else) while an
    erasure of its run begins. The erasure waits for it, then deletes what it wrote; SQLite's writers take turns
    with the erasure by construction (``BEGIN IMMEDIATE``)."""
    url = postgres_server.create_database()
    store = open_store(url)
    try:
        charge = UsageCharge("resource:acme", "total", 10, 0)
        await store.record("run-a0", (), (), charges=[charge])  # the counter's row exists
        await _write_run(store, "run-a1", "t1", "acme", "ACME-ONE-5521")
        async with await psycopg.AsyncConnection.connect(url) as holder, holder.transaction():
            await holder.execute(
                "SELECT 1 FROM tempo_agents.usage_counters WHERE scope = %s FOR UPDATE", (charge.scope,)
            )
            entry = TranscriptEntry(0, "text-0000", 1, {"role": "assistant", "content": [{"text": "ACME-LATE-5529"}]})
            chunk = ChunkWrite({"type": "text-delta", "runId": "run-a1", "payload": {"text": "ACME-LATE-5529"}})
            writing = asyncio.create_task(store.record("run-a1", [entry], [chunk], charges=[charge]))
            await until(lambda: _waiting_on_locks(url))  # the write is under way, held at the counter
            erasing = asyncio.create_task(store.erase(["run-a1"]))

            async def erasure_settled() -> bool:  # done, or waiting for a lock beside the write
                return erasing.done() or await _waiting_on_locks(url) >= 2

            await until(erasure_settled)
            assert not erasing.done(), "the erasure went ahead of a write under way, which then outlived it"
        await writing  # it began before the erasure: it commits
        assert await erasing > 0
        assert "ACME-LATE-5529" not in store_contents(store)  # nor is anything else of the run (its thread stays)
        assert await store.read_chunks("run-a1") == []
        with pytest.raises(ErasedRunError):
            await store.record("run-a1", [entry], [chunk])
    finally:
        await store.close()


async def test_a_write_that_begins_while_an_erasure_works_finds_the_run_erased(postgres_server: PostgresServer) -> None:
    """PostgreSQL: the erasure is held mid-way (one of the run's journal rows is locked by someone else), after it
    took the run's lock and kept its id; a write of the run begins then and waits for the run's lock. When the
    erasure commits, the write must read the kept id (a read that predates its wait would not) and write nothing."""
    url = postgres_server.create_database()
    store = open_store(url)
    try:
        await _write_run(store, "run-b1", "t1", "acme", "ACME-ONE-6631")
        async with await psycopg.AsyncConnection.connect(url) as holder, holder.transaction():
            await holder.execute("SELECT 1 FROM tempo_agents.journal WHERE run_id = %s FOR UPDATE", ("run-b1",))
            erasing = asyncio.create_task(store.erase(["run-b1"]))
            await until(lambda: _waiting_on_locks(url))  # the erasure holds the run's lock, waits at the row
            chunk = ChunkWrite({"type": "text-delta", "runId": "run-b1", "payload": {"text": "ACME-LATE-6639"}})
            writing = asyncio.create_task(store.record("run-b1", (), [chunk]))

            async def write_waits() -> bool:
                return writing.done() or await _waiting_on_locks(url) >= 2

            await until(write_waits)
            assert not writing.done(), "the write went ahead of an erasure under way"
        assert await erasing > 0
        with pytest.raises(ErasedRunError):
            await writing
        assert "ACME-LATE-6639" not in store_contents(store) and await store.read_chunks("run-b1") == []
    finally:
        await store.close()


async def _busy_runs(store: Store, runs: list[str], secret_runs: set[str], seed: int) -> None:
    """Runs writing at once as runs do: transcript entries, a durable chunk rewritten in place, step outcomes saved
    and forgotten, every record of ``secret_runs`` holding ``SECRET-3391`` and of the others ``OTHER-8820``; records
    of many sizes, so that the file's pages fill, split and are rebuilt around them."""
    sizes = random.Random(seed)

    async def run(run_id: str) -> None:
        said = "SECRET-3391" if run_id in secret_runs else "OTHER-8820"
        for step in range(10):
            pad = "x" * sizes.randint(20, 1500)
            chunk = {"type": "text-delta", "payload": {"text": said + pad[: sizes.randint(1, 300)]}}
            await store.record(
                run_id,
                [TranscriptEntry(step, "text-0000", 0, {"role": "assistant", "content": [{"text": said + pad}]})],
                [ChunkWrite(chunk, key=f"draft-{step % 2}")],
                outcome=SavedOutcome(f"model-step:{step}", {"text": said + pad[: sizes.randint(1, 900)]}),
            )
            if step > 1:
                await store.forget_outcomes_before(run_id, f"model-step:{step - 1}")
            await asyncio.sleep(0)

    await asyncio.gather(*(run(run_id) for run_id in runs))


async def test_an_erased_run_leaves_no_old_copy_in_the_sqlite_files_pages(tmp_path: Path) -> None:
    """Deleting with ``secure_delete`` zeroes the rows a deletion frees, but a page rebuilt around a row earlier may
    keep an old copy of it in its unused space: in these runs, three of the sixteen files kept one after the deletions
    alone. The erasure rewrites the file from its live rows, so none keeps anything of the erased runs."""
    for seed in range(16):
        store = open_store(f"sqlite:///{tmp_path}/store-{seed}.db")
        try:
            runs = [f"run-{seed}-{n:02d}" for n in range(60)]
            secret_runs = set(runs[::3])
            await _busy_runs(store, runs, secret_runs, seed)
            await store.erase(sorted(secret_runs))
            left = store_contents(store)
            assert "SECRET-3391" not in left, f"seed {seed}: an erased run's record is still in the file"
            assert left.count("OTHER-8820") >= 40 * 10  # the other runs' transcripts, at least
        finally:
            await store.close()
