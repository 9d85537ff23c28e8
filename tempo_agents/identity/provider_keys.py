"""The signing keys of an OpenID Connect provider: found through its discovery document, fetched and kept.

The keys are fetched again when they are older than ``jwks_max_age_seconds``, and when a token names a key not
among them (the provider rotated its keys), but such a fetch happens at most once per ``jwks_refresh_seconds``: a
stream of tokens with made-up key ids cannot make the server hammer the provider.
"""

from __future__ import annotations

import asyncio
import time
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import httpx
import jwt

from tempo_agents.errors import TempoAgentsError
from tempo_agents.identity.authenticator import TokenRefused
from tempo_agents.identity.oidc_settings import OidcSettings

__all__ = ["ProviderKeys", "ProviderUnavailable"]

_FETCH_TIMEOUT_SECONDS = 5.0
_NO_COOKIES = DefaultCookiePolicy(allowed_domains=())


class ProviderUnavailable(TempoAgentsError):
    """The provider's discovery document or keys could not be fetched; a token cannot be checked now."""

    code = "IDENTITY_PROVIDER_UNAVAILABLE"


class ProviderKeys:
    """The provider's current signing keys by key id (``kid``)."""

    def __init__(self, settings: OidcSettings, *, http: httpx.AsyncClient | None = None) -> None:
        self._settings = settings
        self._http = http
        self._owns_http = http is None
        self._lock = asyncio.Lock()
        self._keys: dict[str, jwt.PyJWK] = {}
        self._discovery: dict[str, Any] | None = None
        self._fetched_at: float | None = None
        self._unknown_key_fetch_at: float | None = None
        self.fetches = 0
        """How many times the keys were fetched (tests and the benchmark read it)."""

    @property
    def http(self) -> httpx.AsyncClient:
        """The client that talks to the provider: the one given, or one made here (and closed by :meth:`close`)."""
        if self._http is None:  # it keeps no cookies: one sign-in's must not go with the next one's requests
            self._http = httpx.AsyncClient(timeout=_FETCH_TIMEOUT_SECONDS, cookies=CookieJar(_NO_COOKIES))
        return self._http

    async def discovery(self) -> dict[str, Any]:
        """The provider's discovery document (kept once it names the settings' issuer and a ``jwks_uri``)."""
        if self._discovery is None:
            found = await self._get_json(self._settings.discovery_url)
            if found.get("issuer") != self._settings.issuer:
                raise ProviderUnavailable(
                    f"the provider at {self._settings.discovery_url} names the issuer {found.get('issuer')!r}, "
                    f"not {self._settings.issuer!r}"
                )
            uri = found.get("jwks_uri")
            if not isinstance(uri, str) or not uri:
                raise ProviderUnavailable(f"the provider at {self._settings.discovery_url} names no jwks_uri")
            self._discovery = found
        return self._discovery

    async def key(self, kid: str | None) -> jwt.PyJWK:
        """The key ``kid`` names (with no ``kid``, the provider's only key); :class:`TokenRefused` if unknown."""
        if self._stale(self._settings.jwks_max_age_seconds):
            await self._refresh(self._settings.jwks_max_age_seconds)
        found = self._find(kid)
        if found is None and self._may_fetch_for_unknown_key():
            self._unknown_key_fetch_at = time.monotonic()
            await self._refresh(0)
            found = self._find(kid)
        if found is None:
            raise TokenRefused(
                f"The token's signing key ({kid!r}) is not one of the issuer's keys"
                if kid is not None
                else "The token names no signing key (kid) and the issuer has several"
            )
        return found

    def _find(self, kid: str | None) -> jwt.PyJWK | None:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    def _may_fetch_for_unknown_key(self) -> bool:
        last = self._unknown_key_fetch_at
        return last is None or time.monotonic() - last >= self._settings.jwks_refresh_seconds

    def _stale(self, seconds: float) -> bool:
        return self._fetched_at is None or time.monotonic() - self._fetched_at >= seconds

    async def _refresh(self, seconds: float) -> None:
        async with self._lock:
            if seconds and not self._stale(seconds):  # another request fetched them while this one waited
                return
            self._keys = await self._fetch()
            self._fetched_at = time.monotonic()
            self.fetches += 1

    async def _fetch(self) -> dict[str, jwt.PyJWK]:
        document = await self._get_json((await self.discovery())["jwks_uri"])
        keys: dict[str, jwt.PyJWK] = {}
        for entry in document.get("keys", []):
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                key = jwt.PyJWK(entry)
            except jwt.PyJWTError:
                continue  # a key of a type or curve this server cannot use: tokens signed with it are refused
            keys[str(entry.get("kid", ""))] = key
        return keys

    async def _get_json(self, url: str) -> dict[str, Any]:
        try:
            response = await self.http.get(url)
            response.raise_for_status()
            loaded = response.json()
        except (httpx.HTTPError, ValueError) as error:
            raise ProviderUnavailable(f"cannot fetch {url} from the identity provider: {error}") from None
        if not isinstance(loaded, dict):
            raise ProviderUnavailable(f"{url} is not a JSON object")
        return loaded

    async def close(self) -> None:
        """Close the HTTP client this made (one given to it is the caller's)."""
        if self._owns_http and self._http is not None:
            await self._http.aclose()
            self._http = None
