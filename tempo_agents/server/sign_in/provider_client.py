"""The dashboard's side of the OpenID Connect authorization code flow with PKCE: the provider's endpoints (from its
discovery document), the authorization URL, and the token endpoint's answers (a code, then refresh tokens) turned
into a verified ID token's claims."""

from __future__ import annotations

import dataclasses
import time
from typing import Any
from urllib.parse import urlencode

import httpx

from tempo_agents.identity import JwtBearerTokens, Principal, ProviderUnavailable, TokenRefused
from tempo_agents.identity.token_claims import principal_from_claims
from tempo_agents.server.sign_in.session_cookie import LoginState, Session

__all__ = ["ProviderClient"]

_TIMEOUT_SECONDS = 10.0


class ProviderClient:
    """Signs people in at the provider ``bearer`` verifies tokens of (its settings' ``client_id`` and, for a
    confidential client, ``client_secret``). ID tokens are verified as bearer tokens are, against the same keys
    (fetched through the same client), with the client id as their audience."""

    def __init__(self, bearer: JwtBearerTokens) -> None:
        settings = bearer.settings
        if not settings.client_id:
            raise ValueError("the dashboard's sign-in needs the settings' client_id")
        self.settings = settings
        self.client_id = settings.client_id
        self._keys = bearer.keys
        self._id_tokens = JwtBearerTokens(dataclasses.replace(settings, audience=settings.client_id), keys=bearer.keys)

    async def endpoints(self) -> dict[str, Any]:
        """The provider's discovery document (the one its keys were found through)."""
        found = await self._keys.discovery()
        if "authorization_endpoint" not in found or "token_endpoint" not in found:
            raise ProviderUnavailable(f"{self.settings.discovery_url} names no authorization or token endpoint")
        return found

    async def authorization_url(self, login: LoginState, redirect_uri: str) -> str:
        """Where to send the browser to sign in."""
        endpoint = str((await self.endpoints())["authorization_endpoint"])
        query = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": redirect_uri,
            "scope": " ".join(self.settings.scopes),
            "state": login.state,
            "nonce": login.nonce,
            "code_challenge": login.challenge,
            "code_challenge_method": "S256",
        }
        return f"{endpoint}{'&' if '?' in endpoint else '?'}{urlencode(query)}"

    async def end_session_url(self, after: str) -> str | None:
        """The provider's sign-out page (``None`` when it has none), coming back to ``after``."""
        endpoint = (await self.endpoints()).get("end_session_endpoint")
        if not isinstance(endpoint, str) or not endpoint:
            return None
        query = {"client_id": self.client_id, "post_logout_redirect_uri": after}
        return f"{endpoint}{'&' if '?' in endpoint else '?'}{urlencode(query)}"

    async def sign_in(self, code: str, login: LoginState, redirect_uri: str) -> Session:
        """The session of an authorization code (the callback's), its ID token verified and its nonce checked."""
        answer = await self._token_request(
            {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": redirect_uri,
                "code_verifier": login.verifier,
            }
        )
        return await self._session(answer, nonce=login.nonce, refresh_token=None)

    async def refresh(self, session: Session) -> Session:
        """A new session from the session's refresh token; :class:`TokenRefused` when the provider says no."""
        if not session.refresh_token:
            raise TokenRefused("The session has ended and cannot be renewed; sign in again")
        answer = await self._token_request({"grant_type": "refresh_token", "refresh_token": session.refresh_token})
        if "id_token" in answer:
            renewed = await self._session(answer, nonce=None, refresh_token=session.refresh_token)
            if renewed.subject != session.subject:
                raise TokenRefused("The renewed session names another subject; sign in again")
            return renewed
        return await self._renewed_without_id_token(session, answer)

    async def _renewed_without_id_token(self, session: Session, answer: dict[str, Any]) -> Session:
        """A provider may renew without a new ID token: its userinfo endpoint, asked with the new access token,
        confirms the same subject, and the session keeps its principal for the access token's lifetime."""
        endpoint = (await self.endpoints()).get("userinfo_endpoint")
        access_token = answer.get("access_token")
        if not isinstance(endpoint, str) or not isinstance(access_token, str):
            raise TokenRefused("The provider renewed the session without an ID token or a way to confirm it")
        try:
            info = await self._keys.http.get(
                endpoint, headers={"Authorization": f"Bearer {access_token}"}, timeout=_TIMEOUT_SECONDS
            )
        except httpx.HTTPError as error:
            raise ProviderUnavailable(f"cannot reach the provider's userinfo endpoint: {error}") from None
        claims = info.json() if info.status_code == 200 else {}
        if not isinstance(claims, dict) or claims.get("sub") != session.subject:
            raise TokenRefused("The provider did not confirm the renewed session; sign in again")
        lifetime = answer.get("expires_in")
        seconds = float(lifetime) if isinstance(lifetime, int | float) and lifetime > 0 else 300.0
        renewed = answer.get("refresh_token")
        return dataclasses.replace(
            session,
            expires_at=time.time() + seconds,
            refresh_token=renewed if isinstance(renewed, str) else session.refresh_token,
        )

    async def _session(self, answer: dict[str, Any], *, nonce: str | None, refresh_token: str | None) -> Session:
        id_token = answer.get("id_token")
        if not isinstance(id_token, str):
            raise TokenRefused("The provider's answer holds no ID token")
        claims = await self._id_tokens.verify(id_token)
        if nonce is not None and claims.get("nonce") not in (None, nonce):
            raise TokenRefused("The ID token's nonce is not the one this sign-in sent")
        principal: Principal = principal_from_claims(claims, self.settings)
        expires = claims.get("exp")
        renewed = answer.get("refresh_token")
        return Session.of(
            principal,
            subject=str(claims.get("sub", "")),
            expires_at=float(expires) if isinstance(expires, int | float) else time.time(),
            refresh_token=renewed if isinstance(renewed, str) else refresh_token,
        )

    async def _token_request(self, form: dict[str, str]) -> dict[str, Any]:
        endpoint = str((await self.endpoints())["token_endpoint"])
        secret = self.settings.client_secret
        http = self._keys.http
        try:
            if secret:  # a confidential client authenticates with HTTP Basic
                answer = await http.post(endpoint, data=form, auth=(self.client_id, secret), timeout=_TIMEOUT_SECONDS)
            else:  # a public client names itself; PKCE is its proof
                answer = await http.post(endpoint, data={**form, "client_id": self.client_id}, timeout=_TIMEOUT_SECONDS)
        except httpx.HTTPError as error:
            raise ProviderUnavailable(f"cannot reach the provider's token endpoint: {error}") from None
        try:
            loaded = answer.json()
        except ValueError:
            loaded = {}
        if answer.status_code != 200 or not isinstance(loaded, dict):
            reason = loaded.get("error_description") or loaded.get("error") if isinstance(loaded, dict) else None
            raise TokenRefused(f"The provider refused the sign-in: {reason or answer.status_code}")
        return loaded
