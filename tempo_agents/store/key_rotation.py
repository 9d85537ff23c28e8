"""Key rotation: every sealed value of a store re-encrypted under its keyring's newest key (``store rotate-keys``).

Each table is read in batches in primary-key order, only rows with a value not under the newest key (values in
clear included, so turning encryption on for an old store seals its rows too). Each value is swapped by
compare-and-set on the old stored text, one transaction per batch: a value that a running worker rewrote meanwhile
is left as the worker wrote it (counted as changed meanwhile), never overwritten with an older one. Killing the
command loses at most a batch's work; running it again finds only the rows still to do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from tempo_agents.store.sealed_columns import SEALED_MARK, SEALED_TABLES, SealedColumns, SealedTable

__all__ = [
    "KeyRotatingStore",
    "KeyRotationBackend",
    "RotatedTable",
    "Swap",
    "rotate_keys",
    "stale_rows_parameters",
    "stale_rows_sql",
    "swap_sql",
]


@dataclass(frozen=True)
class Swap:
    """One stored value to replace, if it still is ``old``."""

    column: str
    identity: tuple[Any, ...]
    old: str
    new: str


@dataclass
class RotatedTable:
    """How far rotation got in one table."""

    table: str
    key_id: str
    resealed: int = 0
    changed_meanwhile: int = 0
    done: bool = False

    def line(self) -> str:
        """The progress line ``store rotate-keys`` prints."""
        state = "done" if self.done else "…"
        meanwhile = f", {self.changed_meanwhile} rewritten meanwhile by workers" if self.changed_meanwhile else ""
        return f"{self.table}: {self.resealed} value(s) re-encrypted under {self.key_id}{meanwhile} {state}"


class KeyRotationBackend(Protocol):
    """What a store gives rotation: its stale rows, and compare-and-set swaps in one transaction."""

    async def stale_rows(
        self, table: SealedTable, after: tuple[Any, ...] | None, current: str, limit: int
    ) -> list[tuple[Any, ...]]:
        """Up to ``limit`` rows after ``after`` (primary-key order) with a value that does not start with
        ``current``: their identity columns, then their sealed columns."""
        ...

    async def swap(self, table: SealedTable, swaps: Sequence[Swap]) -> int:
        """Apply the swaps whose old value is still stored, in one transaction; how many were applied."""
        ...


@runtime_checkable
class KeyRotatingStore(Protocol):
    """A store that can re-encrypt its sealed values under its newest key (both stores of this package)."""

    async def rotate_keys(
        self, batch_size: int = 500, progress: Callable[[RotatedTable], None] | None = None
    ) -> list[RotatedTable]:
        """Re-encrypt every sealed value not under the newest key (module docstring); what was done."""
        ...


def stale_rows_sql(table: SealedTable, prefix: str, mark: str, first: bool, current_length: int) -> str:
    """The query of :meth:`KeyRotationBackend.stale_rows` for a store whose tables are ``prefix<name>`` and whose
    parameters are written ``mark``; its parameters are :func:`stale_rows_parameters`."""
    ids = ", ".join(table.identity)
    stale = " OR ".join(
        f"({column} IS NOT NULL AND substr({column}, 1, {current_length}) <> {mark})" for column in table.columns
    )
    clauses = [] if first else [f"({ids}) > ({', '.join([mark] * len(table.identity))})"]
    clauses.append(f"({stale})")
    if table.clear_rows is not None:
        clauses.append(f"{table.clear_rows[0]} NOT LIKE {mark}")
    return (
        f"SELECT {ids}, {', '.join(table.columns)} FROM {prefix}{table.name} WHERE {' AND '.join(clauses)} "
        f"ORDER BY {ids} LIMIT {mark}"
    )


def stale_rows_parameters(table: SealedTable, after: tuple[Any, ...] | None, current: str, limit: int) -> list[Any]:
    """The parameters of :func:`stale_rows_sql`: ``[*after, current (once per sealed column), the LIKE pattern of
    the rows kept in clear (if any), limit]``."""
    clear = [] if table.clear_rows is None else [table.clear_rows[1]]
    return [*(after or ()), *([current] * len(table.columns)), *clear, limit]


def swap_sql(table: SealedTable, column: str, prefix: str, mark: str) -> str:
    """The compare-and-set of one value: parameters ``[new, *identity, old]``."""
    where = " AND ".join(f"{name} = {mark}" for name in table.identity)
    return f"UPDATE {prefix}{table.name} SET {column} = {mark} WHERE {where} AND {column} = {mark}"


async def rotate_keys(
    columns: SealedColumns,
    backend: KeyRotationBackend,
    batch_size: int = 500,
    progress: Callable[[RotatedTable], None] | None = None,
) -> list[RotatedTable]:
    """Re-encrypt every sealed table (module docstring) under the current key; what was done, table by table."""
    fixed = columns.now()  # one newest key for the whole rotation, whatever a key source says meanwhile
    keyring = fixed.keyring
    if keyring is None:
        raise ValueError("the store has no encryption keys: configure them before rotating")
    current = f"{SEALED_MARK}{keyring.current.id}:"
    report = []
    for table in SEALED_TABLES:
        rotated = RotatedTable(table.name, keyring.current.id)
        after: tuple[Any, ...] | None = None
        while True:
            rows = await backend.stale_rows(table, after, current, batch_size)
            swaps = _swaps(fixed, table, rows)
            applied = await backend.swap(table, swaps) if swaps else 0
            rotated.resealed += applied
            rotated.changed_meanwhile += len(swaps) - applied
            rotated.done = len(rows) < batch_size
            if progress is not None and (rows or rotated.done):
                progress(rotated)
            if rotated.done:
                break
            after = tuple(rows[-1][: len(table.identity)])
        report.append(rotated)
    return report


def _swaps(columns: SealedColumns, table: SealedTable, rows: Sequence[tuple[Any, ...]]) -> list[Swap]:
    swaps = []
    width = len(table.identity)
    for row in rows:
        identity = tuple(row[:width])
        for column, stored in zip(table.columns, row[width:], strict=True):
            if stored is None:
                continue
            new = columns.reseal(table, column, identity, stored)
            if new is not None:
                swaps.append(Swap(column, identity, stored, new))
    return swaps
