"""The SQLite store's calls that wait for a person: kept with the chunk that says so, listed a page of runs at a
time, forgotten (with their answer kept) once answered; and the child runs' links that keep children's waits off
the lists."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from tempo_agents.store import base  # the waiting-call helpers, as base.<name>
from tempo_agents.store.base import ChunkWrite, Resources, to_json
from tempo_agents.store.sealed_columns import ANSWERED_CALLS, SealedColumns
from tempo_agents.store.sqlite.connections import SQLiteConnections
from tempo_agents.store.sqlite.transactions import immediate

__all__ = ["answered_calls", "change_waiting", "forget_waiting", "waiting_kept_since", "waiting_runs"]


def change_waiting(
    db: sqlite3.Connection,
    columns: SealedColumns,
    run_id: str,
    writes: Sequence[ChunkWrite],
    waiting: base.WaitingChange | None,
) -> None:
    """The waiting calls' part of :meth:`~tempo_agents.store.base.Store.record`, inside the caller's transaction."""
    db.executemany("INSERT OR IGNORE INTO child_runs (run_id) VALUES (?)", [(c,) for c in base.child_runs_in(writes)])
    if base.ends_run(writes):
        db.execute("DELETE FROM waiting_calls WHERE run_id = ?", (run_id,))
        return
    if waiting is None:
        return
    db.executemany(
        "DELETE FROM waiting_calls WHERE run_id = ? AND tool_call_id = ?", [(run_id, c) for c in waiting.answered]
    )
    db.executemany(
        f"INSERT OR REPLACE INTO waiting_calls ({base.WAITING_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [columns.waiting_row(call) for call in waiting.waits],
    )
    for call in waiting.readdressed:
        _readdress(db, columns, run_id, call)


def _readdress(db: sqlite3.Connection, columns: SealedColumns, run_id: str, call: base.ReaddressedCall) -> None:
    """Patch a waiting call's stored body with its new approvers, if it still waits in that round."""
    where = "run_id = ? AND tool_call_id = ? AND round = ?"
    row = db.execute(f"SELECT body FROM waiting_calls WHERE {where}", (run_id, call.tool_call_id, call.round))
    found = row.fetchone()
    if found is None:
        return
    db.execute(
        f"UPDATE waiting_calls SET body = ? WHERE {where}",
        (columns.readdressed_body(run_id, call, found[0]), run_id, call.tool_call_id, call.round),
    )


async def waiting_runs(
    connections: SQLiteConnections,
    task_queue: str,
    *,
    agent_id: str | None,
    thread_id: str | None,
    resource_id: Resources,
    limit: int | None,
    skip: int,
) -> base.WaitingRuns:
    clauses, values = base.waiting_filter("?", task_queue, agent_id, thread_id, resource_id)
    where = " AND ".join(clauses) + " AND run_id NOT IN (SELECT run_id FROM child_runs)"

    def work(db: sqlite3.Connection) -> base.WaitingRuns:
        db.execute("BEGIN")
        try:
            total = int(db.execute(f"SELECT COUNT(DISTINCT run_id) FROM waiting_calls WHERE {where}", values)
                        .fetchone()[0])  # fmt: skip
            calls = db.execute(f"SELECT run_id FROM waiting_calls WHERE {where} {base.WAITING_ORDER}", values)
            wanted = None if limit is None else skip + limit
            ids = base.first_runs((row[0] for row in calls), wanted)[skip:]  # reads the calls up to the page's end
            calls.close()
            rows = db.execute(
                f"SELECT {base.WAITING_COLUMNS} FROM waiting_calls WHERE run_id IN (SELECT value FROM json_each(?))"
                " ORDER BY suspended_at, tool_call_id",
                (to_json(ids),),
            ).fetchall()
        finally:
            db.execute("COMMIT")
        opened = connections.columns.opened_waiting_rows(rows)
        return base.WaitingRuns(runs=base.group_waiting(ids, opened), total=total)

    return await connections.read(work)


async def forget_waiting(
    connections: SQLiteConnections, run_id: str, tool_call_id: str, round: int, answer: base.GivenAnswer | None
) -> None:
    def work(db: sqlite3.Connection) -> None:
        with immediate(db):
            if answer is not None:
                _keep_answer(db, connections.columns, run_id, tool_call_id, round, answer)
            db.execute(
                "DELETE FROM waiting_calls WHERE run_id = ? AND tool_call_id = ? AND round <= ?",
                (run_id, tool_call_id, round),
            )

    await connections.run(work)


def _keep_answer(
    db: sqlite3.Connection, columns: SealedColumns, run_id: str, tool_call_id: str, round: int, answer: base.GivenAnswer
) -> None:
    """Keep the answer with where its call waited (inside the caller's transaction), sealed bound to its round."""
    waited = db.execute(
        "SELECT round FROM waiting_calls WHERE run_id = ? AND tool_call_id = ? AND round <= ?",
        (run_id, tool_call_id, round),
    ).fetchone()
    if waited is None:
        return
    body = columns.seal(ANSWERED_CALLS, "body", (run_id, tool_call_id, waited[0]), to_json(answer.answer))
    db.execute(
        "INSERT OR IGNORE INTO answered_calls (run_id, tool_call_id, round, task_queue, agent_id,"
        " thread_id, resource_id, answered_at, body) SELECT run_id, tool_call_id, round, task_queue,"
        " agent_id, thread_id, resource_id, ?, ? FROM waiting_calls"
        " WHERE run_id = ? AND tool_call_id = ? AND round = ?",
        (answer.answered_at, body, run_id, tool_call_id, waited[0]),
    )


async def answered_calls(
    connections: SQLiteConnections,
    task_queue: str,
    *,
    agent_id: str | None,
    resource_id: Resources = None,
    limit: int | None,
    skip: int,
) -> base.AnsweredCalls:
    clauses, values = base.waiting_filter("?", task_queue, agent_id, None, resource_id)
    where = " AND ".join(clauses) + " AND run_id NOT IN (SELECT run_id FROM child_runs)"

    def work(db: sqlite3.Connection) -> base.AnsweredCalls:
        db.execute("BEGIN")
        try:
            total = int(db.execute(f"SELECT COUNT(*) FROM answered_calls WHERE {where}", values).fetchone()[0])
            rows = db.execute(
                f"SELECT {base.ANSWERED_COLUMNS} FROM answered_calls WHERE {where} {base.ANSWERED_ORDER}"
                " LIMIT ? OFFSET ?",
                [*values, -1 if limit is None else limit, skip],
            ).fetchall()
        finally:
            db.execute("COMMIT")
        opened = connections.columns.opened_answered_rows(rows)
        return base.AnsweredCalls(answers=[base.answered_call(row) for row in opened], total=total)

    return await connections.read(work)


async def waiting_kept_since(connections: SQLiteConnections) -> float:
    def work(db: sqlite3.Connection) -> float:
        row = db.execute("SELECT value FROM store_facts WHERE name = 'waiting_calls_since'").fetchone()
        return float(row[0])

    return await connections.run(work)
