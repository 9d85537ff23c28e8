"""``tempo-agents serve --roles``: the static tokens' principals hold the roles it gives them per tenant (a viewer
reads a run of its tenant but is refused its cancel, an operator cancels it, a principal it does not name holds
none), against a real ``serve`` process and the Temporal dev server."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import httpx
import pytest
from temporalio.testing import WorkflowEnvironment

from tests.conftest import AppFactory, running_worker
from tests.support.cli_processes import read_until, start_cli, stop_cli
from tests.support.http_api import EXAMPLE, parity_agent

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

TOKENS = {
    "tok-vera-7c1": "vera",
    "tok-olga-2e9": "olga",
    "tok-nina-5a3": "nina",
    "tok-dana-9f4": {"name": "dana", "roles": {"globex": ["operator"]}},  # its own roles, kept
}
ROLES = '[vera]\nacme = ["viewer"]\n\n[olga]\nacme = ["operator"]\nglobex = ["viewer"]\n'


def bearer(name: str) -> dict[str, str]:
    return {"authorization": f"Bearer tok-{name}-" + {"vera": "7c1", "olga": "2e9", "nina": "5a3", "dana": "9f4"}[name]}


async def test_serve_roles_limit_each_token_to_its_roles(
    tmp_path: Path, temporal_env: WorkflowEnvironment, make_app: AppFactory
) -> None:
    (tmp_path / "tokens.json").write_text(json.dumps(TOKENS))
    (tmp_path / "roles.toml").write_text(ROLES)
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    app = make_app([parity_agent()], store=store)  # the served App's worker, in this process
    address = temporal_env.client.service_client.config.target_host
    process = await start_cli(
        [
            *["serve", "--app", f"{EXAMPLE}:app", "--address", address, "--api-port", "0"],
            *["--task-queue", app.task_queue, "--store", store],
            *["--tokens-file", "tokens.json", "--roles", "roles.toml"],
        ],
        tmp_path,
    )
    try:
        line = await read_until(process, "HTTP API at ")
        url = line.split()[3]
        async with running_worker(app), httpx.AsyncClient(base_url=url, timeout=60) as http:
            body = {"messages": "charge", "memory": {"thread": "t-roles", "resource": "acme"}}
            waiting = await http.post("/agents/assistant/generate", json=body, headers=bearer("olga"))
            assert waiting.status_code == 200, waiting.text
            assert waiting.json()["finishReason"] == "suspended"  # it waits for a person: still running
            run_id = waiting.json()["runId"]
            refused = await http.post(f"/runs/{run_id}/cancel", headers=bearer("vera"))
            assert refused.status_code == 403, refused.text
            assert refused.json()["error"] == "vera may not runs.cancel in tenant acme: it needs the operator role"
            read = await http.get(f"/runs/{run_id}", headers=bearer("vera"))
            assert read.status_code == 200 and read.json()["status"] == "suspended", read.text  # a viewer reads it
            for name, roles in (("vera", {"acme": ["viewer"]}), ("dana", {"globex": ["operator"]})):
                me = await http.get("/identity", headers=bearer(name))
                assert me.json() == {"name": name, "groups": [], "roles": roles}, me.text
            nobody = await http.get("/agents", headers=bearer("nina"))  # named by no role: holds none
            assert nobody.status_code == 403, nobody.text
            globex_start = {"messages": "hi", "memory": {"thread": "t-g", "resource": "globex"}}
            only_views = await http.post("/agents/assistant/generate", json=globex_start, headers=bearer("olga"))
            assert only_views.status_code == 403, only_views.text
            cancelled = await http.post(f"/runs/{run_id}/cancel", headers=bearer("olga"))
            assert cancelled.status_code == 202, cancelled.text
    finally:
        code, stdout, stderr = await stop_cli(process, signal.SIGINT)
    assert code == 0, stderr
    assert stdout.strip().endswith("stopped")


async def test_a_bad_roles_option_is_refused_before_serving(tmp_path: Path) -> None:
    for roles, message in (
        ('{"vera": {"acme": ["boss"]}}', "the inline roles mapping must map principals to their roles"),
        ("missing.json", "cannot read the roles file missing.json"),
    ):
        process = await start_cli(["serve", "--app", f"{EXAMPLE}:app", "--roles", roles], tmp_path)
        _, stderr = await asyncio.wait_for(process.communicate(), 60)
        assert process.returncode == 2
        assert stderr.decode().startswith("tempo-agents: error: ") and message in stderr.decode(), stderr
