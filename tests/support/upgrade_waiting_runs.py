"""The previous release's side of the upgrade test, run as a program in a Python whose ``tempo_agents`` is that
release: it starts a run of each agent of ``upgrade_agents.py`` on the given dev server, store and task queue, runs
its worker until every run waits for a person, shuts the worker down and writes a :class:`WaitingReport`.

    python -m tests.support.upgrade_waiting_runs ADDRESS STORE_URL TASK_QUEUE REPORT_PATH

Like the agents, it uses only names of the top-level package, which both releases export."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

import tempo_agents
import tests
from tempo_agents import App
from tests.support.upgrade_agents import (
    APPROVAL_AGENT,
    APPROVAL_PROMPT,
    MEMORY,
    QUESTION_AGENT,
    QUESTION_PROMPT,
    RESOURCE,
    SUSPENDING_AGENT,
    SUSPENDING_PROMPT,
    THREAD,
    THREAD_AGENT,
    THREAD_PROMPT,
    upgrade_agents,
)

WAIT_SECONDS = 60.0
"""How long the runs get to be all waiting before the program gives up."""


class WaitingRun(BaseModel):
    """One run the previous release left waiting."""

    run_id: str
    agent_id: str
    pending: list[dict[str, Any]]
    """Its ``pending`` query's answer, as JSON."""
    journal: list[dict[str, Any]]
    """Its journal's chunks, offset 0 on, as the previous release left it."""


class WaitingReport(BaseModel):
    """What the program saw: which package it ran, the runs it left waiting, what it listed as suspended."""

    tempo_agents_file: str
    runs: list[WaitingRun]
    listed: list[str]
    """The run ids ``list_suspended_runs`` gave, once every run waited."""
    thread_waiting: list[str]
    """The run ids the thread listed as waiting (they yielded it)."""


async def _all_waiting(app: App, starts: dict[str, str], thread_run: str) -> tuple[list[str], list[str]]:
    """Once every run has a pending call, is listed as suspended, and the thread's run has yielded it: the runs
    listed and the thread's waiting runs."""
    deadline = asyncio.get_running_loop().time() + WAIT_SECONDS
    while True:
        pending = [await app.pending(run_id) for run_id in starts]
        listed = [run.run_id for run in (await app.list_suspended_runs()).runs]
        thread_waiting = [entry.run_id for entry in (await app.thread(THREAD, resource_id=RESOURCE)).waiting]
        if all(pending) and set(starts) <= set(listed) and thread_run in thread_waiting:
            return listed, thread_waiting
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"not all runs waited after {WAIT_SECONDS} s: {pending}, {listed}, {thread_waiting}")
        await asyncio.sleep(0.1)


def previous_release_file() -> str:
    """Where this process's ``tempo_agents`` comes from; refused when it is the checkout's own (its path then put
    this repository's package before the previous release's, and nothing would be upgraded)."""
    package = Path(tempo_agents.__file__).resolve()
    checkout = Path(tests.__file__).resolve().parents[1]
    if package.is_relative_to(checkout):
        raise RuntimeError(f"tempo_agents is this checkout's ({package}), not the previous release's")
    return str(package)


async def leave_runs_waiting(address: str, store: str, task_queue: str) -> WaitingReport:
    """Start the runs, run the worker until each waits for a person, shut the worker down; what was left."""
    package = previous_release_file()
    app = App(agents=upgrade_agents(), store=store, task_queue=task_queue)
    await app.connect(address)
    starts: dict[str, str] = {}
    async with app.worker():
        for agent_id, prompt, options in (
            (APPROVAL_AGENT, APPROVAL_PROMPT, {}),
            (QUESTION_AGENT, QUESTION_PROMPT, {}),
            (SUSPENDING_AGENT, SUSPENDING_PROMPT, {}),
            (THREAD_AGENT, THREAD_PROMPT, {"memory": MEMORY}),
        ):
            result = await app.generate(agent_id, prompt, **options)
            if result.finish_reason != "suspended":
                raise AssertionError(f"{agent_id}'s run did not wait: {result.finish_reason} {result.error}")
            starts[result.run_id] = agent_id
        thread_run = next(run_id for run_id, agent_id in starts.items() if agent_id == THREAD_AGENT)
        listed, thread_waiting = await _all_waiting(app, starts, thread_run)
        pending = {run_id: await app.pending(run_id) for run_id in starts}
    runs = [
        WaitingRun(
            run_id=run_id,
            agent_id=agent_id,
            pending=[call.model_dump(mode="json") for call in pending[run_id]],
            journal=[entry.chunk for entry in await app.store.read_chunks(run_id, 0, 100_000)],
        )
        for run_id, agent_id in starts.items()
    ]
    await app.store.close()
    return WaitingReport(
        tempo_agents_file=package,
        runs=runs,
        listed=listed,
        thread_waiting=thread_waiting,
    )


def main(argv: list[str]) -> None:
    """Write the report, then end the process without the interpreter's teardown, where a process that used
    Temporal's SDK can abort (what ``run_program`` does; the previous release has no ``run_program``)."""
    address, store, task_queue, report_path = argv
    report = asyncio.run(leave_runs_waiting(address, store, task_queue))
    Path(report_path).write_text(report.model_dump_json(indent=1))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])


__all__ = ["WaitingReport", "WaitingRun", "leave_runs_waiting", "main", "previous_release_file"]
