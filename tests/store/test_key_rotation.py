"""Sealed store values under rotating keys, on SQLite and PostgreSQL: ``store rotate-keys`` moves every row from k1
to k2 (killed midway and run again), a row under a key no longer configured fails naming it, a value copied into
another row fails to open, and a worker's write during rotation is never overwritten."""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import sqlite3
import subprocess
from collections.abc import Sequence
from typing import Any

import psycopg
import pytest

from tempo_agents.encryption import (
    KEYS_ENVIRONMENT_VARIABLE,
    EncryptionKey,
    TamperedError,
    UnknownKeyError,
    keyring_of,
)
from tempo_agents.store import ChunkWrite, SQLiteStore, Store, TranscriptEntry, key_rotation, open_store
from tempo_agents.store.base import GivenAnswer, SavedOutcome, WaitingCall, WaitingChange
from tempo_agents.store.key_rotation import KeyRotatingStore, RotatedTable
from tempo_agents.store.postgres import PostgresStore
from tempo_agents.store.postgres.key_rotation import PostgresRotation
from tempo_agents.store.sqlite.key_rotation import SQLiteRotation
from tests.support.cli_processes import CLI, cli

K1 = EncryptionKey("k1", bytes([1]) * 32)
K2 = EncryptionKey("k2", bytes([2]) * 32)
CHUNKS = 600
"""Journal rows: more than a batch."""
MANY_CHUNKS = 4000
"""Enough journal rows that a rotation one row per batch (a few hundred a second) still runs when it is killed."""


def keys_text(*keys: EncryptionKey) -> str:
    return ",".join(f"{key.id}:{base64.b64encode(key.secret).decode()}" for key in keys)


def stored_values(url: str) -> list[tuple[str, str]]:
    """``(table, value)`` of every sealed column's value, read from the database directly."""
    queries = [
        ("journal", "SELECT body FROM {}journal"),
        ("transcript", "SELECT body FROM {}transcript"),
        ("transcript", "SELECT memory_body FROM {}transcript WHERE memory_body IS NOT NULL"),
        ("outcomes", "SELECT body FROM {}outcomes"),
        ("thread_messages", "SELECT body FROM {}thread_messages"),
        ("thread_state", "SELECT body FROM {}thread_state"),
        ("waiting_calls", "SELECT body FROM {}waiting_calls"),
        ("answered_calls", "SELECT body FROM {}answered_calls"),
    ]
    found: list[tuple[str, str]] = []
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as db:
            for table, query in queries:
                found += [(table, row[0]) for row in db.execute(query.format(""))]
        return found
    with psycopg.connect(url) as conn:
        for table, query in queries:
            found += [(table, row[0]) for row in conn.execute(query.format("tempo_agents.")).fetchall()]
    return found


def key_ids(url: str) -> dict[str, int]:
    """How many stored values are under each key id ("clear": not sealed)."""
    counted: dict[str, int] = {}
    for _, value in stored_values(url):
        key = value[1:].partition(":")[0] if value.startswith("~") else "clear"
        counted[key] = counted.get(key, 0) + 1
    return counted


def waiting(run_id: str, call_id: str) -> WaitingCall:
    return WaitingCall(
        run_id=run_id,
        tool_call_id=call_id,
        task_queue="q",
        agent_id="clerk",
        thread_id="t",
        resource_id="acme",
        call={"toolCallId": call_id, "args": {"iban": "DE-secret"}, "round": 0},
        suspended_at=1.0,
    )


async def fill(store: Store, chunks: int = CHUNKS) -> None:
    """One of every sealed value, and many journal chunks."""
    await store.record(
        "r",
        [TranscriptEntry(0, "user", 0, {"role": "user", "content": "hello"}, {"role": "user", "content": "hi"})],
        [ChunkWrite({"type": "start"}, "start"), *(ChunkWrite({"type": "text-delta", "n": n}) for n in range(chunks))],
        SavedOutcome("step-0", {"text": "answer"}),
        WaitingChange(waits=[waiting("r", "c1"), waiting("r", "c2")]),
    )
    await store.saved_or_counted("r", "call-0", "call-0:starts")  # a count of starts: kept in clear
    await store.forget_waiting("r", "c1", 0, GivenAnswer(2.0, {"approved": True, "reason": "fine"}))
    await store.append_thread_messages("t", "acme", "r", [{"role": "user", "content": "hello"}])
    await store.set_thread_state("t", "tasks", [{"title": "book a flight"}])


