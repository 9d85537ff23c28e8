"""The ``demo`` command: the demo App end to end on the embedded dev server, with a plan to approve."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from tempo_agents.cli._console import CliError, out
from tempo_agents.cli._stop_signals import StopSignals
from tempo_agents.cli.app_loading import connect
from tempo_agents.cli.demo._data import DemoData
from tempo_agents.cli.demo._review import decide, show_plan, suspended_chunk
from tempo_agents.cli.demo.app import DEMO_AGENT, DEMO_PROMPT, create_app
from tempo_agents.cli.demo.printer import DemoPrinter, render_tasks
from tempo_agents.cli.demo.prompter import Prompter
from tempo_agents.cli.printing import ChunkPrinter
from tempo_agents.client.app import App
from tempo_agents.journal.chunks import Chunk, TextDeltaChunk
from tempo_agents.streams import AgentStream
from tempo_agents.tools.builtin.submit_plan import PROJECT_ROOT_ENV
from tempo_agents.worker.dev_server import DEFAULT_DB_FILENAME, DatabaseInUseError, DevServer

__all__ = ["MAX_DECISIONS", "FollowOutcome", "add_command", "cmd_demo"]

MAX_DECISIONS = 5
"""The demo's planner submits one plan; a run asking more often than this is stopped being followed."""

FollowOutcome = Literal["finished", "interrupted", "undecided"]
"""How following a run ended: it finished, a stop signal came while streaming, or while asking."""


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``demo``."""
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


async def cmd_demo(args: argparse.Namespace) -> int:
    """Run the demo: a dev server, a worker and one run of the planner, its plan reviewed on the way."""
    if args.feedback is not None and not args.reject:
        raise CliError("--feedback goes with --reject (at the terminal, the demo asks for feedback itself)", 2)
    started = time.monotonic()
    base = Path(DEFAULT_DB_FILENAME).parent
    data = DemoData(base, temporary=False, made_directory=not base.exists())
    data.created = [path for path in (data.db, data.store) if not path.exists()]
    servers: list[DevServer] = []
    signals = StopSignals()
    signals.install()

    def kill_servers() -> None:
        for server in servers:
            server.kill()

    signals.on_force.append(kill_servers)
    prompter = Prompter(sys.stdin, sys.stdout)
    out("tempo-agents demo: a planner agent as a durable Temporal workflow, on a scripted model (no network, no keys):")
    out("      it writes a plan, waits for your approval, switches mode and works through a task list")
    app: App | None = None
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
            data = DemoData(Path(tempfile.mkdtemp(prefix="tempo-agents-demo-")), temporary=True)
            out(f"note: {error.db_path} is in use by another dev server; the demo keeps its data in {data.directory}")
            servers.append(DevServer(db_filename=data.db, port=None))
            await servers[-1].start()
        server = servers[-1]
        out(f"[1/6] Temporal dev server ready at {server.address} (data in {data.db}) after {_since(started)}")
        if args.keep_data:
            project = data.directory / "project"
            project.mkdir(parents=True, exist_ok=True)
        else:
            project = Path(tempfile.mkdtemp(prefix="tempo-agents-demo-project-"))
        # The worker runs in this process: write_file and submit_plan find the project root here.
        os.environ[PROJECT_ROOT_ENV] = str(project.resolve())
        app = create_app(store=f"sqlite:///{data.store}")
        await connect(app, server.address, "default")
        async with app.worker():
            out(
                f"[2/6] worker polling task queue '{app.task_queue}' "
                f"(app tempo_agents.cli.demo.app:create_app, agent '{DEMO_AGENT}'); plan files go to {project}/.plans/"
            )
            memory = {"thread": f"demo-{uuid.uuid4().hex[:12]}", "resource": "demo-user"}
            stream = await app.agent(DEMO_AGENT).stream(DEMO_PROMPT, memory=memory)
            run_id = stream.run_id
            out(f"[3/6] started run {run_id} (the id of its Temporal workflow too) in mode 'plan'; its stream, live:")
            out(f"      prompt: {DEMO_PROMPT}")
            out("      offset chunk        payload")
            printer = DemoPrinter(sys.stdout, offsets=True, mode=app.agent(DEMO_AGENT).default_mode)
            outcome, stream = await _follow(app, stream, printer, prompter, signals, args)
            if outcome == "finished":
                failed = printer.failed
                _print_finished(run_id, printer, (await stream.result()).chunks)
            elif outcome == "interrupted":
                out(f"interrupted; run {run_id} was left unfinished")
                return 130
            else:
                out(f"interrupted; run {run_id} was left waiting for a decision on its plan")
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
    _print_done(args.keep_data, data, project, run_id, started)
    return 1 if failed else 0


def _print_finished(run_id: str, printer: DemoPrinter, chunks: Sequence[Chunk]) -> None:
    """The run's outcome: finish reason, mode, tasks and final answer."""
    switched = ", ".join(f"{a} → {b}" for a, b in printer.mode_changes) or "none"
    out(f"[6/6] run {run_id} finished: {printer.summary()}")
    out(f"      mode now '{printer.mode}' (switches: {switched})")
    if printer.tasks:
        done = sum(1 for task in printer.tasks if task.get("status") == "completed")
        out(f"      tasks: {done}/{len(printer.tasks)} completed")
        for line in render_tasks(printer.tasks):
            out(f"        {line}")
    out(f"      final answer: {_last_step_text(chunks)}")


