"""What only the PostgreSQL store has: opening by URL, schema versions and ``store migrate``, errors that name
the URL without its password and stay retryable, one listening connection per process, and surviving a
restart of the server. The behaviour both stores share is tests/store/test_contract.py's."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from tempo_agents.activities._running import run_activity
from tempo_agents.cli.main import run_cli
from tempo_agents.errors import ConfigurationError, StoreUnavailableError
from tempo_agents.store import ChunkWrite, open_store
from tempo_agents.store.base import WaitingCall, WaitingChange
from tempo_agents.store.postgres import MIGRATIONS, PostgresStore, journal_reads
from tempo_agents.store.postgres.journal_reads import MOST_READS_TOGETHER
from tempo_agents.store.url import redact
from tests.support.postgres_server import PostgresServer


@pytest.fixture
async def url(postgres_server: PostgresServer) -> AsyncIterator[str]:
    yield postgres_server.create_database()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listeners() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "tempo-agents-pg-listen" and t.is_alive()]


async def test_open_store_takes_both_schemes(url: str) -> None:
    for scheme_url in (url, url.replace("postgresql://", "postgres://", 1)):
        store = open_store(scheme_url)
        assert isinstance(store, PostgresStore)
        assert await store.append_chunks("r", [ChunkWrite({"n": 1}, "k")]) == [0]
        await store.close()


def test_urls_are_shown_without_their_password() -> None:
    assert redact("postgresql://ann:s3cret@db:5432/runs") == "postgresql://ann:***@db:5432/runs"
    assert redact("postgresql://ann@db/runs?password=s3cret&sslmode=require") == (
        "postgresql://ann@db/runs?password=***&sslmode=require"
    )
    with pytest.raises(ConfigurationError) as bad:
        open_store("mysql://ann:s3cret@db/runs")
    assert "s3cret" not in bad.value.message


async def test_an_unreachable_database_is_named_without_its_password_and_stays_retryable() -> None:
    port = closed_port()
    store = PostgresStore(f"postgresql://ann:s3cret@127.0.0.1:{port}/runs", retry_seconds=0.3)
    with pytest.raises(StoreUnavailableError) as failure:
        await store.read_chunks("r")
    message = failure.value.message
    assert message.startswith(f"cannot reach the PostgreSQL store at postgresql://ann:***@127.0.0.1:{port}/runs: ")
    assert "s3cret" not in message
    assert isinstance(failure.value, ConnectionError)

    async def activity_body() -> None:
        await run_activity(store.append_chunks("r", [ChunkWrite({"n": 1})]))

    with pytest.raises(ApplicationError) as activity_failure:
        await ActivityEnvironment().run(activity_body)
    assert not activity_failure.value.non_retryable
    assert activity_failure.value.type == "StoreUnavailableError"
    assert "s3cret" not in str(activity_failure.value)
    await store.close()


async def test_the_schema_is_versioned_and_migrate_is_idempotent(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert await asyncio.to_thread(run_cli, ["store", "migrate", "--store", url]) == 0
    assert capsys.readouterr().out.strip() == f"{url}: schema upgraded from version 0 to {len(MIGRATIONS)}"
    assert await asyncio.to_thread(run_cli, ["store", "migrate", "--store", url]) == 0
    assert capsys.readouterr().out.strip() == f"{url}: schema version {len(MIGRATIONS)}, up to date"
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT version FROM tempo_agents.schema_version").fetchall() == [(len(MIGRATIONS),)]
    store = open_store(url)  # a store opened later finds its tables
    assert await store.append_chunks("r", [ChunkWrite({"n": 1})]) == [0]
    await store.close()


async def test_stores_migrating_at_once_migrate_once(url: str) -> None:
    stores = [PostgresStore(url) for _ in range(4)]
    assert (
        await asyncio.gather(*(s.append_chunks(f"r{i}", [ChunkWrite({"n": i})]) for i, s in enumerate(stores)))
        == [[0]] * 4
    )
    for store in stores:
        await store.close()


async def test_a_newer_schema_is_refused(url: str) -> None:
    store = PostgresStore(url)
    await store.migrate()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE tempo_agents.schema_version SET version = 99")
    with pytest.raises(ConfigurationError, match="schema is at version 99"):
        await store.migrate()
    await store.close()


async def test_one_listening_connection_serves_every_store_and_reader_of_the_process(url: str) -> None:
    before = set(listeners())
    stores = [PostgresStore(url) for _ in range(3)]
    await stores[0].append_chunks("r", [ChunkWrite({"n": 0})])
    waits = [
        asyncio.create_task(store.wait_for_chunks(run_id, 1, timeout=60))
        for store in stores
        for run_id in ("r", "r", "s")
    ]
    await asyncio.sleep(0.2)
    assert len(set(listeners()) - before) == 1
    with psycopg.connect(url, autocommit=True) as conn:  # as another host would: a bare NOTIFY after commit
        conn.execute("INSERT INTO tempo_agents.journal VALUES ('r', 1, NULL, '{}')")
        conn.execute("UPDATE tempo_agents.journal_head SET next_seq = 2 WHERE run_id = 'r'")
        conn.execute("SELECT pg_notify('tempo_agents_journal', '1 r')")
    await asyncio.wait_for(asyncio.gather(*(w for i, w in enumerate(waits) if i % 3 != 2)), 30)
    assert not any(w.done() for i, w in enumerate(waits) if i % 3 == 2), "readers of another run were woken"
    for w in waits:
        w.cancel()
    for store in stores:
        await store.close()
    await asyncio.sleep(1.5)  # the listener notices it has no users left
    assert set(listeners()) - before == set()


async def test_a_tail_waits_without_asking_the_store_and_misses_no_chunk_notified_between_read_and_wait(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the listener listens, a reader that waits right after reading asks the store nothing more: a commit
    after its read is notified to it, and a notification that arrives between its read and its wait (forced here:
    another connection commits and the listener has heard it before the wait begins) answers the wait at once."""
    store = PostgresStore(url)
    checks = 0
    latest_offset = journal_reads.latest_offset

    async def counted(*args: Any) -> int:
        nonlocal checks
        checks += 1
        return await latest_offset(*args)

    monkeypatch.setattr(journal_reads, "latest_offset", counted)
    try:
        await store.append_chunks("r", [ChunkWrite({"n": 0})])
        await store.wait_for_chunks("r", 0, timeout=60)  # starts the listener; its read began before: one check
        assert store._listener is not None
        await asyncio.to_thread(store._listener.ready.wait, 30)
        checks_before = checks
        for n in range(1, 6):
            assert await store.read_chunks("r", n) == []
            with psycopg.connect(url, autocommit=True) as conn:  # as another host: a commit, then its NOTIFY
                conn.execute("INSERT INTO tempo_agents.journal VALUES ('r', %s, NULL, '{}')", (n,))
                conn.execute("UPDATE tempo_agents.journal_head SET next_seq = %s WHERE run_id = 'r'", (n + 1,))
                conn.execute("SELECT pg_notify('tempo_agents_journal', %s)", (f"{n} r",))
            while not store._listener.notified.answers("r", n, 0):  # the listener heard it before the wait
                await asyncio.sleep(0.01)
            await asyncio.wait_for(store.wait_for_chunks("r", n, timeout=60), 20)
        waiting = asyncio.create_task(store.wait_for_chunks("r", 6, timeout=60))
        await asyncio.sleep(0.1)
        assert not waiting.done()
        await store.append_chunks("r", [ChunkWrite({"n": 6})])
        await asyncio.wait_for(waiting, 20)
        assert checks == checks_before, "a wait asked the store for the run's latest offset"
    finally:
        await store.close()


