"""The SQLite store: idempotent journal writes, contiguous offsets, transcripts, threads, readers in other processes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

from tempo_agents.store import ChunkWrite, SQLiteStore, TranscriptEntry, open_store


def chunk(kind: str, n: int) -> dict[str, object]:
    return {"type": kind, "runId": "r", "from": "AGENT", "payload": {"n": n}}


async def test_durable_chunks_replace_in_place_and_offsets_stay_contiguous(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    first = await store.append_chunks("r", [ChunkWrite(chunk("start", 0), "start"), ChunkWrite(chunk("text-delta", 1))])
    again = await store.append_chunks(
        "r", [ChunkWrite(chunk("start", 99), "start"), ChunkWrite(chunk("text-delta", 2))]
    )
    other_run = await store.append_chunks("q", [ChunkWrite(chunk("start", 0), "start")])
    assert (first, again, other_run) == ([0, 1], [0, 2], [0])
    entries = await store.read_chunks("r")
    assert [(e.offset, e.chunk["payload"]["n"]) for e in entries] == [(0, 99), (1, 1), (2, 2)]
    assert [e.offset for e in await store.read_chunks("r", offset=1, limit=1)] == [1]
    await store.close()


async def test_transcript_upserts_by_step_and_part(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 't.db'}")
    await store.put_transcript("r", [TranscriptEntry(0, "assistant", 0, {"role": "assistant", "content": []})])
    await store.put_transcript(
        "r",
        [
            TranscriptEntry(-1, "input-0000", 0, {"role": "user", "content": []}),
            TranscriptEntry(0, "tool-0001", 2, {"role": "tool", "content": [{"n": 2}]}),
            TranscriptEntry(0, "tool-0000", 1, {"role": "tool", "content": [{"n": 1}]}),
            TranscriptEntry(0, "assistant", 0, {"role": "assistant", "content": [{"n": 0}]}),
        ],
    )
    transcript = await store.get_transcript("r")
    assert [(e.step, e.part) for e in transcript] == [
        (-1, "input-0000"),
        (0, "assistant"),
        (0, "tool-0000"),
        (0, "tool-0001"),
    ]
    assert transcript[1].message["content"] == [{"n": 0}]
    await store.close()


async def test_thread_messages_and_state(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.db")
    await store.append_thread_messages("t", "u", "run-1", [{"m": 1}, {"m": 2}])
    await store.append_thread_messages("t", "u", "run-2", [{"m": 3}])
    await store.append_thread_messages("t", "u", "run-1", [{"m": 1}, {"m": 2}])  # an activity retry
    await store.append_thread_messages("t", "other", "run-3", [{"m": 9}])
    assert await store.get_thread_messages("t", "u") == [{"m": 1}, {"m": 2}, {"m": 3}]
    assert await store.get_thread_state("t", "tasks") is None
    await store.set_thread_state("t", "tasks", [{"id": "a"}])
    await store.set_thread_state("t", "tasks", [{"id": "b"}])
    assert await store.get_thread_state("t", "tasks") == [{"id": "b"}]
    await store.close()


async def test_reader_sees_chunks_written_by_another_process(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    store = SQLiteStore(path, poll_interval=0.02)
    await store.append_chunks("r", [ChunkWrite(chunk("start", 0), "start")])
    writer = textwrap.dedent(
        f"""
        import asyncio, time
        from tempo_agents.store import SQLiteStore, ChunkWrite
        async def main():
            s = SQLiteStore({str(path)!r})
            for i in range(1, 6):
                await s.append_chunks("r", [ChunkWrite({{"type": "text-delta", "payload": {{"n": i}}}})])
                await asyncio.sleep(0.05)
            await s.close()
        asyncio.run(main())
        """
    )
    process = subprocess.Popen([sys.executable, "-c", writer])
    seen: list[int] = []
    offset = 1
    deadline = asyncio.get_running_loop().time() + 30
    while len(seen) < 5 and asyncio.get_running_loop().time() < deadline:
        entries = await store.read_chunks("r", offset)
        seen += [e.chunk["payload"]["n"] for e in entries]
        offset += len(entries)
        if not entries:
            await store.wait_for_chunks("r", offset, timeout=1.0)
    assert await asyncio.to_thread(process.wait, 30) == 0
    assert seen == [1, 2, 3, 4, 5]
    await store.close()
