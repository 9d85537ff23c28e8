"""Turning encryption on breaks no run: every committed history (recorded in clear) replays with the codec
configured, and a sealed history replays under the keys that sealed it, and not without them."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from tempo_agents.encryption import runs_data_converter
from tempo_agents.worker import TempoAgentsPlugin
from tests.conftest import AppFactory, running_worker
from tests.support.encryption import RESUME_NOTE, keyring, ledger_agent, start_and_suspend

HISTORIES = sorted((Path(__file__).parents[1] / "histories").glob("*.json"))


def replayer(*key_ids: str) -> Replayer:
    converter = runs_data_converter(keyring(*key_ids))
    return Replayer(workflows=[], plugins=[TempoAgentsPlugin(data_converter=converter)])


def test_every_committed_history_is_there() -> None:
    assert len(HISTORIES) > 20


@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
async def test_a_history_recorded_in_clear_replays_with_the_codec(path: Path) -> None:
    await replayer("k1").replay_workflow(WorkflowHistory.from_json(path.stem, path.read_text()))


async def test_a_sealed_history_replays_under_its_keys_only(make_app: AppFactory, client: Client) -> None:
    app = make_app([ledger_agent()], encryption_keys=keyring("k1"))
    async with running_worker(app):
        run_id = await start_and_suspend(app)
        await app.agent("ledger").resume_generate({"note": RESUME_NOTE}, run_id=run_id)
        await app.client.get_workflow_handle(run_id).result()
    history = await client.get_workflow_handle(run_id).fetch_history()

    await replayer("k2", "k1").replay_workflow(history)
    with pytest.raises(Exception, match="'k1'"):
        await replayer("k2").replay_workflow(history)
