"""The rows of a journal append, as both stores write them: each chunk at its offset, sealed bound to it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tempo_agents.store.base import ChunkWrite, to_json
from tempo_agents.store.sealed_columns import JOURNAL, SealedColumns

__all__ = ["ChunkRows", "chunk_rows"]


@dataclass(frozen=True)
class ChunkRows:
    offsets: list[int]
    """The offset each write holds, in the writes' order."""
    rows: list[tuple[str, int, str | None, str]]
    """``(run_id, offset, key, sealed body)`` for each write."""
    next_offset: int
    """The run's next offset once they are written."""


def chunk_rows(
    columns: SealedColumns, run_id: str, writes: Sequence[ChunkWrite], next_offset: int, keyed: dict[str, int]
) -> ChunkRows:
    """Place ``writes`` from ``next_offset`` on: a keyed write whose key the run's journal holds (``keyed``: key to
    offset) is replaced in place, as is a key repeated within ``writes``; every other write takes the next offset."""
    offset_of = dict(keyed)
    offsets: list[int] = []
    rows: list[tuple[str, int, str | None, str]] = []
    for write in writes:
        seq = offset_of.get(write.key) if write.key is not None else None
        if seq is None:
            seq, next_offset = next_offset, next_offset + 1
            if write.key is not None:
                offset_of[write.key] = seq
        offsets.append(seq)
        rows.append((run_id, seq, write.key, columns.seal(JOURNAL, "body", (run_id, seq), to_json(write.chunk))))
    return ChunkRows(offsets, rows, next_offset)
