"""``tempo-agents serve`` with an identity provider: the provider's tokens accepted, refused ones answered 401, and
the API allowed on every interface without a static token, since the provider's tokens guard it."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import httpx
import pytest
from temporalio.testing import WorkflowEnvironment

from tests.support.cli_processes import read_until, start_cli, stop_cli
from tests.support.http_api import EXAMPLE
from tests.support.oidc_provider import CLIENT_ID, forged_rsa_token, running_provider

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def test_serve_accepts_the_provider_s_tokens(tmp_path: Path, temporal_env: WorkflowEnvironment) -> None:
    address = temporal_env.client.service_client.config.target_host
    with running_provider() as provider:
        provider.set_user("alice", {"groups": ["finance"], "roles": ["acme:approver"]})
        token = await asyncio.to_thread(provider.id_token, "alice")
        env = {**os.environ, "TEMPO_AGENTS_OIDC_AUDIENCE": CLIENT_ID}
        process = await start_cli(
            ["serve", "--app", f"{EXAMPLE}:app", "--address", address, "--api-port", "0",
             "--api-host", "0.0.0.0", "--oidc-issuer", provider.issuer],
            tmp_path, env,
        )  # fmt: skip
        try:
            first, *banner = [await read_until(process, "\n", timeout=60) for _ in range(3)]  # its first three lines
            port = first.split()[3].rsplit(":", 1)[1].split("/")[0]
            assert any(f"bearer JWTs from {provider.issuer}" in line for line in banner), banner
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}/api", timeout=30) as http:
                me = await http.get("/identity", headers={"Authorization": f"Bearer {token}"})
                assert me.json() == {"name": "alice", "groups": ["finance"], "roles": {"acme": ["approver"]}}
                forged = forged_rsa_token({"iss": provider.issuer, "aud": CLIENT_ID, "sub": "alice"})
                refused = await http.get("/agents", headers={"Authorization": f"Bearer {forged}"})
                assert refused.status_code == 401 and "not one of the issuer's keys" in refused.json()["error"]
                assert (await http.get("/agents")).status_code == 401
        finally:
            code, stdout, stderr = await stop_cli(process, signal.SIGINT)
    assert code == 0, stderr
    assert stdout.strip().endswith("stopped")
