"""A run's whole history, read with the stock ``temporal`` CLI: sealed without the codec, readable through the
App's codec server."""

from __future__ import annotations

import json

from temporalio.client import Client

from tempo_agents.server.serving import ApiServer
from tests.conftest import AppFactory, running_worker
from tests.support.encryption import (
    ANSWER,
    IN_HISTORY,
    RESUME_NOTE,
    SECRETS,
    keyring,
    ledger_agent,
    payload_key_ids,
    readable,
    start_and_suspend,
)
from tests.support.temporal_cli import show_history

TOKEN = "codec-token-1"


async def test_history_holds_none_of_the_run_without_the_codec_and_all_of_it_through_the_codec_server(
    make_app: AppFactory,
) -> None:
    app = make_app([ledger_agent()], encryption_keys=keyring("k1"))
    async with running_worker(app):
        run_id = await start_and_suspend(app)
        resumed = await app.agent("ledger").resume_generate({"note": RESUME_NOTE}, run_id=run_id)
        assert ANSWER in resumed.text
        await app.client.get_workflow_handle(run_id).result()

    code, sealed = await show_history(app.client, run_id)
    assert code == 0, sealed
    assert json.loads(sealed)["events"], sealed
    assert [secret for secret in SECRETS if secret in readable(sealed)] == []
    assert "binary/encrypted" in readable(sealed)

    api = ApiServer(app, host="127.0.0.1", port=0, tokens={TOKEN: "ops"})
    await api.start()
    try:
        codec = ("--codec-endpoint", f"{api.url}/codec", "--codec-auth", f"Bearer {TOKEN}")
        code, decoded = await show_history(app.client, run_id, *codec)
    finally:
        await api.stop()
    assert code == 0, decoded
    assert [secret for secret in IN_HISTORY if secret not in readable(decoded)] == []


async def test_a_worker_given_a_client_of_its_own_seals_what_the_app_seals(
    make_app: AppFactory, client: Client
) -> None:
    app = make_app([ledger_agent()], encryption_keys=keyring("k1"))
    async with running_worker(app, client):  # a client without the codec: the worker takes the App's converter
        run_id = await start_and_suspend(app)
    events = list((await client.get_workflow_handle(run_id).fetch_history()).events)
    assert payload_key_ids(events) == {"k1"}
