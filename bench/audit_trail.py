"""What the audit trail costs: appends per second to one store's chain, from one process and from several at once,
and how long verifying the chain takes.

    python bench/audit_trail.py [--records 2000] [--writers 2] [--store sqlite|postgresql|URL]

- append, 1 writer: this process appends ``--records`` records one ``append_audit`` at a time (what a route's intent
  or completion costs the server), and reports records per second and the p50/p95 of one append;
- append, N processes: ``--writers`` processes append ``--records`` / N records each at once (one chain: the writers
  take turns on its head), records per second from the first append to the last;
- verify: ``verify_chain`` over the whole chain (read in pages of 1000), records per second.

The last line is quotable::

    audit_trail: sqlite append=..records/s p50=..ms p95=..ms (2 processes ..records/s) verify=..records/s
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.support.postgres_server, from any directory

from bench._common import add_store_argument, bench_parser, bench_store, out, quantile, store_kind
from tempo_agents.audit import DONE, AuditEntry, read_chain, verify_chain
from tempo_agents.store import open_store

ROOT = Path(__file__).resolve().parent.parent

_APPENDER = textwrap.dedent(
    """
    import asyncio, sys, time
    from tempo_agents.audit import AuditEntry
    from tempo_agents.store import open_store

    async def main(url, name, count):
        store = open_store(url)
        await store.audit_chain(0, 1)  # connected before the clock starts
        print("ready", flush=True)
        sys.stdin.readline()
        started = time.time()
        for n in range(count):
            await store.append_audit([AuditEntry(action="steer", target=f"{name}-{n}", outcome="done")])
        print(started, time.time(), flush=True)
        await store.close()

    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
    """
)


def entry(n: int) -> AuditEntry:
    return AuditEntry(action="cancel", target=f"run-{n}", outcome=DONE, principal="alice", tenant="acme")


async def one_writer(url: str, count: int) -> tuple[float, list[float]]:
    store = open_store(url)
    await store.audit_chain(0, 1)
    took: list[float] = []
    started = time.perf_counter()
    for n in range(count):
        before = time.perf_counter()
        await store.append_audit([entry(n)])
        took.append(time.perf_counter() - before)
    elapsed = time.perf_counter() - started
    await store.close()
    return count / elapsed, took


def many_writers(url: str, count: int, writers: int) -> float:
    each = count // writers
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _APPENDER, url, f"w{n}", str(each)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for n in range(writers)
    ]
    for process in processes:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    spans = []
    for process in processes:
        assert process.stdout is not None
        first, last = (float(part) for part in process.stdout.readline().split())
        spans.append((first, last))
        process.wait()
    return each * writers / (max(last for _, last in spans) - min(first for first, _ in spans))


async def verify(url: str) -> tuple[int, float, bool]:
    store = open_store(url)
    started = time.perf_counter()
    walk = await verify_chain(read_chain(store.audit_chain))
    elapsed = time.perf_counter() - started
    await store.close()
    return walk.records, walk.records / elapsed, walk.broken is None


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--writers", type=int, default=2)
    add_store_argument(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory, bench_store(args.store, Path(directory)) as store:
        rate, took = asyncio.run(one_writer(store.url, args.records))
        concurrent = many_writers(store.url, args.records, args.writers)
        records, verified, intact = asyncio.run(verify(store.url))
    if not intact:
        out(f"audit_trail: the chain of {records} records did not verify")
        return 1
    out(
        f"audit_trail: {store_kind(args.store)} append={rate:.0f}records/s p50={quantile(took, 0.5) * 1000:.2f}ms "
        f"p95={quantile(took, 0.95) * 1000:.2f}ms ({args.writers} processes {concurrent:.0f}records/s) "
        f"verify={verified:.0f}records/s ({records} records)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