async def read_back(store: Store) -> list[Any]:
    """Everything :func:`fill` wrote, as the store reads it."""
    runs = await store.waiting_runs("q")
    answers = await store.answered_calls("q")
    return [
        await store.read_chunks("r", 0, MANY_CHUNKS + 10),
        await store.get_transcript("r"),
        await store.saved_outcome("r", "step-0"),
        await store.saved_outcome("r", "call-0:starts"),
        [[call.call for call in calls] for calls in runs.runs],
        [answer.answer for answer in answers.answers],
        await store.get_thread_messages("t", "acme"),
        await store.get_thread_state("t", "tasks"),
    ]


def opened(url: str, *keys: EncryptionKey) -> SQLiteStore | PostgresStore:
    store = open_store(url, keyring=keyring_of(keys))
    assert isinstance(store, SQLiteStore | PostgresStore)
    return store


async def test_rotation_moves_every_value_to_the_newest_key_and_they_still_read(store_url: str) -> None:
    first = opened(store_url, K1)
    await fill(first)
    written = await read_back(first)
    await first.close()
    assert set(key_ids(store_url)) == {"k1", "clear"}
    assert key_ids(store_url)["clear"] == 1  # the count of starts

    rotating = opened(store_url, K2, K1)
    assert isinstance(rotating, KeyRotatingStore)
    lines: list[RotatedTable] = []
    report = await rotating.rotate_keys(batch_size=50, progress=lambda table: lines.append(table))
    await rotating.close()
    resealed = {table.table: table.resealed for table in report}
    assert resealed["journal"] == CHUNKS + 1
    assert resealed["transcript"] == 2 and resealed["outcomes"] == 1 and resealed["answered_calls"] == 1
    assert [line for line in lines if line.table == "journal"][-1].done
    assert set(key_ids(store_url)) == {"k2", "clear"}

    newest_only = opened(store_url, K2)
    assert await read_back(newest_only) == written
    again = await newest_only.rotate_keys()  # nothing left to do
    assert sum(table.resealed for table in again) == 0
    await newest_only.close()


async def test_rows_written_before_encryption_still_read_and_rotation_seals_them(store_url: str) -> None:
    clear = _clear_store(store_url)
    await fill(clear)
    written = await read_back(clear)
    await clear.close()
    assert set(key_ids(store_url)) == {"clear"}

    sealed = opened(store_url, K1)
    assert await read_back(sealed) == written
    await sealed.rotate_keys()
    assert set(key_ids(store_url)) == {"k1", "clear"}
    assert await read_back(sealed) == written
    await sealed.close()


def _clear_store(url: str) -> SQLiteStore | PostgresStore:
    """A store without keys whatever the environment says (as one from before encryption)."""
    if url.startswith("sqlite:///"):
        return SQLiteStore(url.removeprefix("sqlite:///"))
    return PostgresStore(url)


async def test_a_row_under_a_removed_key_fails_naming_the_key(store_url: str) -> None:
    first = opened(store_url, K1)
    await fill(first)
    await first.close()
    without_k1 = opened(store_url, K2)
    with pytest.raises(UnknownKeyError) as raised:
        await without_k1.read_chunks("r")
    assert raised.value.key_id == "k1" and "'k1'" in str(raised.value)
    with pytest.raises(UnknownKeyError, match="'k1'"):
        await without_k1.get_thread_messages("t", "acme")
    code, stdout, stderr = await cli(
        "store",
        "rotate-keys",
        "--store",
        store_url,
        env={**os.environ, KEYS_ENVIRONMENT_VARIABLE: keys_text(K2)},
        timeout=300,
    )
    assert code == 1 and "'k1'" in stderr, (stdout, stderr)
    await without_k1.close()


