"""The audit chain in both stores: appended in order with each record's hash covering the one before, listed with
filters and a cursor (an intent shown with its completion's outcome), written in one transaction with a change,
never forked by two processes appending at once, and verification finding a deleted, an altered and an inserted
record."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tempo_agents.audit import (
    DONE,
    GENESIS,
    PENDING,
    REFUSED,
    AuditEntry,
    AuditQuery,
    ChainWalk,
    chain_next,
    read_chain,
    verify_chain,
)
from tempo_agents.store import Store
from tempo_agents.store.audit_rows import row_of
from tempo_agents.store.base import SavedOutcome
from tests.support.store_contents import tamper


def entry(action: str, target: str, **fields: object) -> AuditEntry:
    return AuditEntry(action=action, target=target, outcome=fields.pop("outcome", DONE), **fields)  # type: ignore[arg-type]


async def walk(store: Store) -> ChainWalk:
    return await verify_chain(read_chain(store.audit_chain, page=2))  # small pages: the walk crosses pages


async def test_records_chain_in_order_and_list_newest_first_with_filters_and_a_cursor(store: Store) -> None:
    first = await store.append_audit([entry("cancel", "r1", principal="alice", tenant="acme")])
    more = await store.append_audit(
        [
            entry("steer", "r2", principal="bob", tenant="globex"),
            entry("cancel", "r3", principal="alice", tenant="globex"),
        ]
    )
    assert [r.seq for r in first + more] == [1, 2, 3]
    assert first[0].prev_hash == GENESIS
    assert more[0].prev_hash == first[0].hash and more[1].prev_hash == more[0].hash

    page = await store.audit_actions(AuditQuery(limit=2))
    assert [a.record.entry.target for a in page] == ["r3", "r2"]
    rest = await store.audit_actions(AuditQuery(limit=2, before=page[-1].record.seq))
    assert [a.record.entry.target for a in rest] == ["r1"]
    by_alice = await store.audit_actions(AuditQuery(principal="alice"))
    assert [a.record.entry.target for a in by_alice] == ["r3", "r1"]
    assert [a.record.entry.target for a in await store.audit_actions(AuditQuery(tenant="globex"))] == ["r3", "r2"]
    assert [a.record.entry.target for a in await store.audit_actions(AuditQuery(action="steer"))] == ["r2"]
    assert [a.record.entry.target for a in await store.audit_actions(AuditQuery(target="r1"))] == ["r1"]
    seen = await store.audit_actions(AuditQuery(tenants={"acme"}))
    assert [a.record.entry.target for a in seen] == ["r1"]
    assert await store.audit_actions(AuditQuery(tenants=set())) == []
    second_at = more[0].entry.at
    since = await store.audit_actions(AuditQuery(since=second_at))
    assert [a.record.entry.target for a in since] == ["r3", "r2"]
    until = await store.audit_actions(AuditQuery(until=second_at))
    assert [a.record.entry.target for a in until] == ["r1"]
    assert (await walk(store)).broken is None


async def test_an_intent_is_listed_with_its_completions_outcome(store: Store) -> None:
    intent = entry("cancel", "r1", outcome=PENDING, principal="alice")
    await store.append_audit([intent])
    [waiting] = await store.audit_actions(AuditQuery())
    assert waiting.wire()["outcome"] == "pending" and waiting.wire()["completedAt"] is None
    await store.append_audit(
        [entry("cancel", "r1", outcome=REFUSED, status=409, code="run_closed", completes=intent.id)]
    )
    [shown] = await store.audit_actions(AuditQuery())
    wire = shown.wire()
    assert (wire["outcome"], wire["status"], wire["code"], wire["principal"]) == ("refused", 409, "run_closed", "alice")
    assert wire["completedAt"] is not None


async def test_a_change_and_its_record_commit_together(store: Store) -> None:
    intent = entry("answer-link", "r1/call-1", outcome=PENDING)
    await store.append_audit([intent])
    done = entry("answer-link", "r1/call-1", principal="alice", completes=intent.id)
    await store.record("r1", [], [], SavedOutcome("answer-link-used:n1", {"principal": "alice"}), audit=[done])
    assert await store.saved_outcome("r1", "answer-link-used:n1") == {"principal": "alice"}
    [shown] = await store.audit_actions(AuditQuery())
    assert shown.wire()["principal"] == "alice" and shown.wire()["outcome"] == "done"

    clash = AuditEntry(action="answer-link", target="r1/call-1", outcome=DONE, id=intent.id)  # an id already used
    with pytest.raises(Exception):  # noqa: B017 (each store's own integrity error)
        await store.record("r2", [], [], SavedOutcome("answer-link-used:n2", {"principal": "bob"}), audit=[clash])
    assert await store.saved_outcome("r2", "answer-link-used:n2") is None  # the change was rolled back with it


_APPENDER = """
import asyncio, sys
from tempo_agents.audit import AuditEntry
from tempo_agents.store import open_store

async def main():
    store = open_store(sys.argv[1])
    for n in range(int(sys.argv[3])):
        await store.append_audit([AuditEntry(action="steer", target=f"{sys.argv[2]}-{n}", outcome="done")])
    await store.close()

asyncio.run(main())
"""


async def test_two_processes_appending_at_once_keep_one_chain(store: Store, store_url: str) -> None:
    appenders = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(_APPENDER), store_url, name, "40"],
            cwd=Path(__file__).parents[2],
        )
        for name in ("a", "b")
    ]
    for process in appenders:
        assert await asyncio.to_thread(process.wait, 120) == 0
    records = [r async for r in read_chain(store.audit_chain)]
    assert [r.seq for r in records] == list(range(1, 81))
    assert {r.entry.target for r in records} == {f"{name}-{n}" for name in "ab" for n in range(40)}
    assert (await walk(store)).broken is None


async def _five(store: Store) -> None:
    await store.append_audit([entry("cancel", f"r{n}", principal="alice") for n in range(1, 6)])


async def test_verify_finds_a_deleted_record(store: Store, store_url: str) -> None:
    await _five(store)
    await tamper(store_url, [("DELETE FROM audit WHERE seq = ?", (3,))])
    broken = (await walk(store)).broken
    assert broken is not None and broken.kind == "deleted" and broken.seq == 4
    assert "record 3 was deleted" in broken.message


async def test_verify_finds_an_altered_record(store: Store, store_url: str) -> None:
    await _five(store)
    await tamper(store_url, [("UPDATE audit SET principal = ? WHERE seq = ?", ("mallory", 2))])
    broken = (await walk(store)).broken
    assert broken is not None and (broken.kind, broken.seq) == ("altered", 2)


async def test_verify_finds_an_inserted_record(store: Store, store_url: str) -> None:
    await _five(store)
    records = [r async for r in read_chain(store.audit_chain)]
    forged = chain_next(3, records[1].hash, entry("cancel", "r-forged", principal="mallory"))  # hashed correctly
    shift = [
        ("UPDATE audit SET seq = seq + 100 WHERE seq >= ?", (3,)),
        ("UPDATE audit SET seq = seq - 99 WHERE seq >= ?", (103,)),
    ]
    await tamper(store_url, [*shift, (f"INSERT INTO audit VALUES ({', '.join(['?'] * 15)})", row_of(forged))])
    broken = (await walk(store)).broken
    assert broken is not None and (broken.kind, broken.seq) == ("inserted", 3)
