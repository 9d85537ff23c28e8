"""A throwaway PostgreSQL server in a temporary directory, for the tests and the benches.

Nothing relies on a server already running: this starts Debian's ``postgres`` binary (``apt-get install
postgresql``; binaries under ``/usr/lib/postgresql/*/bin``, or ``$TEMPO_AGENTS_PG_BIN``) on a free port of
127.0.0.1 with a fresh data directory, trust authentication for the user ``tempo``, and durability switched
off (``fsync=off``: a test database need not survive a power cut) unless it is asked to be ``durable`` (``fsync``
and ``synchronous_commit`` on, as in production: for outage tests that kill the server, which a non-durable one
may answer by losing acknowledged commits). :meth:`PostgresServer.halt` and :meth:`PostgresServer.start_again`
stop it (a fast shutdown, or SIGKILL of the postmaster) and start it again on the same data directory and port.
PostgreSQL refuses to run as root, so as root it runs as the ``postgres`` user. The server is a direct child of
this process that dies with it (a parent-death signal, set by ``setpriv``: ``child_processes.py``), so a killed test
session leaves no server behind.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import psycopg

from tests.support.child_processes import dying_with_this_process

USER = "tempo"


def find_bindir() -> Path | None:
    """The directory of ``initdb`` and ``postgres``: ``$TEMPO_AGENTS_PG_BIN``, the newest Debian install, or
    ``PATH``; ``None`` when PostgreSQL is not installed."""
    configured = os.environ.get("TEMPO_AGENTS_PG_BIN")
    if configured:
        return Path(configured)
    installed = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: [int(n) for n in re.findall(r"\d+", p.parent.parent.name)] or [0],
    )
    if installed:
        return installed[-1].parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _children(pid: int) -> list[int]:
    """The processes ``pid`` started (the postmaster's sessions and helpers), from ``/proc``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


class PostgresServer:
    """One running server; :meth:`create_database` gives each test its own database."""

    def __init__(self, bindir: Path, *, durable: bool = False) -> None:
        self.bindir = bindir
        self.durable = durable
        self.root = Path(tempfile.mkdtemp(prefix="tempo-agents-pg-"))
        self.port = _free_port()
        self._user: tuple[int, int] | None = None
        if os.geteuid() == 0:
            account = pwd.getpwnam("postgres")
            self._user = (account.pw_uid, account.pw_gid)
            os.chown(self.root, *self._user)
        try:
            self._start(bindir)
        except BaseException:
            self.stop()
            raise

    def _start(self, bindir: Path) -> None:
        data = self.root / "data"
        initdb = [str(bindir / "initdb"), "-D", str(data), "-U", USER, "--auth=trust", "-E", "UTF8", "--no-sync"]
        done = subprocess.run(self._as_server(initdb), capture_output=True)
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed ({done.returncode}): {(done.stdout + done.stderr).decode()[-2000:]}")
        self._log = (self.root / "server.log").open("ab")
        self._launch()
        self._wait_ready()

    def _launch(self) -> None:
        durability = "on" if self.durable else "off"
        settings = {
            "listen_addresses": "127.0.0.1",
            "port": str(self.port),
            "unix_socket_directories": str(self.root),
            "fsync": durability,
            "synchronous_commit": durability,
            "full_page_writes": durability,
            "max_connections": "400",
            "shared_buffers": "32MB",
        }
        args = [f"--{name.replace('_', '-')}={value}" for name, value in settings.items()]
        self.process = subprocess.Popen(
            self._as_server([str(self.bindir / "postgres"), "-D", str(self.root / "data"), *args]),
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def _as_server(self, command: list[str]) -> list[str]:
        """``command`` as the server's user, dying with this process (SIGQUIT: PostgreSQL's immediate shutdown)."""
        return dying_with_this_process(command, signal="QUIT", user=self._user)

    def halt(self, how: str = "fast") -> None:
        """Stop the server, keeping its data: ``"fast"`` (a fast shutdown: sessions are ended, then a
        checkpoint) or ``"kill"`` (SIGKILL of the postmaster: its sessions end when they notice, and the next
        start recovers from the write-ahead log). Returns once none of its processes is left."""
        signals = {"fast": signal.SIGINT, "kill": signal.SIGKILL}
        sessions = _children(self.process.pid)
        self.process.send_signal(signals[how])
        self.process.wait(60)
        # A session outlives a killed postmaster for a moment and may still answer its client: halted means gone.
        deadline = time.monotonic() + 60
        while any(_alive(pid) for pid in sessions) and time.monotonic() < deadline:
            time.sleep(0.01)

    def start_again(self, timeout: float = 60.0) -> None:
        """Start the halted server on the same data directory and port; returns once it accepts connections.
        After a SIGKILL the old sessions may hold the shared memory a moment longer: the start is tried again."""
        deadline = time.monotonic() + timeout
        while True:
            self._launch()
            try:
                self._wait_ready(timeout=max(1.0, deadline - time.monotonic()))
                return
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def _wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"PostgreSQL exited at start: {(self.root / 'server.log').read_text()[-2000:]}")
            try:
                psycopg.connect(self.url(), connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def create_database(self) -> str:
        """A new empty database; returns its URL."""
        name = f"t_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
        return self.url(name)

    def stop(self) -> None:
        """Stop the server at once (its data is thrown away) and remove its directory."""
        process = getattr(self, "process", None)
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGQUIT)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log = getattr(self, "_log", None)
        if log is not None:
            log.close()
        with contextlib.suppress(OSError):
            shutil.rmtree(self.root)
