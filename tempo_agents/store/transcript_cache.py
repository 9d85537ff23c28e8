"""The transcripts of the runs a worker is working on, parsed once and kept current by incremental reads.

Every model step needs the whole transcript of its run, and so does every tool call (``ctx.messages``).
Reading and parsing it each time makes a step's cost grow with the run's length; here a run's entries
are read once, then only the entries written since the last read (the store's transcript revision).
Entries written by another worker are picked up the same way, so the cache is never stale.
"""

from __future__ import annotations

import asyncio
import bisect
from collections import OrderedDict
from dataclasses import dataclass, field

from tempo_agents.models.messages import Message
from tempo_agents.store.base import Store, TranscriptEntry

__all__ = ["RunTranscript", "TranscriptCache"]


def _order(entry: TranscriptEntry) -> tuple[int, int, str]:
    return (entry.step, entry.position, entry.part)


@dataclass
class RunTranscript:
    """One run's transcript, ordered by step then position."""

    entries: list[TranscriptEntry] = field(default_factory=list)
    revision: int = 0
    _by_key: dict[tuple[int, str], TranscriptEntry] = field(default_factory=dict, repr=False)
    _parsed: dict[tuple[int, str], Message] = field(default_factory=dict, repr=False)

    def apply(self, changes: list[TranscriptEntry], revision: int) -> None:
        """Take the entries written since the last read: new ones are put in order (almost always at the end),
        rewritten ones replace the old (a step's cost does not grow with the run's length)."""
        for entry in changes:
            key = (entry.step, entry.part)
            old = self._by_key.get(key)
            self._by_key[key] = entry
            self._parsed.pop(key, None)
            if old is not None:
                index = bisect.bisect_left(self.entries, _order(old), key=_order)
                while self.entries[index] is not old:
                    index += 1
                del self.entries[index]
            bisect.insort(self.entries, entry, key=_order)
        self.revision = revision

    def messages(self) -> list[Message]:
        """The entries as parsed messages (each parsed once)."""
        return [self._message_of(entry) for entry in self.entries]

    def message(self, step: int, part: str) -> Message | None:
        """The parsed message at ``(step, part)``, if there is one."""
        entry = self._by_key.get((step, part))
        return None if entry is None else self._message_of(entry)

    def _message_of(self, entry: TranscriptEntry) -> Message:
        key = (entry.step, entry.part)
        message = self._parsed.get(key)
        if message is None:
            message = self._parsed[key] = Message.model_validate(entry.message)
        return message


class TranscriptCache:
    """Up to ``max_runs`` run transcripts, least recently used dropped first."""

    def __init__(self, store: Store, *, max_runs: int = 256) -> None:
        self._store = store
        self._max_runs = max_runs
        self._runs: OrderedDict[str, RunTranscript] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    async def get(self, run_id: str) -> RunTranscript:
        """The run's transcript as the store has it now."""
        lock = self._locks.setdefault(run_id, asyncio.Lock())
        async with lock:
            transcript = self._runs.get(run_id)
            if transcript is None:
                transcript = RunTranscript()
            changes, revision = await self._store.transcript_changes(run_id, transcript.revision)
            if revision < transcript.revision:  # the run's rows were rewritten from scratch: start over
                transcript = RunTranscript()
                changes, revision = await self._store.transcript_changes(run_id, 0)
            transcript.apply(changes, revision)
            self._runs[run_id] = transcript
            self._runs.move_to_end(run_id)
            while len(self._runs) > self._max_runs:
                dropped, _ = self._runs.popitem(last=False)
                self._locks.pop(dropped, None)
            return transcript

    def forget(self, run_id: str) -> None:
        """Drop a finished run."""
        self._runs.pop(run_id, None)
        self._locks.pop(run_id, None)
