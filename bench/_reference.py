"""The reference server (Mastra, in memory, a scripted model) for benches: installed once, started per bench.

Its packages are installed with npm into a scratch directory under ``~/.cache/tempo-agents-bench/`` (the first
run needs the npm registry; later runs reuse the directory). ``ref-server.mjs`` imports bare package names, so
a copy of it is run from inside that directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import httpx

PACKAGES = (
    "@mastra/server@1.68.0",
    "@mastra/core@1.68.0",
    "@mastra/hono@1.7.9",
    "@hono/node-server@2.1.9",
    "zod@4",
)
"""The versions the HTTP protocol was captured with."""

OVERRIDES = {"@mastra/server": "1.68.0"}
"""``@mastra/hono`` 1.7.9 pins ``@mastra/server`` 1.67.0 otherwise."""

DEFAULT_SOURCE = Path("/work/shared/reference/mastra-server/ref-server.mjs")
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tempo-agents-bench" / "mastra-server"


def install(source: Path, scratch: Path = CACHE) -> Path:
    """The reference server's script inside a directory where its packages resolve (installed when missing)."""
    if not source.is_file():
        raise SystemExit(f"the reference server script {source} is missing (--reference-script PATH)")
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise SystemExit("the reference server needs node and npm on PATH")
    marker = scratch / "node_modules" / "@mastra" / "server" / "package.json"
    if not marker.is_file():
        scratch.mkdir(parents=True, exist_ok=True)
        manifest = {"name": "tempo-agents-bench-reference", "private": True, "type": "module", "overrides": OVERRIDES}
        (scratch / "package.json").write_text(json.dumps(manifest, indent=2))
        print(f"installing the reference server's packages into {scratch} (once) ...", flush=True)
        subprocess.run(
            ["npm", "install", "--save-exact", "--no-audit", "--no-fund", "--loglevel=error", *PACKAGES],
            cwd=scratch,
            check=True,
        )
    script = scratch / "ref-server.mjs"
    shutil.copyfile(source, script)
    return script


def start(script: Path, port: int) -> subprocess.Popen[bytes]:
    """Start the reference server on 127.0.0.1:``port`` and wait until it answers."""
    process = subprocess.Popen(
        ["node", str(script)],
        cwd=script.parent,
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    wait_for_http(f"http://127.0.0.1:{port}/api/agents", process)
    return process


def wait_for_http(url: str, process: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    """Poll ``url`` until it answers 200, failing early when ``process`` exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            error = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise SystemExit(f"{process.args!r} exited with {process.returncode}: {error[-2000:]}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"{url} did not answer within {timeout:.0f} s")
