"""A throwaway PostgreSQL server in a temporary directory, for the tests and the benches.

Nothing relies on a server already running: this starts Debian's ``postgres`` binary (``apt-get install
postgresql``; binaries under ``/usr/lib/postgresql/*/bin``, or ``$TEMPO_AGENTS_PG_BIN``) on a free port of
127.0.0.1 with a fresh data directory, trust authentication for the user ``tempo``, and durability switched
off (``fsync=off``: a test database need not survive a power cut). PostgreSQL refuses to run as root, so as
root it runs as the ``postgres`` user. The server is a direct child of this process that dies with it
(``PR_SET_PDEATHSIG``), so a killed test session leaves no server behind.
"""

from __future__ import annotations

import contextlib
import ctypes
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
from collections.abc import Callable
from pathlib import Path

import psycopg

USER = "tempo"
_PR_SET_PDEATHSIG = 1


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


def _as_user(uid: int | None, gid: int | None) -> Callable[[], None]:
    def preexec() -> None:
        if gid is not None and uid is not None:
            os.setgid(gid)
            os.setuid(uid)
        # After the change of user, which clears it: the server dies with the process that started it.
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGQUIT)

    return preexec


class PostgresServer:
    """One running server; :meth:`create_database` gives each test its own database."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="tempo-agents-pg-"))
        self.port = _free_port()
        uid = gid = None
        if os.geteuid() == 0:
            account = pwd.getpwnam("postgres")
            uid, gid = account.pw_uid, account.pw_gid
            os.chown(self.root, uid, gid)
        try:
            self._start(bindir, _as_user(uid, gid))
        except BaseException:
            self.stop()
            raise

    def _start(self, bindir: Path, preexec: Callable[[], None]) -> None:
        data = self.root / "data"
        subprocess.run(
            [str(bindir / "initdb"), "-D", str(data), "-U", USER, "--auth=trust", "-E", "UTF8", "--no-sync"],
            check=True,
            capture_output=True,
            preexec_fn=preexec,
        )
        settings = {
            "listen_addresses": "127.0.0.1",
            "port": str(self.port),
            "unix_socket_directories": str(self.root),
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
            "max_connections": "400",
            "shared_buffers": "32MB",
        }
        args = [f"--{name.replace('_', '-')}={value}" for name, value in settings.items()]
        self._log = (self.root / "server.log").open("wb")
        self.process = subprocess.Popen(
            [str(bindir / "postgres"), "-D", str(data), *args],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            preexec_fn=preexec,
        )
        self._wait_ready()

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
