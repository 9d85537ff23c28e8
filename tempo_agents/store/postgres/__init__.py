"""PostgreSQL store: several workers on several machines, and their readers, share one database.

The same contract as the SQLite store (:class:`~tempo_agents.store.base.Store`; tests/store/test_contract.py runs one
suite on both), kept the PostgreSQL way:

- **Offsets.** Each run has a row in ``journal_head`` holding its next offset. An append locks that row first
  (``INSERT ... ON CONFLICT DO UPDATE ... RETURNING``), so appends to one run from any number of processes or
  hosts take turns: offsets stay contiguous, a keyed chunk is found (and replaced in place) by the writer that
  holds the lock, and an offset is visible to readers only after every smaller one is. Appends to different
  runs never wait for each other.
- **One transaction per write.** A tool result, its chunk and its saved outcome commit together or not at all;
  a writer killed mid-transaction leaves nothing behind (the server rolls it back and releases the lock).
- **Tailing.** Every append ends with ``pg_notify('tempo_agents_journal', '<last offset> <run id>')`` inside
  its transaction, so the notification is delivered only after the commit. Each process keeps one listening
  connection per database (a thread, shared by every store object on that URL) and wakes the readers of that
  run whose offset now exists; a reader on another host is woken within milliseconds, and nothing polls.
  A reader registers, then checks the run's latest offset once, so a commit landing between its last read and
  its registration is not missed. If the listening connection drops, every reader is woken to re-read once it
  is back, and meanwhile readers return at their timeout (tailing degrades to polling, never to silence).
- **Schema.** Tables live in the ``tempo_agents`` schema; ``tempo_agents.schema_version`` says which of
  :data:`MIGRATIONS` have run. The store applies missing ones on first use under an advisory lock (so workers
  starting together migrate once), and ``tempo-agents store migrate --store URL`` does the same on demand.
- **Lost connections.** A failure to reach the server is waited out for ``retry_seconds`` (longer inside an
  activity: ``store/patience.py``), then raised as :class:`~tempo_agents.errors.StoreUnavailableError`, which
  names the URL without its password and stays retryable in activities. Meanwhile one task per event loop
  probes the server with a connection of its own every :data:`PROBE_SECONDS`, and every waiting operation goes
  on as soon as a probe gets through: the pool's own reconnect backoff (which grows to half a minute) is cut
  short (``reconnect_timeout``), so a long outage costs no extra wait once the database is back. A write is
  retried in place only if it cannot have committed, or if repeating it is harmless (every chunk keyed): an
  unkeyed chunk whose commit may have happened is left to the activity's own retry rather than risk appending
  it twice.
- **A busy pool is not an outage.** An operation waits up to ``pool_timeout`` for a free pooled connection;
  when none came although the database answers and the pool is at ``max_size``, it fails with
  :class:`~tempo_agents.errors.StoreBusyError`, which says how to size the pool: ``?pool_size=N`` in the URL
  (also ``pool_timeout=S``), ``TEMPO_AGENTS_STORE_POOL_SIZE``, or the CLI's ``--store-pool-size``.

The modules: ``store.py`` (:class:`PostgresStore`, which composes the others), ``connections.py`` (the pool,
retries and the probe), ``failures.py`` (an unreachable database told from a busy pool), ``schema.py``
(:data:`MIGRATIONS`), ``journal_writes.py`` and ``journal_reads.py`` (chunks, transcripts, saved outcomes, usage
counters), ``listener.py`` (the listening connection), ``waiting_calls.py`` and ``threads.py``.
"""

from tempo_agents.store.postgres.connections import PROBE_SECONDS
from tempo_agents.store.postgres.listener import CHANNEL
from tempo_agents.store.postgres.schema import MIGRATIONS
from tempo_agents.store.postgres.store import PostgresStore

__all__ = ["CHANNEL", "MIGRATIONS", "PROBE_SECONDS", "PostgresStore"]
