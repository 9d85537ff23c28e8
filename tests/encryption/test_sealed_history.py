"""A run's whole history, read with the stock ``temporal`` CLI: sealed without the codec, readable through the
App's codec server."""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
from typing import Any

from temporalio.client import Client

from tempo_agents.server.serving import ApiServer
from tests.conftest import AppFactory, running_worker, temporal_binary
from tests.support.encryption import ANSWER, IN_HISTORY, RESUME_NOTE, SECRETS, keyring, ledger_agent, start_and_suspend

TOKEN = "codec-token-1"


async def show(client: Client, run_id: str, *options: str) -> tuple[int, str]:
    """``temporal workflow show --output json`` of the run, with ``options``: its exit code and output."""
    process = await asyncio.create_subprocess_exec(
        temporal_binary(), "workflow", "show", "--output", "json", "--workflow-id", run_id,
        "--address", client.service_client.config.target_host, "--namespace", client.namespace, *options,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    output, _ = await process.communicate()
    return process.returncode or 0, output.decode()


def readable(output: str) -> str:
    """Everything the CLI printed, with each base64 string (payload data and metadata, as JSON has them) decoded
    beside it: what anyone reading the output can read."""
    texts: list[str] = [output]

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str):
            with contextlib.suppress(binascii.Error, ValueError):
                texts.append(base64.b64decode(value, validate=True).decode("utf-8", "replace"))

    walk(json.loads(output))
    return "\n".join(texts)


async def test_history_holds_none_of_the_run_without_the_codec_and_all_of_it_through_the_codec_server(
    make_app: AppFactory,
) -> None:
    app = make_app([ledger_agent()], encryption=keyring("k1"))
    async with running_worker(app):
        run_id = await start_and_suspend(app)
        resumed = await app.agent("ledger").resume_generate({"note": RESUME_NOTE}, run_id=run_id)
        assert ANSWER in resumed.text
        await app.client.get_workflow_handle(run_id).result()

    code, sealed = await show(app.client, run_id)
    assert code == 0, sealed
    assert json.loads(sealed)["events"], sealed
    assert [secret for secret in SECRETS if secret in readable(sealed)] == []
    assert "binary/encrypted" in readable(sealed)

    api = ApiServer(app, host="127.0.0.1", port=0, tokens={TOKEN: "ops"})
    await api.start()
    try:
        codec = ("--codec-endpoint", f"{api.url}/codec", "--codec-auth", f"Bearer {TOKEN}")
        code, decoded = await show(app.client, run_id, *codec)
    finally:
        await api.stop()
    assert code == 0, decoded
    assert [secret for secret in IN_HISTORY if secret not in readable(decoded)] == []
