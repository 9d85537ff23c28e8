"""The ``tempo-agents`` command: workers, the embedded dev server, one-off runs and the demo.

Every command prints errors as one line on stderr and exits non-zero (2 for a bad command line
or ``--app``, 1 for anything else); set ``TEMPO_AGENTS_DEBUG=1`` to see tracebacks.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import importlib.util
import inspect
import io
import json
import os
import select
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn, TextIO

from tempo_agents.agent.app import App
from tempo_agents.agent.chunks import (
    Chunk,
    DataChunk,
    ErrorChunk,
    FinishChunk,
    StartChunk,
    StepFinishChunk,
    StepResetChunk,
    StepStartChunk,
    TextDeltaChunk,
    ToolCallChunk,
    ToolCallDeltaChunk,
    ToolCallSuspendedChunk,
    ToolErrorChunk,
    ToolInputStreamingEndChunk,
    ToolInputStreamingStartChunk,
    ToolOutputChunk,
    ToolResultChunk,
)
from tempo_agents.agent.stream import AgentStream
from tempo_agents.cli.demo import DEMO_AGENT, DEMO_PROMPT, create_app
from tempo_agents.errors import ConfigurationError, TempoAgentsError
from tempo_agents.tools.builtin.submit_plan import PROJECT_ROOT_ENV
from tempo_agents.worker.dev_server import DEFAULT_DB_FILENAME, DatabaseInUseError, DevServer
from tempo_agents.workflows.payloads import PendingCall

DEFAULT_ADDRESS = "localhost:7233"
DEFAULT_NAMESPACE = "default"


class CliError(Exception):
    """An error the CLI reports as one line on stderr, exiting with ``exit_code``."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


# Loading the app ------------------------------------------------------------------------------


def load_app(spec: str) -> App:
    """Import the App that ``module:attr`` names (``attr`` defaults to ``app``).

    The module is importable from the current directory too; ``path/to/file.py:attr`` loads a
    file. ``attr`` may also name a function that returns an App.
    """
    module_name, _, attr = spec.partition(":")
    attr = attr or "app"
    if not module_name:
        raise CliError(f"--app {spec!r}: give it as module:attribute, e.g. myproject.agents:app", 2)
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    module = _import_app_module(spec, module_name)
    value: Any = module
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise CliError(f"--app {spec}: module '{module.__name__}' has no attribute '{attr}'", 2) from None
    if inspect.isfunction(value):
        try:
            value = value()
        except Exception as error:
            raise CliError(f"--app {spec}: calling {attr}() failed: {_one_line(error)}", 2) from error
    if not isinstance(value, App):
        raise CliError(f"--app {spec}: '{attr}' is a {type(value).__name__}, not a tempo_agents.App", 2)
    return value


def _import_app_module(spec: str, module_name: str) -> ModuleType:
    if module_name.endswith(".py") or os.sep in module_name or "/" in module_name:
        return _import_file(Path(module_name), f"--app {spec}")
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name or module_name
        if module_name == missing or module_name.startswith(missing + "."):
            raise CliError(
                f"--app {spec}: no module named '{missing}' (looked in the current directory and on sys.path)", 2
            ) from None
        raise CliError(f"--app {spec}: importing '{module_name}' failed: {_one_line(error)}", 2) from error
    except Exception as error:
        raise CliError(f"--app {spec}: importing '{module_name}' failed: {_one_line(error)}", 2) from error


def _import_file(path: Path, what: str) -> ModuleType:
    """Import a Python file as a module named after it; errors name ``what`` (e.g. ``--app x.py:app``)."""
    if not path.is_file():
        raise CliError(f"{what}: no file {path}", 2)
    name = path.stem
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise CliError(f"{what}: cannot import {path}", 2)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        raise CliError(f"{what}: importing {path} failed: {_one_line(error)}", 2) from error
    return module


def configure_app(app: App, *, store: str | None = None, task_queue: str | None = None) -> App:
    """Apply ``--store`` and ``--task-queue`` to a loaded App."""
    if task_queue:
        app.task_queue = task_queue
    if store:
        # App has no public way to swap its store before first use; the CLI is the one caller.
        app._store_source = store
        app._store = None
        try:
            app.store  # noqa: B018 - open it now so a bad URL is reported here
        except ConfigurationError as error:
            raise CliError(f"--store: {error.message}", 2) from error
    return app


async def connect(app: App, address: str, namespace: str) -> None:
    """Connect the App to Temporal, checking that the server answers and the namespace exists."""
    from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
    from temporalio.service import RPCError, RPCStatusCode

    try:
        client = await asyncio.wait_for(app.connect(address, namespace=namespace), 15)
    except TimeoutError:
        raise CliError(f"cannot reach Temporal at {address}: no answer within 15 s") from None
    except Exception as error:
        raise CliError(f"cannot reach Temporal at {address}: {_connect_reason(error)}") from None
    try:
        await client.workflow_service.describe_namespace(
            DescribeNamespaceRequest(namespace=namespace), timeout=timedelta(seconds=10)
        )
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            raise CliError(f"namespace '{namespace}' does not exist on the Temporal server at {address}") from None
        raise CliError(f"Temporal at {address} refused to describe namespace '{namespace}': {error.message}") from None


