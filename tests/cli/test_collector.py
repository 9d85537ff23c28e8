"""The long-running commands set their start-up objects aside from the garbage collector once they serve, so its full
passes (the event loop stopped meanwhile) go through what the process made since, not the whole package."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.cli.test_cli import target, write_app
from tests.support.cli_processes import read_lines_until, stop_cli

ROOT = Path(__file__).resolve().parents[2]

FREEZING = """
import gc, weakref
from tempo_agents.cli._collector import freeze_startup_objects

class Node:
    pass

def cycle():
    node = Node()
    node.self = node
    return node

freed = []
before = cycle()
weakref.finalize(before, freed.append, "before")
freeze_startup_objects()
after = cycle()
weakref.finalize(after, freed.append, "after")
del before, after
gc.collect()
print(",".join(freed), gc.get_freeze_count() > 1000)
"""


def test_what_exists_at_the_freeze_is_left_alone_and_what_comes_after_is_collected() -> None:
    # In a process of its own: a frozen pytest would keep every object of the suite so far.
    done = subprocess.run([sys.executable, "-c", FREEZING], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["after", "True"]  # the cycle made before the freeze outlives a full collection


async def start_reporting(args: list[str], cwd: Path) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(cwd)])}
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.support.freeze_reporting_cli", *args,
        cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def test_worker_and_serve_set_their_start_up_objects_aside_before_they_say_they_serve(
    temporal_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    common = [
        "--address", target(temporal_env), "--namespace", "default", "--task-queue", f"tq-{uuid.uuid4()}",
        "--app", write_app(tmp_path), "--store", f"sqlite:///{tmp_path / 'store.db'}",
    ]  # fmt: skip
    for command, ready in (["worker"], "polling task queue"), (["serve", "--api-port", "0"], "HTTP API at"):
        process = await start_reporting([*command, *common], tmp_path)
        try:
            lines = [line.strip() for line in await read_lines_until(process, ready)]
        finally:
            code, _, stderr = await stop_cli(process, signal.SIGTERM)
        said = [line for line in lines if line.startswith("start-up objects set aside: ")]
        assert len(said) == 1, lines  # once, before it says it serves: what it serves with was made by then
        assert int(said[0].rsplit(":", 1)[1]) > 50_000, said  # the package and its dependencies, not a handful
        assert code == 0, stderr
