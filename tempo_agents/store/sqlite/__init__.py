"""SQLite store: the default, one file shared by a worker and readers in other processes (WAL).

The modules: ``store.py`` (:class:`SQLiteStore`, which composes the others), ``connections.py`` (the writer and
reader threads), ``schema.py`` (the tables, created or upgraded when the file is opened), ``journal_writes.py`` and
``journal_reads.py`` (chunks, transcripts, saved outcomes, usage counters), ``watcher.py`` (how a reader tailing a
journal is woken for other processes' appends), ``waiting_calls.py`` and ``threads.py``.
"""

from tempo_agents.store.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