def _print_done(keep_data: bool, data: DemoData, project: Path | None, run_id: str, started: float) -> None:
    """What the demo left behind once the worker and the server stopped."""
    if keep_data:
        out(
            f"done in {_since(started)}: stopped the worker and the server; the data is kept in {data.directory}/ "
            f"(the plan in {project}/.plans/; the run's journal in {data.store}: "
            f"app.attach({run_id!r}, offset=N) reads it from any offset)"
        )
    elif not data.temporary and not data.created:
        out(
            f"done in {_since(started)}: stopped the worker and the server; "
            f"{data.directory}/ was there before the demo, so it stays"
        )
    else:
        out(
            f"done in {_since(started)}: stopped the worker and the server, "
            "removed the demo's data and its plan file (--keep-data keeps them)"
        )


async def _follow(
    app: App,
    stream: AgentStream,
    printer: DemoPrinter,
    prompter: Prompter,
    signals: StopSignals,
    args: argparse.Namespace,
) -> tuple[FollowOutcome, AgentStream]:
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
        suspended = suspended_chunk((await stream.result()).chunks)
        call = pending[0] if pending else None
        tool_name = call.tool_name if call is not None else (suspended.payload.tool_name if suspended else "?")
        out(
            f"[4/6] run {run_id} is suspended: {tool_name} waits for a decision (app.pending lists it); "
            "the plan it submitted:"
        )
        show_plan(call, suspended.payload.suspend_payload if suspended else None)
        decision = await decide(args, prompter, signals)
        if decision is None:
            return "undecided", stream
        shown = call.suspend_payload if call is not None and isinstance(call.suspend_payload, dict) else {}
        # submit_plan asks for the plan to be echoed back with the decision.
        plan = {key: shown[key] for key in ("path", "title", "plan") if key in shown}
        resume: dict[str, Any] = {"action": "approved" if decision.approved else "rejected", **plan}
        if decision.feedback:
            resume["feedback"] = decision.feedback
        stream = await app.agent(DEMO_AGENT).resume_stream(
            resume, run_id=run_id, tool_call_id=call.tool_call_id if call is not None else None
        )
        feedback = f', feedback "{decision.feedback}"' if decision.feedback else ""
        out(
            f'[5/6] {decision.how}{feedback}: resumed run {run_id} with {{"action": "{resume["action"]}", ...}}; '
            f"its stream from offset {stream.offset}:"
        )
        printer.finish = None
    out(f"      the run asked for more than {MAX_DECISIONS} decisions; the demo stops following it")
    return "finished", stream


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


def _last_step_text(chunks: Sequence[Chunk]) -> str:
    """The text the run's last text-producing step streamed."""
    deltas = [chunk for chunk in chunks if isinstance(chunk, TextDeltaChunk)]
    if not deltas:
        return ""
    last_id = deltas[-1].payload.id
    return "".join(chunk.payload.text for chunk in deltas if chunk.payload.id == last_id)


def _since(started: float) -> str:
    return f"{time.monotonic() - started:.1f} s"
