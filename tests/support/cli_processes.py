"""The ``tempo-agents`` command as a real subprocess of the tests: run it to the end (from a test without an event
loop, or without blocking the test's loop, where an App it serves may be what the command talks to), or start it,
read its output until a line says it is ready, and stop it with a signal.

The waits here guard against a command that hangs, not against a slow one: each starts a Python process that loads
the package and connects to Temporal, which takes seconds on a busy machine, and each test's own timeout bounds the
whole."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

__all__ = ["CLI", "api_data", "cli", "cli_output", "read_dev_banner", "read_until", "run_cli", "start_cli", "stop_cli"]

CLI = [sys.executable, "-m", "tempo_agents.cli"]
"""The command, run by this Python (so the checkout's package, without an installed script)."""


def run_cli(args: Sequence[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the command to its end, blocking (for a test that has no event loop to keep answering)."""
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


async def cli(
    *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None, timeout: float = 90
) -> tuple[int, str, str]:
    """Run the command to its end without blocking this event loop: its exit code, stdout and stderr. Its stdout is a
    pipe, so ``api`` prints JSON (``api_data`` reads it). Killed when it outlives ``timeout`` seconds."""
    process = await asyncio.create_subprocess_exec(
        *CLI, *args, cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode is not None
    return process.returncode, stdout.decode(), stderr.decode()


async def cli_output(
    *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None, timeout: float = 90
) -> str:
    """The stdout of a command that must succeed (``cli``); fails with its stderr when it exits with another code."""
    code, stdout, stderr = await cli(*args, cwd=cwd, env=env, timeout=timeout)
    assert code == 0, stderr
    return stdout


def api_data(stdout: str) -> Any:
    """The ``data`` of what ``tempo-agents api`` printed to a pipe (JSON)."""
    return json.loads(stdout)["data"]


async def start_cli(args: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *CLI, *args, cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )


async def read_until(process: asyncio.subprocess.Process, needle: str, timeout: float = 90) -> str:
    """Read stdout lines until one contains ``needle``; fail with the process's stderr otherwise."""
    return (await read_lines_until(process, needle, timeout))[-1]


async def read_lines_until(process: asyncio.subprocess.Process, needle: str, timeout: float = 90) -> list[str]:
    """Every stdout line up to the first that contains ``needle``, that one last; fail with the process's stderr
    otherwise."""
    assert process.stdout is not None and process.stderr is not None
    seen: list[str] = []

    async def read() -> bool:
        assert process.stdout is not None
        while line := (await process.stdout.readline()).decode():
            seen.append(line)
            if needle in line:
                return True
        return False

    try:
        found = await asyncio.wait_for(read(), timeout)
    except TimeoutError:
        found = False
    if not found:
        process.kill()
        stderr = (await process.stderr.read()).decode()
        pytest.fail(f"no line with {needle!r}; stdout: {''.join(seen)!r}; stderr: {stderr!r}")
    return seen


async def stop_cli(process: asyncio.subprocess.Process, sig: int, timeout: float = 30) -> tuple[int, str, str]:
    process.send_signal(sig)
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode is not None
    return process.returncode, stdout.decode(), stderr.decode()


async def read_dev_banner(process: asyncio.subprocess.Process, timeout: float = 60) -> dict[str, str]:
    """Read ``tempo-agents dev``'s start-up lines until its worker polls; answers what each ``<name> at <where>``
    line names, by name (``"Temporal dev server"``, ``"Temporal UI"``, ``"HTTP API"``, ``"Dashboard"``)."""
    assert process.stdout is not None
    said: dict[str, str] = {}
    async with asyncio.timeout(timeout):
        while line := (await process.stdout.readline()).decode():
            name, at, where = line.partition(" at ")
            if at and where.split():
                said.setdefault(name, where.split()[0])
            if "polling task queue" in line:
                break
    return said
