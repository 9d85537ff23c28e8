"""``--app path/``: the CLI serves and runs the file-based example app (examples/fs_app/) as real processes."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from tests.support.cli_processes import read_until, run_cli, start_cli, stop_cli

EXAMPLE = f"{Path(__file__).parents[2] / 'examples' / 'fs_app'}/"


async def test_dev_serves_the_example_directory_and_run_uses_it(tmp_path: Path) -> None:
    dev = await start_cli(["dev", "--port", "0", "--ui-port", "0", "--api-port", "0", "--app", EXAMPLE], tmp_path)
    try:
        line = await read_until(dev, "Temporal dev server at ")
        address = line.split(" at ", 1)[1].split()[0]
        await read_until(dev, "polling task queue")
        run = await asyncio.to_thread(
            run_cli, ["run", "shop", "How many apples?", "--app", EXAMPLE, "--address", address], tmp_path
        )
    finally:
        code, stdout, stderr = await stop_cli(dev, signal.SIGINT)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    lines = run.stdout.splitlines()
    assert lines[0].startswith("run ") and lines[0].endswith(" (agent shop)")
    assert lines[1:] == [
        "Let me check the shelves.",
        '  tool-call    stock {"item": "apples"}  [call_0_0]',
        '  tool-result  stock {"item": "apples", "count": 12}',
        "We have 12 apples in stock.",
        "  finish       reason stop, 2 step(s), usage 50 in + 13 out = 63 tokens",
    ]
    assert code == 0, stderr
    assert stdout.strip().endswith("stopped")


def test_a_directory_error_is_one_line(tmp_path: Path) -> None:
    helper = tmp_path / "app" / "agents" / "desk" / "subagents" / "helper"
    helper.mkdir(parents=True)
    (helper / "instructions.md").write_text("Help.")
    (tmp_path / "app" / "agents" / "desk" / "instructions.md").write_text("Work.")
    result = run_cli(["worker", "--app", "app/"], tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        "tempo-agents: error: --app app/: "
        "Agent \"helper\": missing model in config.py and no default. Provide a 'model' in agents/helper/config.py.\n"
    )
