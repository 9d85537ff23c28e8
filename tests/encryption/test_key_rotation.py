"""Keys rotate under running runs: a run started under key 1 finishes under keys [2, 1]; a run whose key was removed
fails its workflow task loudly, naming the key, and goes on once the key is back."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from temporalio.client import Client, WorkflowHandle

from tempo_agents.encryption import UnknownKeyError
from tempo_agents.workflows import search_attributes
from tests.conftest import AppFactory, running_worker
from tests.support.encryption import (
    ANSWER,
    PROMPT,
    RESUME_NOTE,
    keyring,
    ledger_agent,
    payload_key_ids,
    start_and_suspend,
    until_suspended,
)
from tests.support.polling import until


async def test_a_run_started_under_key_1_finishes_under_keys_2_and_1(make_app: AppFactory, client: Client) -> None:
    before = make_app([ledger_agent()], encryption_keys=keyring("k1"))
    async with running_worker(before):
        run_id = await start_and_suspend(before)

    after = make_app([ledger_agent()], task_queue=before.task_queue, encryption_keys=keyring("k2", "k1"))
    async with running_worker(after):  # a new worker: it replays the run's history, sealed under k1
        resumed = await after.agent("ledger").resume_generate({"note": RESUME_NOTE}, run_id=run_id)
        assert ANSWER in resumed.text
        await after.client.get_workflow_handle(run_id).result()

    events = list((await client.get_workflow_handle(run_id).fetch_history()).events)  # no codec: as stored
    assert payload_key_ids(events[:1]) == {"k1"}  # the run's input
    assert payload_key_ids(events[-1:]) == {"k2"}  # its result
    assert payload_key_ids(events) == {"k1", "k2"}  # nothing in clear


async def failed_tasks(handle: WorkflowHandle[Any, Any]) -> list[str]:
    return [
        event.workflow_task_failed_event_attributes.failure.message
        for event in (await handle.fetch_history()).events
        if event.HasField("workflow_task_failed_event_attributes")
    ]


async def test_a_run_whose_key_was_removed_fails_its_workflow_task_naming_the_key_until_the_key_is_back(
    make_app: AppFactory, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    sealed_under_k1 = make_app([ledger_agent()], encryption_keys=keyring("k1"))
    run_id = (await sealed_under_k1.agent("ledger").stream(PROMPT)).run_id  # no worker yet: its input waits, sealed

    without_k1 = make_app([ledger_agent()], task_queue=sealed_under_k1.task_queue, encryption_keys=keyring("k2"))
    handle = client.get_workflow_handle(run_id)
    with caplog.at_level(logging.ERROR, logger="temporalio"):
        async with running_worker(without_k1):
            failures = await until(lambda: failed_tasks(handle), timeout=60)
    # In the run's history, read without any codec: the workflow task failed, and says why in clear.
    assert failures and "'k1'" in failures[0] and "not among the configured encryption keys" in failures[0]
    # In the worker's log.
    logged = [
        record for record in caplog.records if record.exc_info and isinstance(record.exc_info[1], UnknownKeyError)
    ]
    assert logged and logged[0].exc_info is not None and logged[0].exc_info[1].key_id == "k1"  # type: ignore[union-attr]
    description = await handle.describe()
    assert description.typed_search_attributes.get(search_attributes.STATUS) == "running"  # nothing ran

    restored = make_app([ledger_agent()], task_queue=sealed_under_k1.task_queue, encryption_keys=keyring("k2", "k1"))
    async with running_worker(restored):
        await until_suspended(client, run_id)  # the same run goes on once its key is configured again


async def test_keys_from_a_callable_rotate_under_a_running_worker(make_app: AppFactory, client: Client) -> None:
    """A ``KeyringSource`` (as a KMS would back it) is asked for every batch of payloads: the worker and client take
    the new key as soon as it returns one, without a restart."""
    rings = {"now": keyring("k1")}
    app = make_app([ledger_agent()], encryption_keys=lambda: rings["now"])
    async with running_worker(app):
        run_id = await start_and_suspend(app)
        rings["now"] = keyring("k2", "k1")
        resumed = await app.agent("ledger").resume_generate({"note": RESUME_NOTE}, run_id=run_id)
        assert ANSWER in resumed.text
        await app.client.get_workflow_handle(run_id).result()
    events = list((await client.get_workflow_handle(run_id).fetch_history()).events)
    assert payload_key_ids(events[:1]) == {"k1"} and payload_key_ids(events[-1:]) == {"k2"}