def _connect_reason(error: BaseException) -> str:
    text = str(error).removeprefix("Failed client connect: ")
    for marker in ('message: "', "message: '"):
        if marker in text:
            return text.split(marker, 1)[1].split(marker[-1], 1)[0]
    return _one_line(text)


def _one_line(error: BaseException | str, limit: int = 300) -> str:
    text = (
        error
        if isinstance(error, str)
        else (f"{type(error).__name__}: {error}" if str(error) else type(error).__name__)
    )
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Printing a run -------------------------------------------------------------------------------


def _json(value: Any, limit: int = 400) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit} more characters)"


@dataclass
class ChunkPrinter:
    """Writes a run's chunks readably: text inline, everything else on its own line.

    ``offsets`` prefixes every line with the chunk's journal offset and shows the run's lifecycle
    chunks (start, steps) too; without it only text, tool activity, errors and the finish show.
    """

    out: TextIO
    offsets: bool = False
    in_text: bool = False
    finish: FinishChunk | None = None
    errors: list[str] = field(default_factory=list)

    def _line(self, chunk: Chunk, label: str, body: str) -> None:
        self._end_text()
        prefix = f"{chunk.offset if chunk.offset is not None else '':>4}  " if self.offsets else "  "
        self.out.write(f"{prefix}{label:<12} {body}\n")
        self.out.flush()

    def _end_text(self) -> None:
        if self.in_text:
            self.out.write("\n")
            self.in_text = False

    def write(self, chunk: Chunk) -> None:
        if isinstance(chunk, TextDeltaChunk):
            if not self.in_text:
                if self.offsets:
                    self.out.write(f"{chunk.offset if chunk.offset is not None else '':>4}  {'text':<12} ")
                self.in_text = True
            self.out.write(chunk.payload.text)
            self.out.flush()
        elif isinstance(chunk, ToolInputStreamingStartChunk | ToolCallDeltaChunk | ToolInputStreamingEndChunk):
            return  # argument previews: the tool-call line that follows shows the whole call
        elif isinstance(chunk, ToolCallChunk):
            call = chunk.payload

            self._line(chunk, "tool-call", f"{call.tool_name} {_json(call.args)}  [{call.tool_call_id}]")
        elif isinstance(chunk, ToolOutputChunk):
            self._line(chunk, "tool-output", f"{chunk.payload.tool_name} {_json(chunk.payload.output)}")
        elif isinstance(chunk, ToolResultChunk):
            result = chunk.payload
            marker = " (error)" if result.is_error else ""
            self._line(chunk, "tool-result", f"{result.tool_name}{marker} {_json(result.result)}")
        elif isinstance(chunk, ToolErrorChunk):
            self._line(chunk, "tool-error", f"{chunk.payload.tool_name}: {chunk.payload.error}")
        elif isinstance(chunk, ErrorChunk):
            self.errors.append(chunk.payload.error)
            self._line(chunk, "error", chunk.payload.error)
        elif isinstance(chunk, FinishChunk):
            self.finish = chunk
            self._line(chunk, "finish", self.summary())
        elif isinstance(chunk, DataChunk):
            extra = chunk.model_dump(mode="json", exclude={"type", "run_id", "from_", "offset"}, exclude_none=True)
            self._line(chunk, chunk.type, _json(extra))
        elif isinstance(chunk, StepResetChunk):
            step = chunk.payload.step_number
            self._line(chunk, "step-reset", f"step {step} retried (attempt {chunk.payload.attempt}), its text restarts")
        elif chunk.type in _LIFECYCLE and not self.offsets:
            return
        elif isinstance(chunk, StartChunk):
            self._line(chunk, "start", f"agent {chunk.payload.agent_id}")
        elif isinstance(chunk, StepStartChunk):
            self._line(chunk, "step-start", f"step {chunk.payload.step_number}")
        elif isinstance(chunk, StepFinishChunk):
            outcome = chunk.payload.step_result
            more = ", continues" if outcome.is_continued else ""
            usage = _usage(chunk.payload.output.usage)
            self._line(chunk, "step-finish", f"reason {outcome.reason}{more}, usage {usage}")
        else:
            # Chunk types without a dedicated line (suspensions, approvals, ...): type and payload.
            wire = chunk.model_dump(mode="json", by_alias=True, exclude_none=True)
            self._line(chunk, chunk.type, _json(wire.get("payload")))

    def close(self) -> None:
        self._end_text()
        self.out.flush()

    def summary(self) -> str:
        if self.finish is None:
            return "the run ended without a finish chunk"
        payload = self.finish.payload
        return (
            f"reason {payload.step_result.reason}, {payload.output.steps} step(s), usage {_usage(payload.output.usage)}"
        )

    @property
    def failed(self) -> bool:
        return bool(self.errors) or self.finish is None or self.finish.payload.step_result.reason == "error"


