"""The PostgreSQL store's calls that wait for a person: kept with the chunk that says so, listed a page of runs at
a time, forgotten (with their answer kept) once answered; and the child runs' links that keep children's waits off
the lists."""

from __future__ import annotations

from collections.abc import Sequence

from tempo_agents.store.base import (
    ANSWERED_COLUMNS,
    ANSWERED_ORDER,
    WAITING_COLUMNS,
    WAITING_ORDER,
    AnsweredCalls,
    ChunkWrite,
    GivenAnswer,
    ReaddressedCall,
    Resources,
    WaitingChange,
    WaitingRuns,
    answered_call,
    child_runs_in,
    ends_run,
    first_runs,
    group_waiting,
    to_json,
    waiting_filter,
)
from tempo_agents.store.postgres.connections import Conn, PostgresConnections
from tempo_agents.store.postgres.failures import Attempt
from tempo_agents.store.sealed_columns import ANSWERED_CALLS, SealedColumns

__all__ = ["answered_calls", "change_waiting", "forget_waiting", "waiting_kept_since", "waiting_runs"]

_WAITING_SLACK = 16
"""Waiting calls read past a page's end at first, for runs that wait on several calls."""
_WAITING_UPDATED = ("round", "task_queue", "agent_id", "thread_id", "resource_id", "suspended_at", "body")


async def change_waiting(
    conn: Conn, columns: SealedColumns, run_id: str, writes: Sequence[ChunkWrite], waiting: WaitingChange | None
) -> None:
    """The waiting calls' part of :meth:`~tempo_agents.store.base.Store.record`, inside the caller's transaction."""
    async with conn.cursor() as cursor:
        children = child_runs_in(writes)
        if children:
            await cursor.executemany(
                "INSERT INTO tempo_agents.child_runs (run_id) VALUES (%s) ON CONFLICT DO NOTHING",
                [(child,) for child in children],
            )
        if ends_run(writes):
            await cursor.execute("DELETE FROM tempo_agents.waiting_calls WHERE run_id = %s", (run_id,))
            return
        if waiting is None:
            return
        if waiting.answered:
            await cursor.execute(
                "DELETE FROM tempo_agents.waiting_calls WHERE run_id = %s AND tool_call_id = ANY(%s)",
                (run_id, list(waiting.answered)),
            )
        if waiting.waits:
            await cursor.executemany(
                f"INSERT INTO tempo_agents.waiting_calls ({WAITING_COLUMNS}) VALUES ({', '.join(['%s'] * 9)}) "
                "ON CONFLICT (run_id, tool_call_id) DO UPDATE SET "
                + ", ".join(f"{column} = excluded.{column}" for column in _WAITING_UPDATED),
                [columns.waiting_row(call) for call in waiting.waits],
            )
    for call in waiting.readdressed:
        await _readdress(conn, columns, run_id, call)


async def _readdress(conn: Conn, columns: SealedColumns, run_id: str, call: ReaddressedCall) -> None:
    """Patch a waiting call's stored body with its new approvers, if it still waits in that round."""
    where = "run_id = %s AND tool_call_id = %s AND round = %s"
    cursor = await conn.execute(
        f"SELECT body FROM tempo_agents.waiting_calls WHERE {where} FOR UPDATE", (run_id, call.tool_call_id, call.round)
    )
    found = await cursor.fetchone()
    if found is None:
        return
    await conn.execute(
        f"UPDATE tempo_agents.waiting_calls SET body = %s WHERE {where}",
        (columns.readdressed_body(run_id, call, found[0]), run_id, call.tool_call_id, call.round),
    )


