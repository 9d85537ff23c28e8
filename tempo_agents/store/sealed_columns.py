"""The store's columns that hold user content, sealed at rest under a keyring (what both stores share).

A sealed value is kept in the same text column as a clear one: ``~<key id>:<base64 of nonce, ciphertext and
tag>``. JSON never starts with ``~``, so a row written before encryption was turned on (or by a store without
keys) is told apart and still read. Each value is bound (AES-GCM associated data) to its table, its column and
its row's identity (its primary key: a journal chunk to its run and offset, a thread message to its thread,
resource, run and index ...), so a value copied into another row fails to open instead of being read there.

What stays in clear is what the API and the dashboard filter and order by, and none of it is content: ids,
offsets, kinds of rows, timestamps, rounds, the waiting calls' queue, agent, thread and resource, usage counters,
and the count of a local activity's starts (``<key>:starts`` outcomes, which PostgreSQL adds to in SQL).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from tempo_agents.encryption import Keyring, KeyringSource, Sealed, UnknownKeyError, current_keyring, open_sealed, seal
from tempo_agents.store.base import (
    START_COUNT_SUFFIX,
    ReaddressedCall,
    TranscriptEntry,
    WaitingCall,
    to_json,
    transcript_rows,
    waiting_row,
)

__all__ = [
    "ANSWERED_CALLS",
    "JOURNAL",
    "OUTCOMES",
    "SEALED_MARK",
    "SEALED_TABLES",
    "THREAD_MESSAGES",
    "THREAD_STATE",
    "TRANSCRIPT",
    "WAITING_CALLS",
    "SealedColumns",
    "SealedTable",
    "StoreKeys",
    "is_start_count",
    "key_id_of",
]

SEALED_MARK = "~"
"""The first character of a sealed value (never the first of a JSON text)."""

StoreKeys = Keyring | KeyringSource
"""What a store is given to seal with: a keyring, or a callable that returns the current one (for a KMS)."""


@dataclass(frozen=True)
class SealedTable:
    """A table with sealed columns: its primary key (each value's identity) and the columns sealed."""

    name: str
    identity: tuple[str, ...]
    columns: tuple[str, ...]
    clear_rows: tuple[str, str] | None = None
    """``(column, LIKE pattern)``: the rows whose column matches keep their values in clear (rotation leaves them
    alone)."""


JOURNAL = SealedTable("journal", ("run_id", "seq"), ("body",))
TRANSCRIPT = SealedTable("transcript", ("run_id", "step", "part"), ("body", "memory_body"))
OUTCOMES = SealedTable("outcomes", ("run_id", "key"), ("body",), clear_rows=("key", f"%{START_COUNT_SUFFIX}"))
THREAD_MESSAGES = SealedTable("thread_messages", ("thread_id", "resource_id", "run_id", "idx"), ("body",))
THREAD_STATE = SealedTable("thread_state", ("thread_id", "type"), ("body",))
WAITING_CALLS = SealedTable("waiting_calls", ("run_id", "tool_call_id"), ("body",))
ANSWERED_CALLS = SealedTable("answered_calls", ("run_id", "tool_call_id", "round"), ("body",))

SEALED_TABLES: tuple[SealedTable, ...] = (
    JOURNAL,
    TRANSCRIPT,
    OUTCOMES,
    THREAD_MESSAGES,
    THREAD_STATE,
    WAITING_CALLS,
    ANSWERED_CALLS,
)
"""Every table holding user content, in the order ``store rotate-keys`` re-encrypts them."""


def is_start_count(outcome_key: str) -> bool:
    """Whether an outcome is a local activity's count of starts (kept in clear: a number, added to in SQL)."""
    return outcome_key.endswith(START_COUNT_SUFFIX)


def key_id_of(stored: str) -> str | None:
    """The id of the key a stored value is sealed under; ``None`` for a value in clear."""
    if not stored.startswith(SEALED_MARK):
        return None
    return stored[len(SEALED_MARK) :].partition(":")[0]


def _associated(table: SealedTable, column: str, identity: Sequence[object]) -> bytes:
    return "\x1f".join([f"tempo-agents/{table.name}.{column}", *(str(part) for part in identity)]).encode()


class SealedColumns:
    """Seals and opens one store's columns under its keys; without keys, values are written in clear.

    Values in clear are always read (rows from before encryption); a sealed value under a key the keyring no longer
    holds raises :class:`~tempo_agents.encryption.UnknownKeyError`, naming the key.
    """

    def __init__(self, keys: StoreKeys | None = None) -> None:
        self._keys = keys

    @property
    def keyring(self) -> Keyring | None:
        """The current keyring (a callable's answer now), or ``None`` when the store has no keys."""
        return None if self._keys is None else current_keyring(self._keys)

    def now(self) -> SealedColumns:
        """These columns for a batch of values: a key source is asked once, when the first value needs a key."""
        return self if self._keys is None or isinstance(self._keys, Keyring) else SealedColumns(cache(self._keys))

    def seal(self, table: SealedTable, column: str, identity: Sequence[object], text: str) -> str:
        """``text`` as stored in ``table.column`` of the row ``identity``: sealed under the current key, or as is."""
        keyring = self.keyring
        if keyring is None:
            return text
        sealed = seal(keyring, text.encode(), _associated(table, column, identity))
        return f"{SEALED_MARK}{sealed.key_id}:{base64.b64encode(sealed.data).decode('ascii')}"

    def open(self, table: SealedTable, column: str, identity: Sequence[object], stored: str) -> str:
        """The text of a stored value (sealed or in clear)."""
        key_id = key_id_of(stored)
        if key_id is None:
            return stored
        keyring = self.keyring
        if keyring is None:
            raise UnknownKeyError(key_id)
        try:
            data = base64.b64decode(stored.partition(":")[2], validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"a sealed value of {table.name}.{column} is not valid base64") from None
        return open_sealed(keyring, Sealed(key_id, data), _associated(table, column, identity)).decode()

    def open_optional(
        self, table: SealedTable, column: str, identity: Sequence[object], stored: str | None
    ) -> str | None:
        """:meth:`open` for a nullable column."""
        return None if stored is None else self.open(table, column, identity, stored)

    def seal_optional(
        self, table: SealedTable, column: str, identity: Sequence[object], text: str | None
    ) -> str | None:
        """:meth:`seal` for a nullable column."""
        return None if text is None else self.seal(table, column, identity, text)

    def seal_outcome(self, run_id: str, key: str, text: str) -> str:
        """A saved outcome as stored: sealed, but a count of starts in clear (:func:`is_start_count`)."""
        return text if is_start_count(key) else self.seal(OUTCOMES, "body", (run_id, key), text)

    def opened_outcome(self, run_id: str, key: str, stored: str) -> dict[str, Any]:
        """A saved outcome as stored, opened."""
        return dict(json.loads(self.open(OUTCOMES, "body", (run_id, key), stored)))

    def reseal(self, table: SealedTable, column: str, identity: Sequence[object], stored: str) -> str | None:
        """``stored`` sealed under the current key, or ``None`` when it already is (key rotation)."""
        keyring = self.keyring
        if keyring is not None and key_id_of(stored) == keyring.current.id:
            return None
        return self.seal(table, column, identity, self.open(table, column, identity, stored))

    def transcript_rows(self, run_id: str, entries: Sequence[TranscriptEntry], revision: int) -> list[tuple[Any, ...]]:
        """The transcript table's rows for ``entries`` (:func:`~tempo_agents.store.base.transcript_rows`), sealed."""
        columns = self.now()
        sealed = []
        for run, step, part, position, body, memory, rev in transcript_rows(run_id, entries, revision):
            identity = (run, step, part)
            sealed.append(
                (
                    run,
                    step,
                    part,
                    position,
                    columns.seal(TRANSCRIPT, "body", identity, body),
                    columns.seal_optional(TRANSCRIPT, "memory_body", identity, memory),
                    rev,
                )
            )
        return sealed

    def transcript_entry(
        self, run_id: str, step: int, part: str, position: int, body: str, memory: str | None
    ) -> TranscriptEntry:
        """A transcript row read back as an entry."""
        columns, identity = self.now(), (run_id, step, part)
        memory_text = columns.open_optional(TRANSCRIPT, "memory_body", identity, memory)
        return TranscriptEntry(
            step=step,
            part=part,
            position=position,
            message=json.loads(columns.open(TRANSCRIPT, "body", identity, body)),
            memory_message=json.loads(memory_text) if memory_text else None,
        )

    def waiting_row(self, call: WaitingCall) -> tuple[Any, ...]:
        """A waiting call as a row of :data:`~tempo_agents.store.base.WAITING_COLUMNS`, its body sealed."""
        row = waiting_row(call)
        return (*row[:-1], self.seal(WAITING_CALLS, "body", (call.run_id, call.tool_call_id), row[-1]))

    def readdressed_body(self, run_id: str, call: ReaddressedCall, stored: str) -> str:
        """A waiting call's stored body with ``call``'s new approvers in it, sealed again."""
        columns, identity = self.now(), (run_id, call.tool_call_id)
        body = {**json.loads(columns.open(WAITING_CALLS, "body", identity, stored)), **call.body_patch()}
        return columns.seal(WAITING_CALLS, "body", identity, to_json(body))

    def opened_waiting_rows(self, rows: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
        """Rows of :data:`~tempo_agents.store.base.WAITING_COLUMNS` with their bodies opened."""
        opened = self.now().open
        return [(*row[:-1], opened(WAITING_CALLS, "body", (row[0], row[1]), row[-1])) for row in rows]

    def opened_answered_rows(self, rows: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
        """Rows of :data:`~tempo_agents.store.base.ANSWERED_COLUMNS` with their bodies opened."""
        opened = self.now().open
        return [(*row[:-1], opened(ANSWERED_CALLS, "body", (row[0], row[1], row[2]), row[-1])) for row in rows]

    def thread_message_bodies(
        self, thread_id: str, resource_id: str, run_id: str, messages: Sequence[dict[str, Any]]
    ) -> list[str]:
        """A run's messages on a thread as stored, each sealed bound to its index."""
        sealed = self.now().seal
        return [
            sealed(THREAD_MESSAGES, "body", (thread_id, resource_id, run_id, idx), to_json(message))
            for idx, message in enumerate(messages)
        ]

    def opened_thread_messages(
        self, thread_id: str, resource_id: str, rows: Sequence[Sequence[Any]]
    ) -> list[dict[str, Any]]:
        """Thread messages read as ``(run_id, idx, body)``, opened."""
        opened = self.now().open
        return [
            json.loads(opened(THREAD_MESSAGES, "body", (thread_id, resource_id, run_id, idx), body))
            for run_id, idx, body in rows
        ]
