"""The codec server the Temporal UI and CLI call: the API's tokens, CORS for the UI's origin (with credentials),
the namespace, payloads sealed and opened in their JSON form, a missing key named."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from tempo_agents import App
from tempo_agents.server.serving import ApiServer
from tests.conftest import AppFactory
from tests.support.encryption import keyring

TOKEN = "codec-token-2"
UI = "https://temporal-ui.example.test"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


PLAIN = {"metadata": {"encoding": b64("json/plain")}, "data": b64('{"note": "codec-PANGOLIN-6021"}')}


@asynccontextmanager
async def served(app: App) -> AsyncIterator[httpx.AsyncClient]:
    api = ApiServer(app, host="127.0.0.1", port=0, tokens={TOKEN: "ops"}, codec_cors_origins=[UI])
    await api.start()
    try:
        async with httpx.AsyncClient(base_url=api.url) as http:
            yield http
    finally:
        await api.stop()


async def post(http: httpx.AsyncClient, route: str, payloads: list[Any], **headers: str) -> httpx.Response:
    namespace = {"X-Namespace": "default"}
    return await http.post(f"/codec/{route}", json={"payloads": payloads}, headers={**AUTH, **namespace, **headers})


async def test_a_payload_is_sealed_under_the_current_key_and_opened_again(make_app: AppFactory) -> None:
    async with served(make_app([], encryption_keys=keyring("k2", "k1"))) as http:
        encoded = await post(http, "encode", [PLAIN])
        assert encoded.status_code == 200, encoded.text
        [sealed] = encoded.json()["payloads"]
        assert sealed["metadata"] == {"encoding": b64("binary/encrypted"), "encryption-key-id": b64("k2")}
        assert b"PANGOLIN" not in base64.b64decode(sealed["data"])
        decoded = await post(http, "decode", [sealed, PLAIN])  # a payload in clear comes back as it is
        assert decoded.status_code == 200, decoded.text
        assert decoded.json() == {"payloads": [PLAIN, PLAIN]}


async def test_the_codec_needs_a_token_and_the_apps_namespace(make_app: AppFactory) -> None:
    async with served(make_app([], encryption_keys=keyring("k1"))) as http:
        refused = await http.post("/codec/decode", json={"payloads": [PLAIN]}, headers={"X-Namespace": "default"})
        assert refused.status_code == 401
        other = await post(http, "decode", [PLAIN], **{"X-Namespace": "billing"})
        assert other.status_code == 400 and "billing" in other.json()["error"]
        malformed = await http.post("/codec/decode", content=b'{"payloads": 3}', headers=AUTH)
        assert malformed.status_code == 400


async def test_the_temporal_ui_origin_may_call_with_credentials_and_no_other(make_app: AppFactory) -> None:
    async with served(make_app([], encryption_keys=keyring("k1"))) as http:
        asked = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,x-namespace"}
        preflight = await http.options("/codec/decode", headers={"Origin": UI, **asked})
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == UI
        assert preflight.headers["access-control-allow-credentials"] == "true"
        answered = await post(http, "decode", [PLAIN], Origin=UI)
        assert answered.headers["access-control-allow-origin"] == UI
        stranger = await http.options("/codec/decode", headers={"Origin": "https://elsewhere.test", **asked})
        assert "access-control-allow-origin" not in stranger.headers
        api_route = await http.options("/api/agents", headers={"Origin": UI, **asked})  # only the codec's routes
        assert "access-control-allow-origin" not in api_route.headers


async def test_a_payload_under_a_removed_key_is_refused_naming_the_key(make_app: AppFactory) -> None:
    async with served(make_app([], encryption_keys=keyring("k1"))) as http:
        [sealed] = (await post(http, "encode", [PLAIN])).json()["payloads"]
    async with served(make_app([], encryption_keys=keyring("k2"))) as http:
        refused = await post(http, "decode", [sealed])
    assert refused.status_code == 422
    assert refused.json()["keyId"] == "k1" and "'k1'" in refused.json()["error"]


async def test_an_app_without_keys_has_no_codec(make_app: AppFactory) -> None:
    async with served(make_app([])) as http:
        assert (await post(http, "decode", [PLAIN])).status_code == 404