async def test_a_value_copied_into_another_row_does_not_open(store_url: str) -> None:
    store = opened(store_url, K1)
    await fill(store)
    if store_url.startswith("sqlite:///"):
        with sqlite3.connect(store_url.removeprefix("sqlite:///")) as db:
            db.execute("UPDATE journal SET body = (SELECT body FROM journal WHERE seq = 1) WHERE seq = 2")
    else:
        with psycopg.connect(store_url) as conn:
            conn.execute(
                "UPDATE tempo_agents.journal SET body = (SELECT body FROM tempo_agents.journal WHERE seq = 1) "
                "WHERE seq = 2"
            )
    assert (await store.read_chunks("r", 1, 1))[0].chunk == {"type": "text-delta", "n": 0}
    with pytest.raises(TamperedError):
        await store.read_chunks("r", 2, 1)
    await store.close()


async def test_rotation_killed_midway_and_run_again_finishes(store_url: str) -> None:
    first = opened(store_url, K1)
    await fill(first, MANY_CHUNKS)
    written = await read_back(first)
    await first.close()
    env = {**os.environ, KEYS_ENVIRONMENT_VARIABLE: keys_text(K2, K1)}
    process = subprocess.Popen(
        [*CLI, "store", "rotate-keys", "--store", store_url, "--batch-size", "1"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    line = await asyncio.wait_for(asyncio.to_thread(process.stdout.readline), 300)  # a slow start under load
    assert line.startswith("journal: 1 value(s)"), line
    process.send_signal(signal.SIGKILL)  # a batch of the journal is committed, most are not
    await asyncio.to_thread(process.wait, 60)
    midway = key_ids(store_url)
    assert midway.get("k2", 0) >= 1 and midway.get("k1", 0) > 0, midway

    code, stdout, stderr = await cli(
        "store", "rotate-keys", "--store", store_url, "--batch-size", "100", env=env, timeout=300
    )
    assert code == 0, stderr
    assert "journal: " in stdout and "re-encrypted under k2" in stdout.splitlines()[-1]
    assert set(key_ids(store_url)) == {"k2", "clear"}
    newest_only = opened(store_url, K2)
    assert await read_back(newest_only) == written
    await newest_only.close()


class _WorkerWritesMeanwhile:
    """A rotation backend that lets a worker rewrite a row between reading the stale rows and swapping them."""

    def __init__(self, inner: Any, worker: Store) -> None:
        self.inner = inner
        self.worker = worker
        self.rewritten = False

    async def stale_rows(self, table: Any, after: Any, current: str, limit: int) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = await self.inner.stale_rows(table, after, current, limit)
        if table.name == "journal" and not self.rewritten:
            await self.worker.append_chunks("r", [ChunkWrite({"type": "start", "again": True}, "start")])
            self.rewritten = True
        return rows

    async def swap(self, table: Any, swaps: Sequence[Any]) -> int:
        applied: int = await self.inner.swap(table, swaps)
        return applied


async def test_a_workers_write_during_rotation_is_kept(store_url: str) -> None:
    first = opened(store_url, K1)
    await fill(first)
    await first.close()
    rotating = opened(store_url, K2, K1)
    worker = opened(store_url, K1)  # a worker not yet given the new key
    backend = _WorkerWritesMeanwhile(_backend_of(rotating), worker)
    report = await key_rotation.rotate_keys(_columns_of(rotating), backend, batch_size=1000)
    journal = next(table for table in report if table.table == "journal")
    assert journal.changed_meanwhile == 1 and journal.resealed == CHUNKS
    assert (await rotating.read_chunks("r", 0, 1))[0].chunk == {"type": "start", "again": True}
    assert key_ids(store_url)["k1"] == 1  # the worker's write, under the key it has, for the next rotation
    await rotating.rotate_keys()
    assert set(key_ids(store_url)) == {"k2", "clear"}
    for store in (rotating, worker):
        await store.close()


def _columns_of(store: Store) -> Any:
    assert isinstance(store, SQLiteStore | PostgresStore)
    return store._db.columns


def _backend_of(store: Store) -> Any:
    if isinstance(store, SQLiteStore):
        return SQLiteRotation(store._db)
    assert isinstance(store, PostgresStore)
    return PostgresRotation(store._db)