_LIFECYCLE = frozenset({"start", "step-start", "step-finish"})
"""Shown only with offsets: a plain run print keeps to text, tool activity and the outcome."""


def _usage(usage: Any) -> str:
    return f"{usage.input_tokens} in + {usage.output_tokens} out = {usage.total_tokens} tokens"


# Signals --------------------------------------------------------------------------------------


class StopSignals:
    """SIGINT/SIGTERM set :attr:`stop`; a second one runs the ``on_force`` callbacks and exits at once."""

    def __init__(self) -> None:
        self.stop = asyncio.Event()
        self.on_force: list[Callable[[], None]] = []
        self._received = 0

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._handle)

    def _handle(self) -> None:
        self._received += 1
        if self._received == 1:
            _err("stopping (press Ctrl-C again to stop at once)")
            self.stop.set()
            return
        for callback in self.on_force:
            with contextlib.suppress(Exception):
                callback()
        _exit(130)


async def _until_stopped(signals: StopSignals, worker_task: asyncio.Task[None]) -> None:
    """Wait for a stop signal; fail if the worker stops on its own first."""
    stop_task = asyncio.create_task(signals.stop.wait())
    try:
        await asyncio.wait({stop_task, worker_task}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop_task.cancel()
    if worker_task.done():
        error = worker_task.exception()
        raise CliError(f"the worker stopped: {_one_line(error) if error else 'it exited'}")


async def _run_worker(app: App, signals: StopSignals, graceful_seconds: float, ready: Callable[[], None]) -> None:
    worker = app.worker(graceful_shutdown_timeout=timedelta(seconds=graceful_seconds))
    worker_task = asyncio.create_task(worker.run())
    await asyncio.sleep(0)
    ready()
    try:
        await _until_stopped(signals, worker_task)
    finally:
        if not worker_task.done():
            await worker.shutdown()
        with contextlib.suppress(BaseException):
            await worker_task


# Commands -------------------------------------------------------------------------------------


async def cmd_worker(args: argparse.Namespace) -> int:
    app = configure_app(load_app(args.app), store=args.store, task_queue=args.task_queue)
    await connect(app, args.address, args.namespace)
    signals = StopSignals()
    signals.install()

    def ready() -> None:
        _out(
            f"worker for {args.app} polling task queue '{app.task_queue}' on {args.address} "
            f"(namespace {args.namespace}); Ctrl-C to stop"
        )

    await _run_worker(app, signals, args.graceful_timeout, ready)
    _out("worker stopped")
    return 0


async def cmd_dev(args: argparse.Namespace) -> int:
    app = configure_app(load_app(args.app), store=args.store, task_queue=args.task_queue) if args.app else None
    signals = StopSignals()
    signals.install()
    server = DevServer(db_filename=args.db_filename, port=args.port)
    try:
        await server.start()
    except TempoAgentsError as error:
        hint = "; --port 0 picks a free port" if "already in use" in error.message else ""
        raise CliError(error.message + hint) from None
    signals.on_force.append(server.kill)
    try:
        _out(f"Temporal dev server at {server.address} (namespace default, data {args.db_filename})")
        if app is None:
            _out(
                "no --app given, so no worker runs here; start one with: "
                f"tempo-agents worker --address {server.address} --app module:attr"
            )
            _out("Ctrl-C to stop")
            await signals.stop.wait()
        else:
            await connect(app, server.address, "default")

            def ready() -> None:
                _out(f"worker for {args.app} polling task queue '{app.task_queue}'; Ctrl-C to stop")

            await _run_worker(app, signals, args.graceful_timeout, ready)
    finally:
        await server.stop()
    _out("stopped")
    return 0


async def cmd_run(args: argparse.Namespace) -> int:
    app = configure_app(load_app(args.app), store=args.store, task_queue=args.task_queue)
    try:
        app.agent(args.agent)
    except ConfigurationError as error:
        raise CliError(error.message, 2) from None
    await connect(app, args.address, args.namespace)
    if not await _has_pollers(app):
        _err(
            f"warning: no worker is polling task queue '{app.task_queue}' right now; the run waits until one does "
            f"(tempo-agents worker --app {args.app} --address {args.address})"
        )
    stream = await app.agent(args.agent).stream(args.prompt)
    _out(f"run {stream.run_id} (agent {args.agent})")
    printer = ChunkPrinter(sys.stdout, offsets=args.offsets)
    async for chunk in stream.full_stream:
        printer.write(chunk)
    printer.close()
    return 1 if printer.failed else 0


async def _has_pollers(app: App) -> bool:
    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

    client = app.client
    try:
        response = await client.workflow_service.describe_task_queue(
            DescribeTaskQueueRequest(
                namespace=client.namespace,
                task_queue=TaskQueue(name=app.task_queue),
                task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
            ),
            timeout=timedelta(seconds=5),
        )
    except Exception:
        return True
    return bool(response.pollers)


@dataclass
class _DemoData:
    """Where the demo keeps its data, and what it created there (removed unless --keep-data)."""

    directory: Path
    temporary: bool
    made_directory: bool = False
    created: list[Path] = field(default_factory=list)

    @property
    def db(self) -> Path:
        return self.directory / "temporal.db"

    @property
    def store(self) -> Path:
        return self.directory / "store.db"

    def cleanup(self) -> None:
        if self.temporary:
            shutil.rmtree(self.directory, ignore_errors=True)
            return
        for path in self.created:
            for sibling in _sqlite_files(path):
                with contextlib.suppress(OSError):
                    sibling.unlink()
        if self.made_directory:
            with contextlib.suppress(OSError):
                self.directory.rmdir()  # only when nothing else is in it


def _sqlite_files(path: Path) -> Iterator[Path]:
    yield path
    for suffix in ("-wal", "-shm", "-journal", ".lock"):
        yield path.with_name(path.name + suffix)
    if path.suffix == ".db":
        yield path.with_suffix(".log")


# The demo's printer and prompts -------------------------------------------------------------------

TASK_ICONS = {"completed": "✓", "in_progress": "▸", "pending": "○"}
"""How the demo marks a task's status."""
TASK_TOOLS = frozenset({"task_write", "task_update", "task_complete", "task_check"})


@dataclass
class DemoPrinter(ChunkPrinter):
    """The demo's printer: mode changes, task lists and suspensions as readable blocks.

    Task lists render as a block under a ``tasks`` line each time they change (an in-progress task
    shows its ``activeForm``); built-in tools' ``{content, ...}`` results show their text; long string
    arguments (a plan file's content) are shortened.
    """

    mode: str | None = None
    mode_changes: list[tuple[str, str]] = field(default_factory=list)
    tasks: list[dict[str, Any]] = field(default_factory=list)

    def write(self, chunk: Chunk) -> None:
        if isinstance(chunk, DataChunk) and chunk.type == "data-mode":
            data = _data_of(chunk)
            previous, mode = str(data.get("previousMode") or "none"), str(data.get("mode") or "none")
            self.mode_changes.append((previous, mode))
            self.mode = mode
            self._line(chunk, "mode", f"{previous} → {mode}")
        elif isinstance(chunk, DataChunk) and chunk.type == "data-task-updated":
            tasks = _data_of(chunk).get("tasks")
            self.tasks = [task for task in tasks if isinstance(task, dict)] if isinstance(tasks, list) else []
            done = sum(1 for task in self.tasks if task.get("status") == "completed")
            self._line(chunk, "tasks", f"{done}/{len(self.tasks)} completed")
            for line in render_tasks(self.tasks):
                self.out.write(f"{'':>{self._indent}}{line}\n")
            self.out.flush()
        elif isinstance(chunk, ToolCallSuspendedChunk):
            waiting = chunk.payload
            shown = waiting.suspend_payload if isinstance(waiting.suspend_payload, dict) else {}
            about = f" on {shown['path']}" if isinstance(shown.get("path"), str) else ""
            self._line(chunk, "suspended", f"{waiting.tool_name} waits for a decision{about}  [{waiting.tool_call_id}]")
        elif isinstance(chunk, ToolCallChunk):
            call = chunk.payload
            tasks = call.args.get("tasks") if isinstance(call.args, dict) else None
            args = f'{{"tasks": [{len(tasks)} tasks]}}' if isinstance(tasks, list) else _json(_brief(call.args))
            self._line(chunk, "tool-call", f"{call.tool_name} {args}  [{call.tool_call_id}]")
        elif isinstance(chunk, ToolResultChunk) and _content_of(chunk.payload.result) is not None:
            result = chunk.payload
            failed = result.is_error or (isinstance(result.result, dict) and bool(result.result.get("isError")))
            if result.tool_name in TASK_TOOLS and not failed:
                return  # the task list block above shows what changed
            marker = " (error)" if failed else ""
            lines = [line.strip() for line in (_content_of(result.result) or "").splitlines() if line.strip()]
            self._line(chunk, "tool-result", f"{result.tool_name}{marker}: {lines[0] if lines else ''}")
            for line in lines[1:]:
                self.out.write(f"{'':>{self._indent}}{line}\n")
            self.out.flush()
        else:
            super().write(chunk)

    @property
    def _indent(self) -> int:
        return 19 if self.offsets else 15


def render_tasks(tasks: Sequence[dict[str, Any]]) -> list[str]:
    """One line per task: an icon for its status, and its ``activeForm`` while in progress."""
    lines = []
    for task in tasks:
        status = str(task.get("status"))
        text = task.get("activeForm") if status == "in_progress" else task.get("content")
        lines.append(f"{TASK_ICONS.get(status, '?')} {text or task.get('content') or task.get('id')}")
    return lines


def _data_of(chunk: DataChunk) -> dict[str, Any]:
    data = (chunk.model_extra or {}).get("data")
    return data if isinstance(data, dict) else {}


def _content_of(result: Any) -> str | None:
    """The text of a built-in tool's ``{"content": ..., "isError": ...}`` result, else ``None``."""
    if isinstance(result, dict) and isinstance(result.get("content"), str) and "isError" in result:
        return str(result["content"])
    return None


def _brief(value: Any, limit: int = 48) -> Any:
    """``value`` with strings longer than ``limit`` shortened (a file's content in a tool call, say)."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]}… ({len(value)} characters)"
    if isinstance(value, dict):
        return {key: _brief(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [_brief(item, limit) for item in value]
    return value


class Prompter:
    """Asks the person at the terminal, or reads answers already waiting on a non-terminal stdin.

    On a terminal it waits for a line (a stop signal ends the wait). Otherwise it never blocks for
    long: it takes what stdin holds within a second (``printf 'n\\nToo vague\\n' | tempo-agents demo``)
    and reports no answer when there is none (``< /dev/null``, a CI job, a closed stdin).
    """

    def __init__(self, stdin: TextIO | None, out: TextIO, *, first_wait: float = 1.0) -> None:
        self.stdin = stdin
        self.out = out
        self.first_wait = first_wait
        self.interactive = _isatty(stdin)
        self._waiting: list[str] | None = None

    async def ask(self, question: str, stop: asyncio.Event) -> str | None:
        """The answer (stripped), or ``None`` for none: end of input, nothing waiting, or a stop signal."""
        self.out.write(question)
        self.out.flush()
        if self.interactive:
            answer = await self._read_terminal_line(stop)
            if answer is None:
                self.out.write("\n")
        else:
            if self._waiting is None:
                self._waiting = _read_waiting_lines(self.stdin, self.first_wait)
            answer = self._waiting.pop(0).strip() if self._waiting else None
            self.out.write(f"{answer}   (read from stdin)\n" if answer is not None else "\n")
        self.out.flush()
        return answer

    async def _read_terminal_line(self, stop: asyncio.Event) -> str | None:
        loop = asyncio.get_running_loop()
        line: asyncio.Future[str] = loop.create_future()
        stdin = self.stdin
        assert stdin is not None

        def deliver(text: str) -> None:
            if not line.done():
                line.set_result(text)

        def read() -> None:
            try:
                text = stdin.readline()
            except Exception:
                text = ""
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
                loop.call_soon_threadsafe(deliver, text)

        # A daemon thread, not the default executor: asyncio.run() would wait for a read nobody finishes.
        threading.Thread(target=read, name="demo-prompt", daemon=True).start()
        stop_task: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({line, stop_task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop_task.cancel()
        if not line.done():
            line.cancel()
            return None
        text = line.result()
        return text.strip() if text else None  # "" is the end of input (Ctrl-D)


def _isatty(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (ValueError, OSError):
        return False


def _read_waiting_lines(stream: TextIO | None, first_wait: float) -> list[str]:
    """The lines a non-terminal ``stream`` holds now (waiting up to ``first_wait`` s for the first bytes)."""
    try:
        fd = stream.fileno() if stream is not None else -1
    except (ValueError, OSError, io.UnsupportedOperation):
        return []
    if fd < 0:
        return []
    data = bytearray()
    wait = first_wait
    while len(data) < 1_000_000:
        try:
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                break
            block = os.read(fd, 65536)
        except (OSError, ValueError):
            break
        if not block:
            break
        data += block
        wait = 0.1  # more of the same input follows quickly, or not at all
    return data.decode(errors="replace").splitlines()


# The demo ---------------------------------------------------------------------------------------


async def _print_until_done(stream: AgentStream, printer: ChunkPrinter, signals: StopSignals) -> bool:
    """Print the stream until the run finishes or suspends (``True``) or a stop signal arrives (``False``)."""

    async def pump() -> None:
        async for chunk in stream.full_stream:
            printer.write(chunk)

    pump_task = asyncio.create_task(pump())
    stop_task = asyncio.create_task(signals.stop.wait())
    try:
        await asyncio.wait({pump_task, stop_task}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop_task.cancel()
        if not pump_task.done():
            pump_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump_task
    printer.close()
    if pump_task.cancelled():
        return False
    pump_task.result()
    return True


@dataclass(frozen=True)
class PlanDecision:
    """What the reviewer decided, and how the demo learned it."""

    approved: bool
    feedback: str | None
    how: str


async def _decide(args: argparse.Namespace, prompter: Prompter, signals: StopSignals) -> PlanDecision | None:
    """``--approve``/``--reject``, else the terminal's answer; ``None`` when a stop signal interrupted."""
    question = "      Approve this plan? [y/N] "
    if args.approve:
        _out(f"{question}y   (--approve)")
        return PlanDecision(True, None, "approved (--approve)")
    if args.reject:
        _out(f"{question}n   (--reject)")
        return PlanDecision(False, args.feedback, "rejected (--reject)")
    answer = await prompter.ask(question, signals.stop)
    if signals.stop.is_set():
        return None
    if answer is None:
        if prompter.interactive:
            return PlanDecision(False, None, "rejected (no answer before the end of input)")
        _out("      note: stdin is not a terminal and holds no answer, so the demo approves (--reject rejects)")
        return PlanDecision(True, None, "approved (no terminal to ask)")
    if answer.lower() in ("y", "yes"):
        return PlanDecision(True, None, "approved")
    feedback = await prompter.ask("      What should change? (Enter to skip) ", signals.stop)
    if signals.stop.is_set():
        return None
    return PlanDecision(False, feedback or None, "rejected")


def _show_plan(call: PendingCall | None, chunk_payload: Any) -> None:
    """The plan the run waits on, as the suspend payload carries it (the worker read the file)."""
    payload = call.suspend_payload if call is not None else chunk_payload
    plan = payload if isinstance(payload, dict) else {}
    title = str(plan.get("title") or "(untitled)")
    path = str(plan.get("path") or "")
    body = str(plan.get("plan") or "(the worker could not read the plan file)")
    _out(f"      ┌─ {title}" + (f"   ({path})" if path else ""))
    for line in body.splitlines():
        _out(f"      │ {line}".rstrip())
    _out("      └─")


def _suspended_chunk(chunks: Sequence[Chunk]) -> ToolCallSuspendedChunk | None:
    return next((chunk for chunk in reversed(chunks) if isinstance(chunk, ToolCallSuspendedChunk)), None)


async def cmd_demo(args: argparse.Namespace) -> int:
    if args.feedback is not None and not args.reject:
        raise CliError("--feedback goes with --reject (at the terminal, the demo asks for feedback itself)", 2)
    started = time.monotonic()
    base = Path(DEFAULT_DB_FILENAME).parent
    data = _DemoData(base, temporary=False, made_directory=not base.exists())
    data.created = [path for path in (data.db, data.store) if not path.exists()]
    servers: list[DevServer] = []
    signals = StopSignals()
    signals.install()

    def kill_servers() -> None:
        for server in servers:
            server.kill()

    signals.on_force.append(kill_servers)
    prompter = Prompter(sys.stdin, sys.stdout)
    _out(
        "tempo-agents demo: a planner agent as a durable Temporal workflow, on a scripted model (no network, no keys):"
    )
    _out("      it writes a plan, waits for your approval, switches mode and works through a task list")
    app: App | None = None
    outcome: str | None = None
    failed = True
    run_id = ""
    project: Path | None = None
    previous_root = os.environ.get(PROJECT_ROOT_ENV)
    try:
        servers.append(DevServer(db_filename=data.db, port=None))
        try:
            await servers[-1].start()
        except DatabaseInUseError as error:
            if data.made_directory:
                with contextlib.suppress(OSError):
                    base.rmdir()
            data = _DemoData(Path(tempfile.mkdtemp(prefix="tempo-agents-demo-")), temporary=True)
            _out(f"note: {error.db_path} is in use by another dev server; the demo keeps its data in {data.directory}")
            servers.append(DevServer(db_filename=data.db, port=None))
            await servers[-1].start()
        server = servers[-1]
        _out(f"[1/6] Temporal dev server ready at {server.address} (data in {data.db}) after {_since(started)}")
        if args.keep_data:
            project = data.directory / "project"
            project.mkdir(parents=True, exist_ok=True)
        else:
            project = Path(tempfile.mkdtemp(prefix="tempo-agents-demo-project-"))
        # The worker runs in this process: write_file and submit_plan find the project root here.
        os.environ[PROJECT_ROOT_ENV] = str(project.resolve())
        app = create_app(store=f"sqlite:///{data.store}")
        agent_id = DEMO_AGENT
        await connect(app, server.address, "default")
        async with app.worker():
            _out(
                f"[2/6] worker polling task queue '{app.task_queue}' "
                f"(app tempo_agents.cli.demo.app:create_app, agent '{agent_id}'); plan files go to {project}/.plans/"
            )
            prompt = DEMO_PROMPT
            memory = {"thread": f"demo-{uuid.uuid4().hex[:12]}", "resource": "demo-user"}
            stream = await app.agent(agent_id).stream(prompt, memory=memory)
            run_id = stream.run_id
            _out(f"[3/6] started run {run_id} (the id of its Temporal workflow too) in mode 'plan'; its stream, live:")
            _out(f"      prompt: {prompt}")
            _out("      offset chunk        payload")
            printer = DemoPrinter(sys.stdout, offsets=True, mode=app.agent(agent_id).default_mode)
            outcome, stream = await _follow(app, agent_id, stream, printer, prompter, signals, args)
            if outcome == "finished":
                failed = printer.failed
                result = await stream.result()
                switched = ", ".join(f"{a} → {b}" for a, b in printer.mode_changes) or "none"
                _out(f"[6/6] run {run_id} finished: {printer.summary()}")
                _out(f"      mode now '{printer.mode}' (switches: {switched})")
                if printer.tasks:
                    done = sum(1 for task in printer.tasks if task.get("status") == "completed")
                    _out(f"      tasks: {done}/{len(printer.tasks)} completed")
                    for line in render_tasks(printer.tasks):
                        _out(f"        {line}")
                _out(f"      final answer: {_last_step_text(result.chunks)}")
            elif outcome == "interrupted":
                _out(f"interrupted; run {run_id} was left unfinished")
                return 130
            else:
                _out(f"interrupted; run {run_id} was left waiting for a decision on its plan")
                return 130
    finally:
        if previous_root is None:
            os.environ.pop(PROJECT_ROOT_ENV, None)
        else:
            os.environ[PROJECT_ROOT_ENV] = previous_root
        if app is not None and run_id:
            with contextlib.suppress(Exception):
                await app.store.close()
        for server in servers:
            await server.stop()
        if not args.keep_data:
            data.cleanup()
            if project is not None:
                shutil.rmtree(project, ignore_errors=True)
    if args.keep_data:
        _out(
            f"done in {_since(started)}: stopped the worker and the server; the data is kept in {data.directory}/ "
            f"(the plan in {project}/.plans/; the run's journal in {data.store}: "
            f"app.attach({run_id!r}, offset=N) reads it from any offset)"
        )
    elif not data.temporary and not data.created:
        _out(
            f"done in {_since(started)}: stopped the worker and the server; "
            f"{data.directory}/ was there before the demo, so it stays"
        )
    else:
        _out(
            f"done in {_since(started)}: stopped the worker and the server, "
            "removed the demo's data and its plan file (--keep-data keeps them)"
        )
    return 1 if failed else 0


MAX_DECISIONS = 5
"""The demo's planner submits one plan; a run asking more often than this is stopped being followed."""


async def _follow(
    app: App,
    agent_id: str,
    stream: AgentStream,
    printer: DemoPrinter,
    prompter: Prompter,
    signals: StopSignals,
    args: argparse.Namespace,
) -> tuple[str, AgentStream]:
    """Print the run, and answer its plan reviews, until it finishes.

    Returns ``finished``, ``interrupted`` (while streaming) or ``undecided`` (while asking), and the
    stream of the run's last segment.
    """
    for _ in range(MAX_DECISIONS):
        if not await _print_until_done(stream, printer, signals):
            return "interrupted", stream
        finish = printer.finish
        if finish is None or finish.payload.step_result.reason != "suspended":
            return "finished", stream
        run_id = stream.run_id
        pending = await app.pending(run_id)
        suspended = _suspended_chunk((await stream.result()).chunks)
        call = pending[0] if pending else None
        tool_name = call.tool_name if call is not None else (suspended.payload.tool_name if suspended else "?")
        _out(
            f"[4/6] run {run_id} is suspended: {tool_name} waits for a decision (app.pending lists it); "
            "the plan it submitted:"
        )
        _show_plan(call, suspended.payload.suspend_payload if suspended else None)
        decision = await _decide(args, prompter, signals)
        if decision is None:
            return "undecided", stream
        shown = call.suspend_payload if call is not None and isinstance(call.suspend_payload, dict) else {}
        # submit_plan asks for the plan to be echoed back with the decision.
        plan = {key: shown[key] for key in ("path", "title", "plan") if key in shown}
        resume: dict[str, Any] = {"action": "approved" if decision.approved else "rejected", **plan}
        if decision.feedback:
            resume["feedback"] = decision.feedback
        stream = await app.agent(agent_id).resume_stream(
            resume, run_id=run_id, tool_call_id=call.tool_call_id if call is not None else None
        )
        feedback = f', feedback "{decision.feedback}"' if decision.feedback else ""
        _out(
            f'[5/6] {decision.how}{feedback}: resumed run {run_id} with {{"action": "{resume["action"]}", ...}}; '
            f"its stream from offset {stream.offset}:"
        )
        printer.finish = None
    _out(f"      the run asked for more than {MAX_DECISIONS} decisions; the demo stops following it")
    return "finished", stream


def _last_step_text(chunks: Sequence[Chunk]) -> str:
    """The text the run's last text-producing step streamed."""
    deltas = [chunk for chunk in chunks if isinstance(chunk, TextDeltaChunk)]
    if not deltas:
        return ""
    last_id = deltas[-1].payload.id
    return "".join(chunk.payload.text for chunk in deltas if chunk.payload.id == last_id)


def _since(started: float) -> str:
    return f"{time.monotonic() - started:.1f} s"


# Entry point ----------------------------------------------------------------------------------


def _out(text: str) -> None:
    print(text, flush=True)


def _err(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _exit(code: int) -> NoReturn:
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    # Processes that used the Temporal SDK can abort at interpreter exit; leave without finalising.
    os._exit(code)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tempo-agents",
        description="Durable agents on Temporal: run workers, a local dev server, single runs and a demo.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def app_options(command: argparse.ArgumentParser, *, required: bool) -> None:
        command.add_argument(
            "--app",
            required=required,
            metavar="MODULE:ATTR",
            help="the App to serve, e.g. myproject.agents:app (importable from the current directory)",
        )
        command.add_argument("--store", metavar="URL", help="override the App's store, e.g. sqlite:///runs.db")
        command.add_argument("--task-queue", metavar="NAME", help="override the App's task queue")

    def server_options(command: argparse.ArgumentParser) -> None:
        command.add_argument(
            "--address", default=DEFAULT_ADDRESS, help=f"Temporal frontend (default {DEFAULT_ADDRESS})"
        )
        command.add_argument("--namespace", default=DEFAULT_NAMESPACE, help="Temporal namespace (default default)")

    worker = commands.add_parser(
        "worker",
        help="run a worker for an App against a Temporal server",
        description="Run a worker for an App until SIGINT/SIGTERM, then shut down gracefully.",
    )
    server_options(worker)
    app_options(worker, required=True)
    worker.add_argument(
        "--graceful-timeout", type=float, default=10.0, metavar="SECONDS",
        help="on shutdown, how long running tool calls and model steps may finish (default 10)",
    )  # fmt: skip
    worker.set_defaults(handler=cmd_worker)

    dev = commands.add_parser(
        "dev",
        help="start the embedded Temporal dev server and a worker",
        description=(
            "Start the embedded Temporal dev server (data in .tempo-agents/temporal.db, so runs survive "
            "restarts) and, with --app, a worker for that App. The HTTP API and the dashboard are not "
            "part of this command yet; they come in a later release."
        ),
    )
    app_options(dev, required=False)
    dev.add_argument("--port", type=int, default=7233, help="frontend port (default 7233; 0 picks a free one)")
    dev.add_argument(
        "--db-filename", default=DEFAULT_DB_FILENAME, help=f"server database (default {DEFAULT_DB_FILENAME})"
    )
    dev.add_argument("--graceful-timeout", type=float, default=10.0, metavar="SECONDS", help=argparse.SUPPRESS)
    dev.set_defaults(handler=cmd_dev)

    run = commands.add_parser(
        "run",
        help="start a run of an agent and print its stream",
        description="Start a run of an agent and print its chunks as they arrive. A worker must be running.",
    )
    run.add_argument("agent", help="agent id")
    run.add_argument("prompt", help="the user message")
    server_options(run)
    app_options(run, required=True)
    run.add_argument("--offsets", action="store_true", help="show every chunk with its journal offset")
    run.set_defaults(handler=cmd_run)

    demo = commands.add_parser(
        "demo",
        help="run the built-in demo end to end (dev server, worker, a planner that waits for your approval)",
        description=(
            "Start the embedded Temporal dev server on a free port, a worker and the demo app "
            "(tempo_agents.cli.demo), and stream one run of its planner agent: it writes a plan file, submits it "
            'and waits for approval at the terminal ("Approve this plan? [y/N]"); once approved it switches from '
            "mode 'plan' to mode 'build' and works through a task list, shown each time it changes. A rejection "
            "ends the run in mode 'plan'. When stdin is not a terminal, the demo takes an answer already waiting "
            "there (printf 'n\\nToo vague\\n' | tempo-agents demo) and otherwise approves with a note, so it never "
            "hangs without a terminal. Needs no network and no provider keys."
        ),
    )
    decision = demo.add_mutually_exclusive_group()
    decision.add_argument("--approve", action="store_true", help="approve the plan without asking")
    decision.add_argument("--reject", action="store_true", help="reject the plan without asking")
    demo.add_argument("--feedback", metavar="TEXT", help="with --reject: the feedback sent with the rejection")
    demo.add_argument(
        "--keep-data",
        action="store_true",
        help="keep the data the demo created in .tempo-agents/, and its plan file (removed by default)",
    )
    demo.set_defaults(handler=cmd_demo)
    return parser


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the command; returns the exit code."""
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="replace")  # never fail on a terminal that cannot show a character
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 2
    handler: Callable[[argparse.Namespace], Coroutine[Any, Any, int]] = args.handler
    try:
        return asyncio.run(handler(args))
    except CliError as error:
        _err(f"tempo-agents: error: {error.message}")
        return error.exit_code
    except TempoAgentsError as error:
        _err(f"tempo-agents: error: {_one_line(error.message)}")
        return 1
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except BrokenPipeError:
        # stdout was closed early (`tempo-agents run ... | head`): stop quietly, as Unix tools do.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as error:
        if os.environ.get("TEMPO_AGENTS_DEBUG"):
            traceback.print_exc()
        _err(f"tempo-agents: error: {_one_line(error)} (set TEMPO_AGENTS_DEBUG=1 for a traceback)")
        return 1


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """The ``tempo-agents`` console script."""
    _exit(run_cli(argv))
