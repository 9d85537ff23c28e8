"""A transaction of the PostgreSQL store sent in as few round trips as its reads allow.

psycopg's ``transaction()`` in pipeline mode waits for ``BEGIN`` on its own and again before and after ``COMMIT``;
each wait is a round trip to the server and a turn of the event loop for the connection's socket, which for the
journal's small appends cost more than the statements. :func:`pipelined_transaction` instead queues ``BEGIN`` with
the transaction's first statements and ``COMMIT`` with its last: a write whose reads come first (the locks, the
run's next offset) and whose writes follow takes two round trips, the first when it reads an answer, the second
when the block ends.

Statements queued in a pipeline run in order, each with its own snapshot (the isolation of separate statements in
``READ COMMITTED``), so a lock taken by one statement holds for the statements after it, as without a pipeline. A
statement that fails makes the server skip the rest until the next sync; psycopg raises its error then. Whatever
ends the block early (an error of the server, of the connection, of the caller's code, a cancellation) leaves
nothing committed: ``COMMIT`` is queued only when the block ends normally, and the transaction left open is rolled
back before the connection goes back to the pool.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import psycopg
from psycopg import AsyncPipeline
from psycopg.pq import TransactionStatus

from tempo_agents.store.postgres.connections import Conn

__all__ = ["pipelined_transaction"]


@contextlib.asynccontextmanager
async def pipelined_transaction(conn: Conn) -> AsyncIterator[AsyncPipeline]:
    """A transaction on ``conn`` (autocommit, out of pipeline mode) whose ``BEGIN`` travels with the first statements
    and whose ``COMMIT`` with the last. Yields the pipeline: ``await pipeline.sync()`` waits for every statement sent
    so far (a write that must not be repeated once its commit may have been sent syncs before the block ends)."""
    try:
        async with conn.pipeline() as pipeline:
            await conn.execute("BEGIN", prepare=False)
            yield pipeline
            await conn.execute("COMMIT", prepare=False)
    except BaseException:
        if conn.info.transaction_status in (TransactionStatus.INTRANS, TransactionStatus.INERROR):
            with contextlib.suppress(psycopg.Error):  # a broken connection: the pool discards it
                await conn.execute("ROLLBACK", prepare=False)
        raise