async def test_connections_lost_to_a_server_restart_are_retried(url: str, postgres_server: PostgresServer) -> None:
    store = PostgresStore(url, retry_seconds=30)
    await store.append_chunks("r", [ChunkWrite({"n": 0})])
    with psycopg.connect(postgres_server.url(), autocommit=True) as conn:  # every connection of the store dies
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (url.rsplit("/", 1)[1],),
        )
    assert await store.append_chunks("r", [ChunkWrite({"n": 1})]) == [1]
    waiter = asyncio.create_task(store.wait_for_chunks("r", 2, timeout=60))
    await asyncio.sleep(0.3)
    await store.append_chunks("r", [ChunkWrite({"n": 2})])
    await asyncio.wait_for(waiter, 30)
    assert [e.chunk["n"] for e in await store.read_chunks("r")] == [0, 1, 2]
    await store.close()


async def test_a_store_of_version_1_keeps_waiting_calls_after_its_migration(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:  # a database as the first schema left it, with a sub-agent
        conn.execute("CREATE SCHEMA tempo_agents")
        conn.execute("CREATE TABLE tempo_agents.schema_version (version integer NOT NULL)")
        conn.execute(MIGRATIONS[0])
        conn.execute("INSERT INTO tempo_agents.schema_version (version) VALUES (1)")
        link = '{"type": "data-child-run", "data": {"toolCallId": "c1", "childRunId": "parent-c1"}}'
        conn.execute("INSERT INTO tempo_agents.journal (run_id, seq, key, body) VALUES ('parent', 0, 'k', %s)", (link,))
    store = PostgresStore(url)
    assert await store.migrate() == f"{redact(url)}: schema upgraded from version 1 to {len(MIGRATIONS)}"
    child_wait = WaitingCall(
        run_id="parent-c1", tool_call_id="x", task_queue="q", agent_id="a", thread_id=None, resource_id=None,
        call={"toolCallId": "x"}, suspended_at=1.0,
    )  # fmt: skip
    await store.record("parent-c1", [], [], waiting=WaitingChange(waits=[child_wait]))
    assert (await store.waiting_runs("q")).runs == []  # the link written before the migration was found
    assert await store.waiting_kept_since() > 0
    await store.close()


async def test_reads_asked_for_in_one_turn_of_the_loop_are_one_query_with_each_reads_answer(url: str) -> None:
    """Tails woken together each ask for their run's new chunks: the store sends one query for all of them, and each
    read gets what it would have got alone (its run, from its offset, at most its limit, in order), the same run
    read twice from two offsets included. A read alone, and a read after that turn, are queries of their own; more
    reads than one query makes go as a second query."""
    store = PostgresStore(url)
    queries = 0
    run = store._db.run

    async def counted(op: Any, **options: Any) -> Any:
        nonlocal queries
        queries += 1
        return await run(op, **options)

    try:
        for number in range(5):
            await store.append_chunks(f"run-{number}", [ChunkWrite({"n": n, "run": number}) for n in range(number + 3)])
        alone = {(r, o, n): await store.read_chunks(r, o, n) for r, o, n in _READS}
        store._db.run = counted  # type: ignore[method-assign]
        together = await asyncio.gather(*(store.read_chunks(r, o, n) for r, o, n in _READS))
        assert queries == 1
        assert list(together) == [alone[read] for read in _READS]
        assert [entry.chunk for entry in together[0]] == [{"n": 1, "run": 0}, {"n": 2, "run": 0}]
        assert together[2] == [] and [entry.offset for entry in together[4]] == [4, 5]
        assert [entry.offset for entry in await store.read_chunks("run-4", 6)] == [6] and queries == 2
        many = await asyncio.gather(*(store.read_chunks(f"run-{n % 5}", 2) for n in range(MOST_READS_TOGETHER + 1)))
        assert queries == 4  # one query of the most it makes, one of the read left over
        assert [[entry.offset for entry in found] for found in many[:5]] == [
            [2],
            [2, 3],
            [2, 3, 4],
            [2, 3, 4, 5],
            [2, 3, 4, 5, 6],
        ]
        assert many[MOST_READS_TOGETHER] == many[0]
    finally:
        await store.close()


_READS = [("run-0", 1, 1000), ("run-3", 0, 2), ("run-1", 9, 1000), ("run-3", 4, 1000), ("run-4", 4, 2)]
"""(run, offset, limit): a run read from the middle, with a limit, past its end, twice from two offsets."""


async def test_a_reader_cancelled_while_its_reads_query_runs_leaves_the_others_their_answers(url: str) -> None:
    """One tail of several goes away (its stream's client left) while the query it joined is under way: the others
    still get their chunks; a query that fails fails each read that joined it, with the store's error."""
    store = PostgresStore(url)
    try:
        for number in range(3):
            await store.append_chunks(f"run-{number}", [ChunkWrite({"n": n}) for n in range(2)])
        reads = [asyncio.create_task(store.read_chunks(f"run-{number}")) for number in range(3)]
        await asyncio.sleep(0)  # every read has joined the turn's query
        reads[1].cancel()
        assert [len(await reads[0]), len(await reads[2])] == [2, 2]
        assert reads[1].cancelled()
        await store.close()
        failed = await asyncio.gather(*(store.read_chunks(f"run-{n}") for n in range(3)), return_exceptions=True)
        assert [str(error) for error in failed] == [f"the store {store.display_url} is closed"] * 3, failed
    finally:
        await store.close()
