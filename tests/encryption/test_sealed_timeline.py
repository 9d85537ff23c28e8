"""The dashboard reads a sealed run's history through the App's codec: its timeline names the steps and tools."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import AppFactory, running_worker
from tests.support.browser import dashboard_server
from tests.support.encryption import RESUME_NOTE, keyring, ledger_agent, start_and_suspend
from tests.support.polling import until


async def test_a_sealed_runs_timeline_names_its_model_steps_and_tools(make_app: AppFactory) -> None:
    app = make_app([ledger_agent()], encryption_keys=keyring("k1"))
    async with running_worker(app), dashboard_server(app) as server:
        run_id = await start_and_suspend(app)
        await app.agent("ledger").resume_generate({"note": RESUME_NOTE}, run_id=run_id)
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:

            async def closed() -> dict[str, Any] | None:
                found: dict[str, Any] = (await http.get(f"/api/runs/{run_id}/timeline")).json()
                return found if found["endedAt"] else None

            timeline = await until(closed)
    labels = {bar["label"] for bar in timeline["bars"]}
    assert {"model step 0", "model step 1", "lookup", "confirm"} <= labels
