"""One store contract, two backends: every test here runs on SQLite and on PostgreSQL.

Idempotent journal writes, contiguous offsets (also under several writer processes at once), a write and its
saved outcome in one transaction (also when its process is killed in the middle), transcripts and their
revisions, memory threads and thread state, and readers in other processes. Writers and readers in other
processes are real ``python -c`` processes opening the same URL. Every test runs with the store's columns in clear
and sealed under a keyring (``$TEMPO_AGENTS_ENCRYPTION_KEYS``, which the other processes inherit).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tempo_agents.encryption import KEYS_ENVIRONMENT_VARIABLE
from tempo_agents.errors import SupersededStartError
from tempo_agents.store import ChunkWrite, Store, TranscriptEntry, open_store
from tempo_agents.store.base import (
    GivenAnswer,
    ReaddressedCall,
    SavedOutcome,
    StartFence,
    UsageCharge,
    WaitingCall,
    WaitingChange,
    WaitingRuns,
)
from tempo_agents.store.transcript_cache import TranscriptCache

LONG = 60.0
"""A timeout far beyond any expected wait: tests never assert timings."""


def chunk(kind: str, n: int) -> dict[str, object]:
    return {"type": kind, "runId": "r", "from": "AGENT", "payload": {"n": n}}


SEALED_KEYS = "k2:" + "Ag" * 21 + "g=,k1:" + "AQ" * 21 + "E="
"""Two AES-256 keys (32 bytes of 2s, then of 1s), newest first."""


@pytest.fixture(params=("in clear", "sealed"), autouse=True)
def sealing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.param == "sealed":
        monkeypatch.setenv(KEYS_ENVIRONMENT_VARIABLE, SEALED_KEYS)


def python(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )


async def finish(process: subprocess.Popen[str]) -> str:
    stdout, _ = await asyncio.to_thread(process.communicate, None, LONG)
    assert process.returncode == 0, stdout
    return stdout


async def test_durable_chunks_replace_in_place_and_offsets_stay_contiguous(store: Store) -> None:
    first = await store.append_chunks("r", [ChunkWrite(chunk("start", 0), "start"), ChunkWrite(chunk("text-delta", 1))])
    again = await store.append_chunks(
        "r", [ChunkWrite(chunk("start", 99), "start"), ChunkWrite(chunk("text-delta", 2))]
    )
    other_run = await store.append_chunks("q", [ChunkWrite(chunk("start", 0), "start")])
    assert (first, again, other_run) == ([0, 1], [0, 2], [0])
    entries = await store.read_chunks("r")
    assert [(e.offset, e.chunk["payload"]["n"]) for e in entries] == [(0, 99), (1, 1), (2, 2)]
    assert [e.offset for e in await store.read_chunks("r", offset=1, limit=1)] == [1]
    assert await store.offset_of("r", "start") == 0
    assert await store.offset_of("r", "nope") is None
    assert await store.append_chunks("r", []) == []


async def test_a_key_repeated_in_one_batch_keeps_one_offset(store: Store) -> None:
    offsets = await store.append_chunks(
        "r", [ChunkWrite(chunk("a", 1), "k"), ChunkWrite(chunk("b", 2)), ChunkWrite(chunk("a", 3), "k")]
    )
    assert offsets == [0, 1, 0]
    assert [(e.offset, e.chunk["payload"]["n"]) for e in await store.read_chunks("r")] == [(0, 3), (1, 2)]
    assert await store.append_chunks("r", [ChunkWrite(chunk("c", 4))]) == [2]


async def test_transcript_upserts_by_step_and_part(store: Store) -> None:
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
    assert await store.get_transcript("other") == []


async def test_transcript_revisions_give_only_what_changed(store: Store) -> None:
    assert await store.transcript_changes("r", 0) == ([], 0)
    await store.put_transcript("r", [TranscriptEntry(0, "assistant", 0, {"n": 0})])
    entries, first = await store.transcript_changes("r", 0)
    assert [e.message for e in entries] == [{"n": 0}] and first > 0
    assert await store.transcript_changes("r", first) == ([], first)
    await store.put_transcript(
        "r",
        [
            TranscriptEntry(0, "tool-0000", 1, {"n": 1}, memory_message={"short": 1}),
            TranscriptEntry(1, "assistant", 0, {"n": 2}),
        ],
    )
    changed, second = await store.transcript_changes("r", first)
    assert second > first
    assert [(e.step, e.part, e.message, e.memory_message) for e in changed] == [
        (0, "tool-0000", {"n": 1}, {"short": 1}),
        (1, "assistant", {"n": 2}, None),
    ]
    assert len((await store.transcript_changes("r", 0))[0]) == 3
    assert (await store.transcript_changes("other", first))[1] == 0  # a run never written has revision 0


async def test_a_local_start_is_counted_until_its_outcome_is_saved(store: Store) -> None:
    """``saved_or_counted``: each start before the outcome exists counts one more (the count survives in the
    store, as a lost worker's local activity needs); once the outcome is saved it is returned and nothing is
    counted. Concurrent starts each get a number of their own."""
    assert await store.saved_or_counted("r", "tool-call:0:c:r0", "tool-call:0:c:r0:starts") == (None, 1)
    assert await store.saved_or_counted("r", "tool-call:0:c:r0", "tool-call:0:c:r0:starts") == (None, 2)
    assert await store.saved_outcome("r", "tool-call:0:c:r0:starts") == {"starts": 2}
    await store.record("r", [], [], SavedOutcome("tool-call:0:c:r0", {"status": "result"}))
    assert await store.saved_or_counted("r", "tool-call:0:c:r0", "tool-call:0:c:r0:starts") == (
        {"status": "result"},
        0,
    )
    assert await store.saved_outcome("r", "tool-call:0:c:r0:starts") == {"starts": 2}
    counts = await asyncio.gather(*(store.saved_or_counted("r", "step:1", "step:1:starts") for _ in range(5)))
    assert sorted(counts, key=lambda c: c[1]) == [(None, n) for n in range(1, 6)]


async def test_outcomes_before_a_key_are_forgotten_and_no_others(store: Store) -> None:
    """``forget_outcomes_before``: a run's outcomes whose keys sort before the given one (byte order: the replay
    guard's keys start with a zero-padded time) go; its later keys and other runs' outcomes stay."""
    for key in ("000000001000 v0=aa", "000000001999 v0=bb", "000000002000 v0=cc", "000000002001 v0=dd"):
        await store.saved_or_counted("seen", f"{key}:never-saved", key)
    await store.saved_or_counted("other", "000000001000 v0=aa:never-saved", "000000001000 v0=aa")
    await store.forget_outcomes_before("seen", "000000002000")
    kept = [await store.saved_outcome("seen", key) for key in ("000000001000 v0=aa", "000000001999 v0=bb")]
    assert kept == [None, None]
    assert await store.saved_outcome("seen", "000000002000 v0=cc") == {"starts": 1}
    assert await store.saved_outcome("seen", "000000002001 v0=dd") == {"starts": 1}
    assert await store.saved_outcome("other", "000000001000 v0=aa") == {"starts": 1}


async def test_a_fenced_start_writes_until_a_later_start_is_counted_then_nothing(store: Store) -> None:
    """``record(..., fence=...)`` of a local activity's start: its writes go in while it is the newest start
    counted; once a later start is counted, every write of it is refused whole (no chunk, no transcript entry, no
    outcome, no charge) with ``SupersededStartError``, and the later start's writes go in."""
    first = StartFence("step:5:starts", (await store.saved_or_counted("r", "step:5", "step:5:starts"))[1])
    entry = TranscriptEntry(5, "assistant", 0, {"role": "assistant", "content": [{"n": 1}]})
    assert await store.append_chunks("r", [ChunkWrite(chunk("step-start", 0), "start:5")], first) == [0]
    assert await store.record("r", [], [ChunkWrite(chunk("text-delta", 1))], fence=first) == [1]
    second = StartFence("step:5:starts", (await store.saved_or_counted("r", "step:5", "step:5:starts"))[1])
    assert (first.start, second.start) == (1, 2)
    with pytest.raises(SupersededStartError):
        await store.append_chunks("r", [ChunkWrite(chunk("text-delta", 2))], first)
    with pytest.raises(SupersededStartError):
        await store.record(
            "r",
            [entry],
            [ChunkWrite(chunk("text-delta", 3))],
            SavedOutcome("step:5", {"text": "old"}),
            charges=[UsageCharge("run:r", "all", 10, 1)],
            fence=first,
        )
    assert [e.chunk["payload"]["n"] for e in await store.read_chunks("r")] == [0, 1]
    assert await store.get_transcript("r") == []
    assert await store.saved_outcome("r", "step:5") is None
    assert await store.usage_counters([("run:r", "all")]) == {}
    assert await store.record("r", [entry], [ChunkWrite(chunk("text-delta", 4))], fence=second) == [2]
    assert await store.append_chunks("r", [ChunkWrite(chunk("other", 5))]) == [3]  # writes without a fence go on


async def test_the_transcript_cache_keeps_order_through_late_and_rewritten_entries(store: Store) -> None:
    """Entries arrive out of order (history before the input, a tool result before its step's assistant message)
    and are rewritten (a retried step, a moved position): the cached transcript, kept current by incremental
    reads, is always what a fresh read of the whole transcript gives."""

    def text(n: int) -> dict[str, object]:
        return {"role": "user", "content": [{"type": "text", "text": f"m{n}"}]}

    cache = TranscriptCache(store)
    writes = [
        [TranscriptEntry(0, "assistant", 0, text(1)), TranscriptEntry(-1, "input-0000", 0, text(0))],
        [TranscriptEntry(-2, "history-000000", 0, text(2)), TranscriptEntry(1, "tool-0001", 2, text(3))],
        [TranscriptEntry(1, "tool-0000", 1, text(4)), TranscriptEntry(1, "assistant", 0, text(5))],
        [TranscriptEntry(0, "assistant", 0, text(6)), TranscriptEntry(1, "tool-0001", 0, text(7))],
    ]
    for batch in writes:
        await store.put_transcript("r", batch)
        cached = await cache.get("r")
        fresh = await TranscriptCache(store).get("r")
        assert cached.entries == fresh.entries
        assert [m.text for m in cached.messages()] == [m.text for m in fresh.messages()]
    assert [(e.step, e.position, e.part) for e in cached.entries] == [
        (-2, 0, "history-000000"),
        (-1, 0, "input-0000"),
        (0, 0, "assistant"),
        (1, 0, "assistant"),
        (1, 0, "tool-0001"),
        (1, 1, "tool-0000"),
    ]
    assert [m.text for m in cached.messages()] == ["m2", "m0", "m6", "m5", "m7", "m4"]
    rewritten = cached.message(0, "assistant")
    assert rewritten is not None and rewritten.text == "m6"
    assert cached.message(5, "assistant") is None


async def test_record_keeps_a_result_its_chunk_and_its_outcome_together(store: Store) -> None:
    await store.append_chunks("r", [ChunkWrite(chunk("start", 0), "start")])
    entry = TranscriptEntry(0, "tool-0000", 1, {"role": "tool", "content": [{"n": 1}]})
    offsets = await store.record(
        "r", [entry], [ChunkWrite(chunk("tool-result", 1), "result")], SavedOutcome("c1", {"v": 1})
    )
    assert offsets == [1]
    again = await store.record(
        "r", [entry], [ChunkWrite(chunk("tool-result", 2), "result")], SavedOutcome("c1", {"v": 2})
    )
    assert again == [1]  # an activity retry: the same offset, the newer body, the newer outcome
    assert await store.saved_outcome("r", "c1") == {"v": 2}
    assert await store.saved_outcome("r", "c2") is None
    assert [e.chunk["payload"]["n"] for e in await store.read_chunks("r")] == [0, 2]
    assert [e.part for e in await store.get_transcript("r")] == ["tool-0000"]
    assert await store.record("r", [], []) == []


async def test_usage_counters_add_up_in_the_transaction_of_their_outcome(store: Store) -> None:
    step = [UsageCharge("run:r", "total", 120, 1_500), UsageCharge("resource:t", "day:2026-12-02", 120, 1_500)]
    await store.record("r", [], [ChunkWrite(chunk("tool-call", 1), "call")], SavedOutcome("step:0", {}), charges=step)
    await store.record("r", [], [], SavedOutcome("step:1", {}), charges=[UsageCharge("run:r", "total", 80, 2_500)])
    counted = await store.usage_counters(
        [("run:r", "total"), ("resource:t", "day:2026-12-02"), ("resource:t", "day:2026-12-03")]
    )
    assert counted == {("run:r", "total"): (200, 4_000), ("resource:t", "day:2026-12-02"): (120, 1_500)}
    assert await store.usage_counters([]) == {}
    big = UsageCharge("resource:t", "total", 3_000_000_000, 9_000_000_000_000)  # past 32 bits
    await store.record("r", [], [], charges=[big, big])
    assert await store.usage_counters([("resource:t", "total")]) == {
        ("resource:t", "total"): (6_000_000_000, 18_000_000_000_000)
    }


async def test_thread_messages_and_state(store: Store) -> None:
    await store.append_thread_messages("t", "u", "run-1", [{"m": 1}, {"m": 2}])
    await store.append_thread_messages("t", "u", "run-2", [{"m": 3}])
    await store.append_thread_messages("t", "u", "run-1", [{"m": 1}, {"m": 2}])  # an activity retry
    await store.append_thread_messages("t", "other", "run-3", [{"m": 9}])
    assert await store.get_thread_messages("t", "u") == [{"m": 1}, {"m": 2}, {"m": 3}]
    assert await store.get_thread_messages("t", "nobody") == []
    assert await store.get_thread_state("t", "tasks") is None
    await store.set_thread_state("t", "tasks", [{"id": "a"}])
    await store.set_thread_state("t", "tasks", [{"id": "b"}])
    assert await store.get_thread_state("t", "tasks") == [{"id": "b"}]


async def test_a_run_that_goes_on_after_others_spoke_adds_its_new_messages_after_theirs(store: Store) -> None:
    await store.append_thread_messages("t", "u", "waits", [{"m": "ask"}, {"m": "call"}, {"m": "marker"}])
    await store.append_thread_messages("t", "u", "follow-1", [{"m": "one"}, {"m": "reply one"}])
    await store.append_thread_messages("t", "u", "follow-2", [{"m": "two"}])
    assert await store.thread_messages_after("t", "u", "waits") == [{"m": "one"}, {"m": "reply one"}, {"m": "two"}]
    assert await store.thread_messages_after("t", "u", "follow-1") == [{"m": "two"}]
    assert await store.thread_messages_after("t", "u", "follow-2") == []
    assert len(await store.thread_messages_after("t", "u", "never-wrote")) == 6
    # answered: the result takes the marker's place; what the run says next comes after the others
    await store.append_thread_messages(
        "t", "u", "waits", [{"m": "ask"}, {"m": "call"}, {"m": "result"}, {"m": "note"}, {"m": "final"}]
    )
    await store.append_thread_messages(  # an activity retry changes nothing
        "t", "u", "waits", [{"m": "ask"}, {"m": "call"}, {"m": "result"}, {"m": "note"}, {"m": "final"}]
    )
    said = [m["m"] for m in await store.get_thread_messages("t", "u")]
    assert said == ["ask", "call", "result", "one", "reply one", "two", "note", "final"]
    assert await store.thread_messages_after("t", "u", "waits") == []
    # a run nobody interrupted keeps its messages together
    await store.append_thread_messages("t", "u", "alone", [{"m": "a"}])
    await store.append_thread_messages("t", "u", "alone", [{"m": "a"}, {"m": "b"}])
    assert [m["m"] for m in await store.get_thread_messages("t", "u")][-2:] == ["a", "b"]


async def test_a_rolled_back_run_is_removed_from_its_thread_and_the_rest_keeps_its_order(store: Store) -> None:
    await store.append_thread_messages("t", "u", "run-1", [{"m": 1}, {"m": 2}])
    await store.append_thread_messages("t", "u", "run-2", [{"m": 3}, {"m": 4}])
    await store.append_thread_messages("t", "other", "run-2", [{"m": 9}])  # the same run id on another resource
    assert await store.remove_run_from_thread("t", "u", "run-2") == 2
    assert await store.remove_run_from_thread("t", "u", "run-2") == 0  # done already: nothing left
    assert await store.get_thread_messages("t", "u") == [{"m": 1}, {"m": 2}]
    assert await store.get_thread_messages("t", "other") == [{"m": 9}]
    await store.append_thread_messages("t", "u", "run-3", [{"m": 5}])
    assert await store.get_thread_messages("t", "u") == [{"m": 1}, {"m": 2}, {"m": 5}]


async def test_unicode_and_nested_json_come_back_unchanged(store: Store) -> None:
    body = {"type": "text-delta", "payload": {"text": "héllo ✓ 𝄞", "nested": [1, 2.5, None, True, {"z": 1, "a": 2}]}}
    await store.append_chunks("r", [ChunkWrite(body)])
    [entry] = await store.read_chunks("r")
    assert entry.chunk == body and list(entry.chunk["payload"]["nested"][4]) == ["z", "a"]


async def test_closing_a_store_twice_is_harmless_and_a_read_after_it_says_the_store_is_closed(store_url: str) -> None:
    store = open_store(store_url)
    await store.append_chunks("r", [ChunkWrite(chunk("text-delta", 1))])
    await store.wait_for_chunks("r", 1, timeout=0.05)  # the SQLite store's watcher thread runs while a reader waits
    await store.close()
    await store.close()  # an App closing its store after its owner did, say
    with pytest.raises(RuntimeError, match="closed"):
        await store.read_chunks("r")


async def test_a_waiting_reader_is_woken_by_an_append_and_not_by_other_runs(store: Store) -> None:
    await store.append_chunks("r", [ChunkWrite(chunk("start", 0))])
    await asyncio.wait_for(store.wait_for_chunks("r", 0, timeout=LONG), LONG)  # the chunk is there: at once
    later = asyncio.create_task(store.wait_for_chunks("r", 1, timeout=LONG))
    other = asyncio.create_task(store.wait_for_chunks("other", 0, timeout=LONG))
    await asyncio.sleep(0.1)
    assert not later.done() and not other.done()
    await store.append_chunks("r", [ChunkWrite(chunk("text-delta", 1))])
    await asyncio.wait_for(later, LONG)
    await asyncio.sleep(0.1)
    assert not other.done(), "woken by a chunk of another run"
    other.cancel()


_APPENDER = """
import asyncio, json, sys
from tempo_agents.store import ChunkWrite, open_store

async def main(url, name, count, keys):
    store = open_store(url)
    mine = []
    for i in range(count):
        writes = [ChunkWrite({"writer": name, "i": i})]
        if keys:
            writes.append(ChunkWrite({"writer": name, "key": i % keys}, f"k{i % keys}"))
        offsets = await store.append_chunks("shared", writes)
        mine.append(offsets[0])
    await store.close()
    print(json.dumps(mine))

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
"""


async def test_writer_processes_appending_to_one_run_at_once_get_contiguous_offsets(
    store: Store, store_url: str
) -> None:
    writers, count, keys = 4, 40, 10
    processes = [python(_APPENDER, store_url, f"w{n}", str(count), str(keys)) for n in range(writers)]
    returned = {f"w{n}": json.loads(await finish(p)) for n, p in enumerate(processes)}
    entries = await store.read_chunks("shared", 0, limit=10_000)
    assert [e.offset for e in entries] == list(range(writers * count + keys)), "offsets have a gap or a repeat"
    keyed = [e.chunk["key"] for e in entries if "key" in e.chunk]
    assert sorted(keyed) == list(range(keys)), "a key was written twice"
    plain = {(e.chunk["writer"], e.chunk["i"]): e.offset for e in entries if "i" in e.chunk}
    assert len(plain) == writers * count
    for name, offsets in returned.items():  # each writer was told the offset its chunk really holds
        assert offsets == [plain[(name, i)] for i in range(count)]
        assert offsets == sorted(offsets)


_KILLED_MID_TRANSACTION = """
import asyncio, importlib, inspect, sys, time
from tempo_agents.store import ChunkWrite, TranscriptEntry, open_store
from tempo_agents.store.base import (
    GivenAnswer,
    ReaddressedCall,
    SavedOutcome,
    UsageCharge,
    WaitingCall,
    WaitingChange,
    WaitingRuns,
)

url = sys.argv[1]
store_package = type(open_store(url)).__module__.rpartition(".")[0]
module = importlib.import_module(f"{store_package}.journal_writes")  # each store's writes of one transaction
original = module.record_in

def announce():
    print("inside", flush=True)
    time.sleep(600)  # killed here, after every write of the transaction and before its commit

if inspect.iscoroutinefunction(original):
    async def record_in(conn, *args):
        done = await original(conn, *args)
        await (await conn.execute("SELECT 1")).fetchone()  # every statement queued in the pipeline has run
        announce()
        return done
else:
    def record_in(*args):
        done = original(*args)
        announce()
        return done
module.record_in = record_in

async def main():
    store = open_store(url)
    await store.record(
        "r",
        [TranscriptEntry(0, "tool-0000", 1, {"half": True})],
        [ChunkWrite({"half": 1}), ChunkWrite({"half": 2}, "result")],
        SavedOutcome("call", {"half": True}),
        charges=[UsageCharge("run:r", "total", 100, 100)],
    )

asyncio.run(main())
"""


async def test_a_writer_killed_mid_transaction_leaves_nothing_half_written(store: Store, store_url: str) -> None:
    await store.append_chunks("r", [ChunkWrite(chunk("start", 0), "start")])
    process = python(_KILLED_MID_TRANSACTION, store_url)
    assert process.stdout is not None
    line = await asyncio.wait_for(asyncio.to_thread(process.stdout.readline), LONG)
    assert line == "inside\n"
    # Another writer of the same run waits for the killed one's transaction (a lock, or SQLite's write lock).
    blocked = asyncio.create_task(store.append_chunks("r", [ChunkWrite(chunk("text-delta", 1))]))
    await asyncio.sleep(0.2)
    os.kill(process.pid, signal.SIGKILL)
    await asyncio.to_thread(process.wait, LONG)
    assert await asyncio.wait_for(blocked, LONG) == [1]
    assert [e.chunk for e in await store.read_chunks("r")] == [chunk("start", 0), chunk("text-delta", 1)]
    assert await store.offset_of("r", "result") is None
    assert await store.saved_outcome("r", "call") is None
    assert await store.usage_counters([("run:r", "total")]) == {}
    assert await store.get_transcript("r") == []
    assert await store.append_chunks("r", [ChunkWrite(chunk("text-delta", 2))]) == [2]


_WRITER = """
import asyncio, sys
from tempo_agents.store import ChunkWrite, open_store

async def main():
    store = open_store(sys.argv[1])
    for i in range(1, 6):
        await store.append_chunks("r", [ChunkWrite({"type": "text-delta", "payload": {"n": i}})])
        await asyncio.sleep(0.05)
    await store.close()

asyncio.run(main())
"""


async def test_reader_sees_chunks_written_by_another_process(store: Store, store_url: str) -> None:
    await store.append_chunks("r", [ChunkWrite(chunk("start", 0), "start")])
    process = python(_WRITER, store_url)
    seen: list[int] = []
    offset = 1
    deadline = asyncio.get_running_loop().time() + LONG
    while len(seen) < 5 and asyncio.get_running_loop().time() < deadline:
        entries = await store.read_chunks("r", offset)
        seen += [e.chunk["payload"]["n"] for e in entries]
        offset += len(entries)
        if not entries:
            await store.wait_for_chunks("r", offset, timeout=1.0)
    await finish(process)
    assert seen == [1, 2, 3, 4, 5]


_TAILER = """
import asyncio, json, sys
from tempo_agents.store import open_store

async def main():
    store = open_store(sys.argv[1])
    await store.read_chunks("r")
    print("ready", flush=True)
    seen, offset = [], 0
    while len(seen) < int(sys.argv[2]):
        entries = await store.read_chunks("r", offset)
        seen += [e.chunk["payload"]["n"] for e in entries]
        offset += len(entries)
        if not entries:
            await store.wait_for_chunks("r", offset, timeout=60)
    await store.close()
    print(json.dumps(seen))

asyncio.run(main())
"""


async def test_a_reader_in_another_process_follows_this_ones_appends(store: Store, store_url: str) -> None:
    readers = [python(_TAILER, store_url, "20") for _ in range(2)]
    for reader in readers:
        assert reader.stdout is not None
        assert await asyncio.wait_for(asyncio.to_thread(reader.stdout.readline), LONG) == "ready\n"
    for n in range(20):
        await store.append_chunks("r", [ChunkWrite(chunk("text-delta", n))])
        await asyncio.sleep(0.01)
    for reader in readers:
        assert json.loads(await finish(reader)) == list(range(20))


def waiting(
    run_id: str, call_id: str, *, at: float, agent: str = "a", thread: str | None = "t", rnd: int = 0
) -> WaitingCall:
    return WaitingCall(
        run_id=run_id,
        tool_call_id=call_id,
        task_queue="q",
        agent_id=agent,
        thread_id=thread,
        resource_id="u" if thread else None,
        call={"toolCallId": call_id, "toolName": "confirm", "suspendedAt": "2026-01-01T00:00:00Z", "round": rnd},
        suspended_at=at,
    )


def listed(page: WaitingRuns) -> list[list[str]]:
    return [[f"{call.run_id}/{call.tool_call_id}" for call in calls] for calls in page.runs]


async def test_waiting_calls_are_kept_with_their_chunk_and_dropped_with_the_answer(store: Store) -> None:
    suspended = ChunkWrite({"type": "tool-call-suspended", "payload": {"toolCallId": "c1"}}, key="s1")
    await store.record("r1", [], [suspended], waiting=WaitingChange(waits=[waiting("r1", "c1", at=1.0)]))
    await store.record(
        "r2", [], [], waiting=WaitingChange(waits=[waiting("r2", "c1", at=2.0), waiting("r2", "c2", at=3.0)])
    )
    await store.record("r3", [], [], waiting=WaitingChange(waits=[waiting("r3", "c1", at=4.0, agent="b", thread=None)]))
    assert listed(await store.waiting_runs("q")) == [["r3/c1"], ["r2/c1", "r2/c2"], ["r1/c1"]]
    assert (await store.waiting_runs("q")).total == 3
    assert (await store.waiting_runs("other")).runs == []
    assert listed(await store.waiting_runs("q", agent_id="b")) == [["r3/c1"]]
    assert listed(await store.waiting_runs("q", thread_id="t", resource_id="u")) == [["r2/c1", "r2/c2"], ["r1/c1"]]
    page = await store.waiting_runs("q", limit=1, skip=1)
    assert (listed(page), page.total) == ([["r2/c1", "r2/c2"]], 3)
    [[first]] = (await store.waiting_runs("q", limit=1, skip=2)).runs
    assert first == waiting("r1", "c1", at=1.0)
    assert (await store.read_chunks("r1"))[0].chunk["type"] == "tool-call-suspended"

    await store.record("r2", [], [ChunkWrite({"type": "tool-result"})], waiting=WaitingChange(answered=["c1"]))
    assert listed(await store.waiting_runs("q", agent_id="a")) == [["r2/c2"], ["r1/c1"]]
    finish = {"type": "finish", "payload": {"stepResult": {"reason": "stop"}}}
    await store.append_chunks("r2", [ChunkWrite(finish)])  # the run ended: nothing of it waits
    assert listed(await store.waiting_runs("q", agent_id="a")) == [["r1/c1"]]
    suspended_finish = {"type": "finish", "payload": {"stepResult": {"reason": "suspended"}}}
    await store.append_chunks("r1", [ChunkWrite(suspended_finish)])
    assert listed(await store.waiting_runs("q", agent_id="a")) == [["r1/c1"]]

    await store.forget_waiting("r1", "c1", 0)  # its answer was accepted in round 0
    assert listed(await store.waiting_runs("q", agent_id="a")) == []
    await store.record("r1", [], [], waiting=WaitingChange(waits=[waiting("r1", "c1", at=5.0, rnd=1)]))
    await store.forget_waiting("r1", "c1", 0)  # a late forget of round 0 keeps round 1's wait
    assert listed(await store.waiting_runs("q", agent_id="a")) == [["r1/c1"]]

    link = {"type": "data-child-run", "data": {"toolCallId": "c9", "childRunId": "r3"}}
    await store.append_chunks("r9", [ChunkWrite(link, key="child")])  # r3 is a sub-agent's run: its top run answers
    assert listed(await store.waiting_runs("q")) == [["r1/c1"]]
    assert await store.waiting_kept_since() > 0


async def test_an_escalation_readdresses_the_waiting_call_with_its_chunk(store: Store) -> None:
    waits = WaitingChange(
        waits=[waiting("r1", "c1", at=1.0, rnd=1), waiting("r1", "c2", at=2.0), waiting("r2", "c1", at=3.0)]
    )
    await store.record("r1", [], [], waiting=waits)
    note = ChunkWrite({"type": "data-call-escalated", "data": {"toolCallId": "c1"}}, key="call-escalated:c1:1")
    escalation = WaitingChange(readdressed=[ReaddressedCall("c1", 1, ["lead", "group:finance"])])
    await store.record("r1", [], [note], waiting=escalation)
    await store.record("r1", [], [note], waiting=escalation)  # a retried journal activity changes nothing more

    [calls_r2, calls_r1] = (await store.waiting_runs("q")).runs
    by_id = {call.tool_call_id: call for call in calls_r1}
    kept = waiting("r1", "c1", at=1.0, rnd=1)
    assert by_id["c1"].call == {**kept.call, "approvers": ["lead", "group:finance"], "escalated": True}
    assert (by_id["c1"].suspended_at, by_id["c1"].thread_id, by_id["c1"].resource_id) == (1.0, "t", "u")
    assert by_id["c2"] == waiting("r1", "c2", at=2.0)  # the run's other call and other runs' calls are untouched
    assert calls_r2 == [waiting("r2", "c1", at=3.0)]
    assert [e.chunk["type"] for e in await store.read_chunks("r1")] == ["data-call-escalated"]

    stale = [ReaddressedCall("c1", 0, ["late"]), ReaddressedCall("c9", 1, ["late"])]
    await store.record("r1", [], [], waiting=WaitingChange(readdressed=stale))  # an older round, an unknown call
    await store.record("r3", [], [], waiting=WaitingChange(readdressed=[ReaddressedCall("c1", 0, ["late"])]))
    await store.record("r1", [], [ChunkWrite({"type": "tool-result"})], waiting=WaitingChange(answered=["c2"]))
    await store.record("r1", [], [], waiting=WaitingChange(readdressed=[ReaddressedCall("c2", 0, ["late"])]))
    runs = (await store.waiting_runs("q")).runs
    assert listed(WaitingRuns(runs, 0)) == [["r2/c1"], ["r1/c1"]]  # no row made for calls that do not wait
    assert runs[1][0].call["approvers"] == ["lead", "group:finance"]
    assert runs[0] == [waiting("r2", "c1", at=3.0)]


async def test_pages_of_waiting_runs_list_every_run_once_by_its_newest_wait(store: Store) -> None:
    # 30 runs waiting on one call each, and one run waiting on 41: its newest wait the newest of all, its 40 others
    # between r14's and r15's, so a page past them must read on through the calls of a run it listed already.
    for n in range(30):
        await store.record(f"r{n:02d}", [], [], waiting=WaitingChange(waits=[waiting(f"r{n:02d}", "c", at=float(n))]))
    many = [waiting("many", f"c{k:02d}", at=14.5 + k / 1000) for k in range(40)]
    await store.record("many", [], [], waiting=WaitingChange(waits=[*many, waiting("many", "new", at=100.0)]))
    newest_first = ["many", *(f"r{n:02d}" for n in reversed(range(30)))]

    everything = await store.waiting_runs("q")
    assert [calls[0].run_id for calls in everything.runs] == newest_first
    assert everything.total == 31 and len(everything.runs[0]) == 41
    for per_page in (1, 7, 31):
        seen: list[str] = []
        for skip in range(0, 31, per_page):
            page = await store.waiting_runs("q", limit=per_page, skip=skip)
            assert page.total == 31
            seen += [calls[0].run_id for calls in page.runs]
        assert seen == newest_first
    [[last]] = (await store.waiting_runs("q", limit=1, skip=30)).runs
    assert last.run_id == "r00"


def answer(call_id: str, who: str, action: str = "approve") -> dict[str, object]:
    return {"toolCallId": call_id, "toolName": "confirm", "action": action, "answeredBy": who}


async def test_an_answer_is_kept_with_where_its_call_waited_and_listed_newest_first(store: Store) -> None:
    # 30 runs still waiting, and answers to calls of five others: the answers are listed, whatever still waits.
    for n in range(30):
        await store.record(f"w{n:02d}", [], [], waiting=WaitingChange(waits=[waiting(f"w{n:02d}", "c", at=50.0 + n)]))
    await store.record("r1", [], [], waiting=WaitingChange(waits=[waiting("r1", "c1", at=1.0)]))
    await store.record(
        "r2", [], [], waiting=WaitingChange(waits=[waiting("r2", "c1", at=2.0), waiting("r2", "c2", at=2.5, rnd=1)])
    )
    await store.record("r3", [], [], waiting=WaitingChange(waits=[waiting("r3", "c1", at=3.0, agent="b", thread=None)]))
    await store.record("r4", [], [], waiting=WaitingChange(waits=[waiting("r4", "c1", at=4.0)]))
    await store.record("child", [], [], waiting=WaitingChange(waits=[waiting("child", "c1", at=5.0)]))
    link = {"type": "data-child-run", "data": {"toolCallId": "c9", "childRunId": "child"}}
    await store.append_chunks("r1", [ChunkWrite(link, key="child")])

    await store.forget_waiting("r1", "c1", 0, GivenAnswer(10.0, answer("c1", "alice")))
    await store.forget_waiting("r2", "c2", 1, GivenAnswer(12.0, answer("c2", "bob", "decline")))
    await store.forget_waiting("r2", "c2", 1, GivenAnswer(13.0, answer("c2", "late")))  # a second forget: kept once
    await store.forget_waiting("r3", "c1", 0, GivenAnswer(11.0, answer("c1", "carol", "resume")))
    await store.forget_waiting("r4", "c1", 0)  # no answer given (a run that ended): nothing kept
    await store.forget_waiting("r9", "c1", 0, GivenAnswer(14.0, answer("c1", "nobody")))  # never waited
    await store.forget_waiting("child", "c1", 0, GivenAnswer(15.0, answer("c1", "dave")))  # answered via r1

    everything = await store.answered_calls("q")
    assert [(a.run_id, a.tool_call_id, a.answer["answeredBy"]) for a in everything.answers] == [
        ("r2", "c2", "bob"),
        ("r3", "c1", "carol"),
        ("r1", "c1", "alice"),
    ]
    assert everything.total == 3
    bob = everything.answers[0]
    assert (bob.task_queue, bob.agent_id, bob.thread_id, bob.resource_id) == ("q", "a", "t", "u")
    assert (bob.answered_at, bob.answer) == (12.0, answer("c2", "bob", "decline"))
    assert [a.run_id for a in (await store.answered_calls("q", agent_id="b")).answers] == ["r3"]
    page = await store.answered_calls("q", limit=1, skip=1)
    assert ([a.run_id for a in page.answers], page.total) == (["r3"], 3)
    assert (await store.answered_calls("q", limit=2, skip=2)).answers[0].run_id == "r1"
    assert (await store.answered_calls("other")).total == 0
    assert listed(await store.waiting_runs("q", limit=1)) == [["w29/c"]]  # the waits answered are gone, others stay
    assert (await store.waiting_runs("q")).total == 31  # the 30, and r2 (its c1 still waits)


async def test_an_older_sqlite_store_keeps_waiting_calls_once_opened(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:  # a store file from before waiting calls were kept, with a sub-agent's link
        db.execute("CREATE TABLE journal (run_id TEXT NOT NULL, seq INTEGER NOT NULL, key TEXT, body TEXT NOT NULL, "
                   "PRIMARY KEY (run_id, seq))")  # fmt: skip
        link = {"type": "data-child-run", "data": {"toolCallId": "c1", "childRunId": "parent-c1"}}
        db.execute("INSERT INTO journal VALUES ('parent', 0, 'k', ?)", (json.dumps(link),))
    store = open_store(f"sqlite:///{path}")
    child_wait = WaitingCall(
        run_id="parent-c1", tool_call_id="x", task_queue="q", agent_id="a", thread_id=None, resource_id=None,
        call={"toolCallId": "x"}, suspended_at=1.0,
    )  # fmt: skip
    await store.record("parent-c1", [], [], waiting=WaitingChange(waits=[child_wait]))
    assert (await store.waiting_runs("q")).runs == []
    since = await store.waiting_kept_since()
    await store.close()
    reopened = open_store(f"sqlite:///{path}")
    assert await reopened.waiting_kept_since() == since  # noted once, when the store first kept waits
    await reopened.close()
