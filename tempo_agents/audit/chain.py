"""The audit trail's hash chain: each record's SHA-256 covers its fields and the hash of the record before it, so a
record deleted, altered or inserted anywhere but at the end breaks the chain there. The ``seq`` is not hashed: the
links alone give the order, so records renumbered to make room for an inserted one still show the insertion."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from tempo_agents.audit.entry import AuditEntry, AuditRecord

__all__ = ["GENESIS", "chain_after", "chain_next", "record_hash"]

GENESIS = "0" * 64
"""The ``prev_hash`` of a store's first record."""


def record_hash(entry: AuditEntry, prev_hash: str) -> str:
    """The hash of ``entry`` after the record whose hash is ``prev_hash`` (canonical JSON: sorted keys, no spaces,
    non-ASCII kept, as UTF-8)."""
    body = {"prevHash": prev_hash, **entry.fields()}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def chain_next(seq: int, prev_hash: str, entry: AuditEntry) -> AuditRecord:
    """``entry`` placed after the record ``seq - 1`` whose hash is ``prev_hash``."""
    return AuditRecord(seq, entry, prev_hash, record_hash(entry, prev_hash))


def chain_after(seq: int, prev_hash: str, entries: Sequence[AuditEntry]) -> list[AuditRecord]:
    """``entries`` placed in order after the record ``seq`` whose hash is ``prev_hash`` (a store's chain head)."""
    records: list[AuditRecord] = []
    for entry in entries:
        seq += 1
        records.append(chain_next(seq, prev_hash, entry))
        prev_hash = records[-1].hash
    return records
