"""The ``start`` chunk of a new run, journaled by the client that started it (ARCHITECTURE.md, "The path of a run").

The workflow's first activity journals the same chunk under the same key (it is in the workflow's outbox), which
replaces it in place: whichever comes first, a reader sees one ``start`` at offset 0 as soon as the run exists,
without waiting for the run's first activity to be scheduled.
"""

from __future__ import annotations

from tempo_agents.errors import StoreUnavailableError
from tempo_agents.journal import constructors
from tempo_agents.journal.chunks import Chunk, chunk_from_wire
from tempo_agents.store.base import ChunkWrite, Store

__all__ = ["journal_start"]


async def journal_start(
    store: Store, run_id: str, agent_id: str, fork_of: tuple[str, int] | None = None
) -> Chunk | None:
    """Journal the ``start`` of a run's first segment; return the chunk as readers will read it at its offset, so
    the starting client's stream need not read it back. Call it once the workflow has started, or while it starts
    when the run id is fresh (an id that may be taken could belong to another run, whose ``start`` this replaces).

    A store that cannot be reached now costs readers only the head start (``None``): the run has started, and its
    first activity journals the same chunk. ``fork_of``: a fork's origin (run id, step), as its workflow journals it.
    """
    record = constructors.start(run_id, agent_id, 0, fork_of)
    try:
        (offset,) = await store.append_chunks(run_id, [ChunkWrite(record.chunk, record.key)])
    except StoreUnavailableError:
        return None
    return chunk_from_wire(record.chunk, offset)
