"""What the bench scripts share: their argument parsing, the embedded dev server, the store, small statistics,
output, the entry point."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import statistics
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from tempo_agents.store.url import redact
from tempo_agents.worker.dev_server import DEV_SERVER_TUNING, find_temporal_binary
from tempo_agents.workflows import search_attributes

SERVER_ARGS = DEV_SERVER_TUNING
"""The dev server's tuning, as ``tempo-agents dev`` and the tests run it; ``--stock-server`` leaves it out."""


async def start_server(db_file: Path | None, *, stock: bool) -> WorkflowEnvironment:
    """The embedded dev server; its start-up banner goes to /dev/null instead of into the tables."""
    saved, devnull = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    sys.stdout.flush()
    os.dup2(devnull, 1)
    try:
        return await WorkflowEnvironment.start_local(
            dev_server_existing_path=find_temporal_binary(),
            ui=False,
            data_converter=pydantic_data_converter,
            dev_server_log_level="error",
            dev_server_database_filename=str(db_file) if db_file else None,
            dev_server_extra_args=[] if stock else list(SERVER_ARGS),
            search_attributes=search_attributes.ALL,
        )
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


STORE_HELP = (
    "the App's store: sqlite (a file in a temporary directory, the default), postgresql (a throwaway server "
    "this script starts, as bench/store.py does) or a postgresql:// URL"
)


DB_FILE_HELP = "file-backed dev server (as `tempo-agents dev`), else in memory"
STOCK_SERVER_HELP = (
    "keep the dev server's default transfer-queue poll limit (20/s), which adds ~40 ms per workflow task"
)


def bench_parser(description: str | None) -> argparse.ArgumentParser:
    """A bench script's parser: its docstring as the description, printed as written."""
    return argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)


def add_dev_server_arguments(parser: argparse.ArgumentParser, *, stock_server: bool = True) -> None:
    """``--db-file`` (a file-backed embedded dev server, else in memory) and, unless ``stock_server`` is false,
    ``--stock-server`` (the dev server without ``SERVER_ARGS``)."""
    parser.add_argument("--db-file", type=Path, default=None, help=DB_FILE_HELP)
    if stock_server:
        parser.add_argument("--stock-server", action="store_true", help=STOCK_SERVER_HELP)


def add_store_argument(parser: argparse.ArgumentParser) -> None:
    """``--store``: the App's store (:func:`store_choice`, opened by :func:`bench_store`)."""
    parser.add_argument("--store", type=store_choice, default="sqlite", help=STORE_HELP)


def store_choice(text: str) -> str:
    """``--store``'s argparse type: ``sqlite``, ``postgresql`` or a ``postgresql://`` (``postgres://``) URL."""
    if text in ("sqlite", "postgresql") or text.startswith(("postgresql://", "postgres://")):
        return text
    raise argparse.ArgumentTypeError(f"expected sqlite, postgresql or a postgresql:// URL, got {text!r}")


def store_kind(choice: str) -> str:
    """``sqlite`` or ``postgresql``: the name the figures are quoted under."""
    return "sqlite" if choice == "sqlite" else "postgresql"


def describe_store(choice: str) -> str:
    """One phrase for a header: which store, and where."""
    if choice == "sqlite":
        return "sqlite (a file in a temporary directory)"
    if choice == "postgresql":
        return "postgresql (a throwaway server in a temporary directory, fsync=off, tests/support/postgres_server.py)"
    return f"postgresql at {redact(choice)}"


@dataclass
class BenchStore:
    url: str
    server_pid: int | None = None
    """The throwaway PostgreSQL server's postmaster (its backends are its children), else ``None``."""


@contextlib.contextmanager
def bench_store(choice: str, directory: Path) -> Iterator[BenchStore]:
    """The store ``--store`` names: a SQLite file in ``directory``, a database on a throwaway PostgreSQL server
    (stopped on the way out), or the URL given. Raises ``RuntimeError`` when PostgreSQL is missing."""
    if choice == "sqlite":
        yield BenchStore(f"sqlite:///{directory / 'store.db'}")
    elif choice == "postgresql":
        from tests.support.postgres_server import PostgresServer, find_bindir

        bindir = find_bindir()
        if bindir is None:
            raise RuntimeError("--store postgresql: PostgreSQL is not installed (apt-get install postgresql)")
        server = PostgresServer(bindir)
        try:
            yield BenchStore(server.create_database(), server.process.pid)
        finally:
            server.stop()
    else:
        yield BenchStore(choice)


def busy_warning() -> str:
    return f" - other processes are using the {os.cpu_count()} CPUs: expect noisy figures"


def quantile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


_TICK = os.sysconf("SC_CLK_TCK")


def process_cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far (``/proc``, Linux)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def out(line: str = "") -> None:
    print(line, flush=True)


def run_as_module(module: str) -> NoReturn:
    """Run ``bench.<module>.main`` imported as a module (so the sandbox can pass its workflows through) and
    leave with ``os._exit``: the SDK sometimes aborts at interpreter exit (temporal-notes.md)."""
    main: Callable[[], int] = importlib.import_module(f"bench.{module}").main
    try:
        code = main()
    except Exception:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
