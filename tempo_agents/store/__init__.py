"""Run journals, transcripts, memory threads and thread state."""

from tempo_agents.store.base import ChunkWrite, JournalEntry, Store, TranscriptEntry
from tempo_agents.store.sqlite import SQLiteStore
from tempo_agents.store.url import DEFAULT_STORE_URL, open_store

__all__ = [
    "DEFAULT_STORE_URL",
    "ChunkWrite",
    "JournalEntry",
    "SQLiteStore",
    "Store",
    "TranscriptEntry",
    "open_store",
]
