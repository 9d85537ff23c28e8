"""A real OpenID Connect provider on 127.0.0.1 for the sign-in tests (``oidc-provider-mock``, a Flask app served by
werkzeug in a thread), the tokens it issues through the authorization code flow, and tokens signed with keys of
our own (the forged ones)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import flask
import httpx
import jwt
import oidc_provider_mock
import werkzeug.serving
from cryptography.hazmat.primitives.asymmetric import rsa
from oidc_provider_mock._storage import Storage

__all__ = ["CLIENT_ID", "MockProvider", "forged_rsa_token", "running_provider"]

CLIENT_ID = "tempo-dashboard"
"""The client id tokens are issued to (the provider accepts any client; the ID token's ``aud`` is it)."""

_REDIRECT = "http://127.0.0.1/callback"


@dataclass
class MockProvider:
    """The provider at ``issuer`` (``http://127.0.0.1:<port>``); ``requests`` counts the requests of each path."""

    issuer: str
    storage: Any
    requests: Counter[str]

    def sign(self, claims: dict[str, Any], *, kid: str | None = None) -> str:
        """A token signed with the provider's own current key, with the claims given (``iss`` and ``aud`` are not
        added): what the provider would issue with these claims."""
        jwk = self.storage.jwk.as_dict(is_private=True)
        key = jwt.PyJWK(jwk, algorithm="RS256")
        return jwt.encode(claims, key.key, algorithm="RS256", headers={"kid": kid or jwk["kid"]})

    def rotate_key(self) -> str:
        """Replace the provider's signing key with a new one (the old is no longer published); the new key's id."""
        self.storage.jwk = type(self.storage.jwk).generate_key(is_private=True)
        kid: str = self.storage.jwk.as_dict()["kid"]
        return kid

    def set_user(self, sub: str, claims: dict[str, Any]) -> None:
        """Make (or replace) the user ``sub`` with ``claims`` (custom claims such as ``roles`` go into its tokens)."""
        httpx.put(f"{self.issuer}/users/{sub}", json=claims).raise_for_status()

    def tokens_for(
        self, sub: str, *, client_id: str = CLIENT_ID, scope: str = "openid profile email"
    ) -> dict[str, Any]:
        """The token response of the authorization code flow for ``sub``, as a user clicking through the provider's
        form would get it: ``id_token`` (a JWT for ``client_id``), ``access_token``, ``refresh_token``."""
        authorize = httpx.post(
            f"{self.issuer}/oauth2/authorize",
            params={"client_id": client_id, "redirect_uri": _REDIRECT, "response_type": "code", "scope": scope},
            data={"sub": sub},
        )
        assert authorize.status_code == 302, authorize.text
        [code] = parse_qs(urlsplit(authorize.headers["location"]).query)["code"]
        answer = httpx.post(
            f"{self.issuer}/oauth2/token",
            data={"grant_type": "authorization_code", "code": code, "redirect_uri": _REDIRECT},
            auth=(client_id, "any-secret"),
        )
        answer.raise_for_status()
        tokens: dict[str, Any] = answer.json()
        return tokens

    def id_token(self, sub: str, *, client_id: str = CLIENT_ID) -> str:
        """A signed ID token for ``sub``."""
        token: str = self.tokens_for(sub, client_id=client_id)["id_token"]
        return token

    def jwks(self) -> dict[str, Any]:
        """The provider's published keys."""
        keys: dict[str, Any] = httpx.get(f"{self.issuer}/jwks").json()
        return keys


@contextmanager
def running_provider(*, access_token_max_age: timedelta = timedelta(hours=1)) -> Iterator[MockProvider]:
    """The provider on 127.0.0.1 (a free port) for the block."""
    flask_app = oidc_provider_mock.app(access_token_max_age=access_token_max_age)
    requests: Counter[str] = Counter()
    inner = flask_app.wsgi_app

    def counted(environ: dict[str, Any], start_response: Any) -> Any:
        requests[environ.get("PATH_INFO", "")] += 1
        return inner(environ, start_response)

    flask_app.wsgi_app = counted
    server = werkzeug.serving.make_server("127.0.0.1", 0, flask_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield MockProvider(f"http://127.0.0.1:{server.server_port}", _storage_of(flask_app), requests)
    finally:
        server.shutdown()
        thread.join(5)
        server.server_close()


def _storage_of(flask_app: flask.Flask) -> Any:
    """The provider's storage (its users, tokens and signing key), which the app keeps for its requests."""
    for function in flask_app.before_request_funcs.get(None, []):
        for cell in getattr(function, "__closure__", None) or ():
            if isinstance(cell.cell_contents, Storage):
                return cell.cell_contents
    raise AssertionError("the provider's storage was not found")


def forged_rsa_token(claims: dict[str, Any], *, kid: str = "our-own-key", algorithm: str = "RS256") -> str:
    """A token signed with an RSA key of our own, not the provider's."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    body = {"iat": now, "exp": now + 300, **claims}
    return jwt.encode(body, key, algorithm=algorithm, headers={"kid": kid})
