"""Clients in other languages that tests drive tempo-agents with: scripts on the official ``@mastra/client-js``
(pinned in ``package.json``; ``npm ci`` here, which ``scripts/test`` runs, installs it) and a raw HTTP resumer."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

__all__ = ["CLIENTS", "start_node_client"]

CLIENTS = Path(__file__).resolve().parent


async def start_node_client(script: str, env: Mapping[str, str]) -> asyncio.subprocess.Process:
    """Run ``script`` (a file in this folder) with Node and the installed official client, ``env`` added to this
    process's, its output piped; fails saying what to install when Node or the client is missing."""
    assert shutil.which("node") is not None, "this test needs Node.js (Debian: apt-get install nodejs npm)"
    assert (CLIENTS / "node_modules" / "@mastra" / "client-js").is_dir(), "run `npm ci` in tests/support/clients"
    return await asyncio.create_subprocess_exec(
        "node", str(CLIENTS / script), cwd=CLIENTS, env={**os.environ, **env},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
