"""The sign-in routes under ``/auth/``, open to everyone (each checks what it receives itself):

- ``GET /auth/login?next=/``: to the provider, with a fresh state, PKCE challenge and nonce;
- ``GET /auth/callback``: the provider's answer; the code exchanged, the ID token verified, the session cookie set;
- ``POST /auth/refresh``: a new session from the session's refresh token (401 when it cannot be renewed);
- ``POST /auth/logout``: the session cookie cleared; answers where to go (the provider's sign-out page, if any);
- ``GET /auth/session``: whether the server signs people in and who is signed in (the dashboard asks first).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from tempo_agents.identity import ProviderUnavailable, TokenRefused
from tempo_agents.server.sign_in.provider_client import ProviderClient
from tempo_agents.server.sign_in.session_cookie import SIGN_IN_PREFIX, LoginState, SessionCookies

__all__ = ["sign_in_router"]

_log = logging.getLogger("tempo_agents.server.sign_in")


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def _callback_url(request: Request) -> str:
    return str(request.url_for("sign_in_callback"))


def _local_path(target: str | None) -> str:
    """``next`` kept only when it is a path on this server (never another site: no open redirect)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def _refused(message: str, status: int = 401) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def sign_in_router(client: ProviderClient, cookies: SessionCookies) -> APIRouter:
    """The routes of sign-in through ``client``'s provider, sealing sessions with ``cookies``."""
    router = APIRouter(prefix=SIGN_IN_PREFIX, tags=["sign-in"], include_in_schema=False)

    @router.get("/login")
    async def login(request: Request, next: str = "/") -> Response:
        state = LoginState(next=_local_path(next))
        try:
            target = await client.authorization_url(state, _callback_url(request))
        except ProviderUnavailable as error:
            return _refused(error.message, 503)
        response = RedirectResponse(target, status_code=303)
        cookies.set_login(response, state, secure=_secure(request))
        return response

    @router.get("/callback", name="sign_in_callback")
    async def callback(request: Request, code: str = "", state: str = "", error: str = "") -> Response:
        login = cookies.login_of(request.scope)
        if error:
            return _refused(f"The provider did not sign you in: {error}")
        if login is None or not state or state != login.state or not code:
            return _refused("This sign-in was not started here or has expired; sign in again")
        try:
            session = await client.sign_in(code, login, _callback_url(request))
        except TokenRefused as refusal:
            _log.warning("sign-in refused: %s", refusal.message)
            return _refused(refusal.message)
        except ProviderUnavailable as unavailable:
            return _refused(unavailable.message, 503)
        response = RedirectResponse(login.next, status_code=303)
        cookies.set_session(response, session, secure=_secure(request))
        cookies.clear_login(response)
        return response

    @router.post("/refresh")
    async def refresh(request: Request) -> Response:
        session = cookies.session_of(request.scope)
        if session is None:
            return _refused("Not signed in")
        try:
            renewed = await client.refresh(session)
        except TokenRefused as refusal:
            response = _refused(refusal.message)
            cookies.clear(response, secure=_secure(request))
            return response
        except ProviderUnavailable as unavailable:
            return _refused(unavailable.message, 503)
        response = JSONResponse({"name": renewed.name, "expiresAt": renewed.expires_at})
        cookies.set_session(response, renewed, secure=_secure(request))
        return response

    @router.post("/logout")
    async def logout(request: Request) -> Response:
        try:
            target = await client.end_session_url(str(request.base_url))
        except ProviderUnavailable:
            target = None
        response = JSONResponse({"redirect": target or "/"})
        cookies.clear(response, secure=_secure(request))
        return response

    @router.get("/session")
    async def current(request: Request) -> dict[str, Any]:
        session = cookies.session_of(request.scope)
        signed_in = session is not None and not session.ended()
        return {
            "signIn": True,
            "signedIn": signed_in,
            "name": session.name if session is not None and signed_in else None,
            "canRefresh": bool(session is not None and session.refresh_token),
            "expiresAt": session.expires_at if session is not None else None,
        }

    return router
