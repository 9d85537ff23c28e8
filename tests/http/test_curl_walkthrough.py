"""The curl walk-through of the docs (docs/tutorials/http-with-curl.md), run as it is written against a real
``tempo-agents dev``.

The server line (the block after ``<!-- walkthrough-server -->``) is started as written, with free ports and
a scratch database added; the walk-through (the block after ``<!-- walkthrough -->``) runs in bash with
``API`` pointing at that server, every line in order, stopping at the first that fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "tutorials" / "http-with-curl.md"


def fenced_block(marker: str) -> str:
    """The body of the bash block that follows ``<!-- marker -->`` on the page."""
    found = re.search(rf"<!-- {re.escape(marker)} -->\n```bash\n(.*?)```", PAGE.read_text(), re.DOTALL)
    assert found is not None, f"{PAGE.name} has no ```bash block after <!-- {marker} -->"
    return found.group(1)


def test_the_walkthrough_blocks_are_there() -> None:
    [server] = fenced_block("walkthrough-server").strip().splitlines()
    assert "tempo-agents dev --app examples/reference_parity.py:app" in server
    walk = fenced_block("walkthrough")
    assert "curl" in walk and "$API" in walk


async def test_the_curl_walkthrough_runs_as_written(tmp_path: Path) -> None:
    missing = [tool for tool in ("curl", "jq", "bash") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"the curl walk-through needs {', '.join(missing)}: install them (scripts/_system_packages.sh)")
    [server_line] = fenced_block("walkthrough-server").strip().splitlines()
    extra = (
        f" --port 0 --ui-port 0 --api-port 0 --db-filename {tmp_path / 'temporal.db'}"
        f" --store sqlite:///{tmp_path / 's.db'}"
    )
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("TEMPO_AGENTS_API_TOKEN", None)
    dev = await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        server_line + extra,  # one simple command: bash execs it, so the signal below reaches dev
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert dev.stdout is not None and dev.stderr is not None
    try:
        seen: list[str] = []
        api = None
        while api is None:
            line = (await asyncio.wait_for(dev.stdout.readline(), 60)).decode()
            if not line:
                stderr = (await dev.stderr.read()).decode()
                pytest.fail(f"tempo-agents dev ended: {''.join(seen)}{stderr}")
            seen.append(line)
            if match := re.search(r"HTTP API at (http://\S+/api)", line):
                api = match.group(1)
        while "polling task queue" not in line:
            line = (await asyncio.wait_for(dev.stdout.readline(), 60)).decode()
            assert line, "".join(seen)
        script = tmp_path / "walkthrough.sh"
        script.write_text(fenced_block("walkthrough"))
        walk = await asyncio.create_subprocess_exec(
            "bash",
            "-euo",
            "pipefail",
            str(script),
            cwd=tmp_path,
            env={**env, "API": api},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out_bytes, err_bytes = await asyncio.wait_for(walk.communicate(), 120)
    finally:
        if dev.returncode is None:
            dev.send_signal(signal.SIGINT)
        await asyncio.wait_for(dev.communicate(), 30)
    out, err = out_bytes.decode(), err_bytes.decode()
    assert walk.returncode == 0, f"the walk-through failed ({walk.returncode}):\n{out}\n{err}"
    lines = out.splitlines()
    assert lines[0] == '{"status":"ok"}' and lines[1] == "401" and lines[2] == '["assistant"]'
    assert '"type":"tool-call-suspended"' in out and out.count("data: [DONE]") == 3
    pending = json.loads(next(line for line in lines if line.startswith('{"status":') and "pending" in line))
    assert pending == {
        "status": "suspended",
        "pending": [{"toolCallId": "call-c1", "suspendPayload": {"phase": "confirm", "amount": 990}}],
    }
    chunks = [json.loads(line[6:]) for line in lines if line.startswith("data: {")]
    results = [c["payload"] for c in chunks if c["type"] == "tool-result"]
    assert results == [
        {**results[0], "result": {"charged": 990}, "answeredBy": "api"},
        {**results[1], "result": {"deleted": "notes/x.txt"}, "answeredBy": "api"},
    ]
    answers = json.loads(lines[-1])
    assert [(a["toolCallId"], a["action"], a["answeredBy"]) for a in answers] == [("call-d1", "approve", "api")]
