"""Walking an audit chain: the first record deleted, inserted or altered, or ``None`` when every link holds."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from tempo_agents.audit.chain import GENESIS, record_hash
from tempo_agents.audit.entry import AuditRecord

__all__ = ["ChainBreak", "ChainReader", "ChainWalk", "read_chain", "verify_chain"]

ChainReader = Callable[[int, int], Awaitable[list[AuditRecord]]]
"""Reads a chain's records after a ``seq``, at most a number of them (a store's ``audit_chain``)."""

BreakKind = Literal["altered", "deleted", "inserted", "broken"]


@dataclass(frozen=True)
class ChainBreak:
    """Where the chain first fails: ``seq`` is the record found wrong (``altered``: its fields no longer give its
    hash; ``inserted``: it was put between two records; ``deleted``: records before it are gone; ``broken``: it does
    not follow the record before it, which the walk cannot tell apart)."""

    kind: BreakKind
    seq: int
    message: str


@dataclass
class ChainWalk:
    """The outcome of a walk: how many records were read, and the first break (``None``: the chain holds)."""

    records: int
    broken: ChainBreak | None


class _Walker:
    def __init__(self) -> None:
        self.count = 0
        self.before: AuditRecord | None = None
        self.before_that: AuditRecord | None = None

    def step(self, record: AuditRecord) -> ChainBreak | None:
        self.count += 1
        found = self._check(record)
        self.before_that, self.before = self.before, record
        return found

    def _check(self, record: AuditRecord) -> ChainBreak | None:
        seq = record.seq
        if record_hash(record.entry, record.prev_hash) != record.hash:
            return ChainBreak("altered", seq, f"record {seq} was altered: its fields no longer give its hash")
        expected = GENESIS if self.before is None else self.before.hash
        if record.prev_hash == expected:
            return None
        return self._misplaced(record)

    def _misplaced(self, record: AuditRecord) -> ChainBreak:
        seq = record.seq
        if self.before is not None and self.before_that is not None and record.prev_hash == self.before_that.hash:
            inserted = self.before.seq
            return ChainBreak(
                "inserted", inserted, f"record {inserted} was inserted: record {seq} follows the one before it"
            )
        previous = 0 if self.before is None else self.before.seq
        if seq > previous + 1:
            gone = f"{previous + 1}" if seq == previous + 2 else f"{previous + 1} to {seq - 1}"
            return ChainBreak("deleted", seq, f"record {gone} was deleted: record {seq} follows a record that is gone")
        return ChainBreak("broken", seq, f"record {seq} does not follow record {previous}: one was inserted or deleted")


async def verify_chain(records: AsyncIterator[AuditRecord]) -> ChainWalk:
    """Walk ``records`` in chain order and stop at the first break."""
    walker = _Walker()
    async for record in records:
        found = walker.step(record)
        if found is not None:
            return ChainWalk(walker.count, found)
    return ChainWalk(walker.count, None)


async def read_chain(read: ChainReader, page: int = 1000) -> AsyncIterator[AuditRecord]:
    """Every record of a chain in order, read ``page`` at a time."""
    after = 0
    while True:
        records = await read(after, page)
        for record in records:
            yield record
        if len(records) < page:
            return
        after = records[-1].seq