async def waiting_runs(
    db: PostgresConnections,
    task_queue: str,
    *,
    agent_id: str | None,
    thread_id: str | None,
    resource_id: Resources,
    limit: int | None,
    skip: int,
) -> WaitingRuns:
    clauses, values = waiting_filter("%s", task_queue, agent_id, thread_id, resource_id)
    where = " AND ".join(clauses) + " AND run_id NOT IN (SELECT run_id FROM tempo_agents.child_runs)"

    async def op(conn: Conn, attempt: Attempt) -> WaitingRuns:
        async with conn.transaction():  # one snapshot: the total and the page agree
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            cursor = await conn.execute(
                f"SELECT COUNT(DISTINCT run_id) FROM tempo_agents.waiting_calls WHERE {where}", values
            )
            counted = await cursor.fetchone()
            wanted = None if limit is None else skip + limit
            read = None if wanted is None else wanted + _WAITING_SLACK
            while True:  # the calls up to the page's end, more when runs wait on several calls
                cursor = await conn.execute(
                    f"SELECT run_id FROM tempo_agents.waiting_calls WHERE {where} {WAITING_ORDER} LIMIT %s",
                    [*values, read],
                )
                calls = [row[0] for row in await cursor.fetchall()]
                ids = first_runs(calls, wanted)
                if read is None or len(calls) < read or wanted is None or len(ids) >= wanted:
                    break
                read *= 4
            ids = ids[skip:]
            cursor = await conn.execute(
                f"SELECT {WAITING_COLUMNS} FROM tempo_agents.waiting_calls WHERE run_id = ANY(%s) "
                "ORDER BY suspended_at, tool_call_id",
                (ids,),
            )
            rows = await cursor.fetchall()
        opened = db.columns.opened_waiting_rows(rows)
        return WaitingRuns(runs=group_waiting(ids, opened), total=0 if counted is None else int(counted[0]))

    return await db.run(op)


async def forget_waiting(
    db: PostgresConnections, run_id: str, tool_call_id: str, round: int, answer: GivenAnswer | None
) -> None:
    async def op(conn: Conn, attempt: Attempt) -> None:
        async with conn.transaction():
            if answer is not None:
                await _keep_answer(conn, db.columns, run_id, tool_call_id, round, answer)
            await conn.execute(
                "DELETE FROM tempo_agents.waiting_calls WHERE run_id = %s AND tool_call_id = %s AND round <= %s",
                (run_id, tool_call_id, round),
            )

    await db.run(op)


async def _keep_answer(
    conn: Conn, columns: SealedColumns, run_id: str, tool_call_id: str, round: int, answer: GivenAnswer
) -> None:
    """Keep the answer with where its call waited (inside the caller's transaction), sealed bound to its round."""
    cursor = await conn.execute(
        "SELECT round FROM tempo_agents.waiting_calls WHERE run_id = %s AND tool_call_id = %s AND round <= %s"
        " FOR UPDATE",
        (run_id, tool_call_id, round),
    )
    waited = await cursor.fetchone()
    if waited is None:
        return
    body = columns.seal(ANSWERED_CALLS, "body", (run_id, tool_call_id, waited[0]), to_json(answer.answer))
    await conn.execute(
        "INSERT INTO tempo_agents.answered_calls (run_id, tool_call_id, round, task_queue, agent_id,"
        " thread_id, resource_id, answered_at, body) SELECT run_id, tool_call_id, round, task_queue,"
        " agent_id, thread_id, resource_id, %s, %s FROM tempo_agents.waiting_calls"
        " WHERE run_id = %s AND tool_call_id = %s AND round = %s ON CONFLICT DO NOTHING",
        (answer.answered_at, body, run_id, tool_call_id, waited[0]),
    )


async def answered_calls(
    db: PostgresConnections,
    task_queue: str,
    *,
    agent_id: str | None,
    resource_id: Resources = None,
    limit: int | None,
    skip: int,
) -> AnsweredCalls:
    clauses, values = waiting_filter("%s", task_queue, agent_id, None, resource_id)
    where = " AND ".join(clauses) + " AND run_id NOT IN (SELECT run_id FROM tempo_agents.child_runs)"

    async def op(conn: Conn, attempt: Attempt) -> AnsweredCalls:
        async with conn.transaction():  # one snapshot: the total and the page agree
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            cursor = await conn.execute(f"SELECT COUNT(*) FROM tempo_agents.answered_calls WHERE {where}", values)
            counted = await cursor.fetchone()
            cursor = await conn.execute(
                f"SELECT {ANSWERED_COLUMNS} FROM tempo_agents.answered_calls WHERE {where} {ANSWERED_ORDER}"
                " LIMIT %s OFFSET %s",
                [*values, limit, skip],
            )
            rows = await cursor.fetchall()
        total = 0 if counted is None else int(counted[0])
        opened = db.columns.opened_answered_rows(rows)
        return AnsweredCalls(answers=[answered_call(row) for row in opened], total=total)

    return await db.run(op)


async def waiting_kept_since(db: PostgresConnections) -> float:
    async def op(conn: Conn, attempt: Attempt) -> float:
        cursor = await conn.execute("SELECT value FROM tempo_agents.store_facts WHERE name = 'waiting_calls_since'")
        row = await cursor.fetchone()
        assert row is not None
        return float(row[0])

    return await db.run(op)
