"""The SQLite store's write transactions: ``BEGIN IMMEDIATE`` takes the file's write lock at once, so every
process's writers take turns and what a transaction reads is the newest; the block commits when it ends and rolls
back when it raises. Inside a group commit (``group_commit.py``) the block is part of the group's transaction, in a
savepoint of the group's that rolls back the block alone when it raises."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["immediate"]


@contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[None]:
    """A ``BEGIN IMMEDIATE`` transaction on ``db`` for the block: committed when it ends (a ``return`` included),
    rolled back when it raises. Within a group's transaction, the block is that transaction's."""
    if db.in_transaction:  # a group commit's: it commits, or rolls this write's savepoint back
        yield
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:  # a COMMIT that failed may leave it open: the next write must not join it
            db.execute("ROLLBACK")
        raise
