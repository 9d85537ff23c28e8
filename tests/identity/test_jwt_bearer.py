"""Bearer tokens from an OpenID Connect provider: accepted when every check passes, each forged or mis-scoped one
refused with a 401 that says why, before anything runs. The provider is a real one on 127.0.0.1."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from tempo_agents.identity import OidcSettings, Principal, Role
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import parity_agent, served, sse_chunks
from tests.support.oidc_provider import CLIENT_ID, MockProvider, forged_rsa_token, running_provider

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def provider() -> Iterator[MockProvider]:
    with running_provider() as running:
        running.set_user(
            "alice", {"email": "alice@example.com", "groups": ["finance"], "roles": ["acme:operator", "acme:approver"]}
        )
        running.set_user("mallory", {"email": "mallory@example.com"})
        yield running


def _settings(provider: MockProvider, **overrides: Any) -> OidcSettings:
    return OidcSettings(issuer=provider.issuer, audience=CLIENT_ID, **overrides)


def _claims(provider: MockProvider, **overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    return {"iss": provider.issuer, "aud": CLIENT_ID, "sub": "alice", "iat": now, "exp": now + 300, **overrides}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unsigned(claims: dict[str, Any]) -> str:
    return jwt.encode(claims, "", algorithm="none")


def _hmac_with_public_key(provider: MockProvider, claims: dict[str, Any]) -> str:
    """HS256 keyed with the provider's public key (PEM): the confusion attack a verifier that lets the token pick
    its algorithm falls for."""
    [published] = provider.jwks()["keys"]
    public = jwt.PyJWK(published).key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    header = {"alg": "HS256", "typ": "JWT", "kid": published["kid"]}
    signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
    signature = hmac.new(public, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(signature)}"


def _refused_tokens(provider: MockProvider) -> dict[str, tuple[str, str]]:
    """Case → (token, the message's start)."""
    now = int(time.time())
    return {
        "alg-none": (_unsigned(_claims(provider)), "The token's signature algorithm 'none' is not accepted"),
        "hmac-with-public-key": (
            _hmac_with_public_key(provider, _claims(provider)),
            "The token's signature algorithm 'HS256' is not accepted",
        ),
        "unknown-kid": (forged_rsa_token(_claims(provider)), "The token's signing key ('our-own-key') is not one"),
        "expired": (provider.sign(_claims(provider, exp=now - 120)), "The token has expired"),
        "not-yet-valid": (provider.sign(_claims(provider, nbf=now + 600)), "The token is not valid yet"),
        "other-audience": (provider.sign(_claims(provider, aud="another-app")), "The token is meant for another"),
        "other-issuer": (provider.sign(_claims(provider, iss="https://evil.example")), "The token comes from another"),
        "disabled-principal": (provider.id_token("mallory"), "The principal mallory is disabled"),
        "malformed": ("not-a-jwt-at-all", "The token is malformed"),
        "malformed-jwt-shape": ("abc.def.ghi", "The token is malformed"),
        "no-expiry": (provider.sign({k: v for k, v in _claims(provider).items() if k != "exp"}), "The token lacks"),
    }


async def test_each_forged_or_mis_scoped_token_is_refused_before_anything_runs(
    make_app: AppFactory, provider: MockProvider
) -> None:
    app = make_app([parity_agent()])
    settings = _settings(provider, disabled=frozenset({"mallory"}), leeway_seconds=5)
    async with served(app, oidc=settings) as http:
        for case, (token, message) in _refused_tokens(provider).items():
            answer = await http.post(
                "/agents/assistant/generate",
                json={"messages": "charge", "runId": f"refused-{case}"},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert answer.status_code == 401, (case, answer.text)
            assert answer.json()["error"].startswith(message), (case, answer.json())
            assert answer.headers["www-authenticate"] == 'Bearer error="invalid_token"', case
            assert await app.store.read_chunks(f"refused-{case}") == [], case
        unauthenticated = await http.get("/agents")
        assert unauthenticated.status_code == 401 and unauthenticated.json() == {"error": "Authentication required"}
        # The same route with the provider's own token goes through.
        agents = await http.get("/agents", headers={"Authorization": f"Bearer {provider.id_token('alice')}"})
        assert agents.status_code == 200 and "assistant" in agents.json()


async def test_a_provider_token_names_the_principal_its_groups_and_roles(
    make_app: AppFactory, provider: MockProvider
) -> None:
    app = make_app([parity_agent()])
    token = provider.id_token("alice")
    async with served(app, oidc=_settings(provider)) as http, running_worker(app):
        headers = {"Authorization": f"Bearer {token}"}
        me = await http.get("/identity", headers=headers)
        assert me.json() == {"name": "alice", "groups": ["finance"], "roles": {"acme": ["approver", "operator"]}}
        memory = {"thread": "t-1", "resource": "acme"}  # her tenant: the roles she holds are acme's
        charge = (
            await http.post(
                "/agents/assistant/generate", json={"messages": "delete", "memory": memory}, headers=headers
            )
        ).json()
        approved = await http.post(
            "/agents/assistant/approve-tool-call",
            json={"runId": charge["runId"], "toolCallId": "call-d1"},
            headers=headers,
        )
        [result] = [chunk for chunk in sse_chunks(approved.content) if chunk["type"] == "tool-result"]
        assert result["payload"]["answeredBy"] == "alice"
    by_email = _settings(provider, principal_claim="email", groups_claim=None)
    async with served(app, oidc=by_email) as http:
        me = await http.get("/identity", headers={"Authorization": f"Bearer {token}"})
        assert me.json() == {"name": "alice@example.com", "groups": [], "roles": {"acme": ["approver", "operator"]}}


async def test_roles_claims_in_each_documented_form(make_app: AppFactory, provider: MockProvider) -> None:
    app = make_app([parity_agent()])
    forms: list[tuple[dict[str, Any], dict[str, Any], dict[str, list[str]]]] = [
        (
            {"roles": ["acme:operator", "globex:viewer", "*:admin", "offline_access"]},
            {},
            {"acme": ["operator"], "globex": ["viewer"], "*": ["admin"]},
        ),
        (
            {"roles": {"acme": ["approver", "viewer"], "*": "viewer"}},
            {},
            {"acme": ["approver", "viewer"], "*": ["viewer"]},
        ),
        (
            {"roles": ["operator"], "tenants": ["acme", "globex"]},
            {"tenants_claim": "tenants"},
            {"acme": ["operator"], "globex": ["operator"]},
        ),
        ({"roles": ["viewer"]}, {}, {"*": ["viewer"]}),
        (
            {"realm_access": {"roles": ["acme:admin", "uma_authorization"]}},
            {"roles_claim": "realm_access.roles"},
            {"acme": ["admin"]},
        ),
    ]
    for claims, settings, expected in forms:
        token = provider.sign(_claims(provider, **claims))
        async with served(app, oidc=_settings(provider, **settings)) as http:
            me = await http.get("/identity", headers={"Authorization": f"Bearer {token}"})
            assert me.status_code == 200, me.text
            assert me.json()["roles"] == expected, claims


async def test_a_rotated_key_is_fetched_once_and_unknown_keys_do_not_hammer_the_provider(
    make_app: AppFactory, provider: MockProvider
) -> None:
    app = make_app([parity_agent()])
    async with served(app, oidc=_settings(provider)) as http:
        before = provider.requests["/jwks"]
        first = await http.get("/identity", headers={"Authorization": f"Bearer {provider.id_token('alice')}"})
        assert first.status_code == 200 and provider.requests["/jwks"] == before + 1
        new_kid = provider.rotate_key()
        rotated = provider.sign(_claims(provider), kid=new_kid)
        answer = await http.get("/identity", headers={"Authorization": f"Bearer {rotated}"})
        assert answer.status_code == 200 and answer.json()["name"] == "alice"
        assert provider.requests["/jwks"] == before + 2
        for attempt in range(5):
            unknown = forged_rsa_token(_claims(provider), kid=f"made-up-{attempt}")
            refused = await http.get("/identity", headers={"Authorization": f"Bearer {unknown}"})
            assert refused.status_code == 401
        assert provider.requests["/jwks"] == before + 2  # at most one fetch per refresh interval (60 s)
        again = await http.get("/identity", headers={"Authorization": f"Bearer {rotated}"})
        assert again.status_code == 200


async def test_static_tokens_keep_working_beside_the_provider(make_app: AppFactory, provider: MockProvider) -> None:
    app = make_app([parity_agent()])
    operator = Principal(name="ci", roles={"acme": frozenset({Role.OPERATOR})})
    async with served(app, tokens={"tok-admin": "root", "tok-ci": operator}, oidc=_settings(provider)) as http:
        root = await http.get("/identity", headers={"Authorization": "Bearer tok-admin"})
        assert root.json() == {"name": "root", "groups": [], "roles": {"*": ["admin"]}}
        ci = await http.get("/identity", headers={"Authorization": "Bearer tok-ci"})
        assert ci.json() == {"name": "ci", "groups": [], "roles": {"acme": ["operator"]}}
        wrong = await http.get("/identity", headers={"Authorization": "Bearer tok-wrong"})
        assert wrong.status_code == 401 and wrong.json()["error"].startswith("The token is malformed")


async def test_an_unreachable_provider_is_a_503_not_a_pass(make_app: AppFactory) -> None:
    app = make_app([parity_agent()])
    with running_provider() as gone:
        issuer = gone.issuer
        token = gone.id_token("alice")
    async with served(app, oidc=OidcSettings(issuer=issuer, audience=CLIENT_ID)) as http:
        answer = await http.get("/agents", headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 503 and "cannot fetch" in answer.json()["error"]
