"""``POST /slack/interactions``: a Slack app's interactive answer buttons (``notifications``, ``SlackChannel``
with a ``bot_token``).

Slack posts each click here, form-encoded (``payload=`` JSON, type ``block_actions``), signed with the app's
signing secret. A click is taken only when its signature matches, its timestamp is within five minutes and its
signature was not taken before (each taken signature is kept in the store while it is in the window:
``slack_replays.py``); the button's value is a signed token naming the run, the call, its round and the answer.
The Slack user who clicked is mapped to a principal (the channel's ``users``, else their email through ``emails``)
and the answer is sent as that principal: the run's workflow decides whether they may answer, as for every other
answer. The message is then updated in place through the payload's ``response_url`` ("Approved by @alice"), or the
clicker alone is told why nothing was answered. No bearer token: Slack's signature is the credential.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any
from urllib.parse import parse_qs

import httpx
from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from tempo_agents.approvals import LinkClaims, LinkRefusedError
from tempo_agents.client.app import App
from tempo_agents.errors import ResumeError
from tempo_agents.notifications import (
    ANSWER_ACTION_PREFIX,
    SlackChannel,
    SlackRequestRefusedError,
    slack_principal,
    verify_slack_request,
)
from tempo_agents.server.audit.intents import note_audit, note_refusal
from tempo_agents.server.auth import named_groups
from tempo_agents.server.dependencies import AppDep
from tempo_agents.server.errors import api_error_from
from tempo_agents.server.resuming import ResumeCommand, resume_run
from tempo_agents.server.routes.answer_links import claimed_call
from tempo_agents.server.slack_replays import SEEN_SIGNATURES_RUN, first_time
from tempo_agents.workflows import resume_errors

__all__ = ["BUTTON_REFUSED", "NOT_AN_ANSWER", "REPLAYED", "SEEN_SIGNATURES_RUN", "USER_UNKNOWN", "router"]

router = APIRouter(prefix="/slack", tags=["slack"], include_in_schema=False)

_GONE = "this call no longer waits for this answer"
_DONE_WORDS = {"approve": "Approved", "decline": "Declined", "resume": "Answered"}

REPLAYED = "SLACK_REPLAYED"
"""The audit code of a request whose signature was taken already."""
USER_UNKNOWN = "SLACK_USER_UNKNOWN"
"""The audit code of a click by a Slack user mapped to no principal."""
BUTTON_REFUSED = "ANSWER_BUTTON_REFUSED"
"""The audit code of a click whose button answers nothing (not ours, or its call no longer waits for it)."""
NOT_AN_ANSWER = "SLACK_NOT_AN_ANSWER"
"""The audit code of an interaction that is no click on an answer button (the message's "open the dashboard" link
button, any other action): taken, and nothing answered."""


def _signing_channels(app: App) -> dict[str, SlackChannel]:
    """The Slack channels with a signing secret, by their secret (of channels sharing one, the first)."""
    notifier = app.registry.notifier
    channels = notifier.settings.channels if notifier is not None else []
    return {c.signing_secret: c for c in reversed(channels) if isinstance(c, SlackChannel) and c.signing_secret}


def _refused(reason: str, status: int) -> JSONResponse:
    return JSONResponse({"error": reason}, status_code=status)


async def _refused_request(request: Request, app: App, body: bytes, code: str, reason: str) -> JSONResponse:
    """A request refused before its click is taken (unsigned, stale, forged, replayed): a 401, recorded as refused
    with ``code``, naming the call its button would answer but no principal (whoever sent it is not known to be
    the Slack user it names)."""
    note_refusal(request, code)
    try:
        payload = _payload(body)
    except ValueError:
        payload = None
    action = _answer_action(payload) if isinstance(payload, dict) else None
    if action is not None:
        await _note_button(request, app, str(action.get("value", "")))
    return _refused(reason, 401)


def _payload(body: bytes) -> Any:
    """The interaction payload of a request's form-encoded body (a ``ValueError`` when it is not UTF-8 or JSON)."""
    return json.loads(parse_qs(body.decode()).get("payload", ["{}"])[0])


def _ephemeral(text: str) -> dict[str, Any]:
    return {"response_type": "ephemeral", "replace_original": False, "text": text}


def _done(choice_action: str, choice_name: str, principal: str) -> dict[str, Any]:
    word = _DONE_WORDS[choice_action] + (f' "{choice_name}"' if choice_action == "resume" else "")
    text = f"{word} by @{principal}"
    return {
        "replace_original": True,
        "text": text,
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": text}}],
    }


def _answer_action(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The answer button clicked, when the payload is a click on one."""
    if payload.get("type") != "block_actions":
        return None
    for action in payload.get("actions") or []:
        if isinstance(action, dict) and str(action.get("action_id", "")).startswith(ANSWER_ACTION_PREFIX):
            return action
    return None


def _refusal(request: Request, code: str, text: str) -> dict[str, Any]:
    """The clicker told why nothing was answered; the click's audit record says ``refused`` with ``code``."""
    note_refusal(request, code)
    return _ephemeral(text)


def _button_claims(app: App, value: str) -> LinkClaims:
    """What an answer button's value answers (a :class:`LinkRefusedError` for one that is no button of ours)."""
    if app.answer_links is None:
        raise LinkRefusedError("this server makes no answer buttons", status=404)
    claims = app.answer_links.verify(value)
    if claims.use != "slack":
        raise LinkRefusedError("this button is not an answer button", status=403)
    return claims


async def _note_button(request: Request, app: App, value: str) -> None:
    """Name the call the button answers in the click's audit record (its value is signed by this server, so it names
    a real call whoever sent the request); nothing for a value that is no button of ours."""
    try:
        claims = _button_claims(app, value)
    except LinkRefusedError:
        return
    await note_audit(request, target=f"{claims.run_id}/{claims.tool_call_id}", run=claims.run_id)


async def _answer(app: App, request: Request, value: str, principal: str) -> dict[str, Any]:
    """Send the button's answer as ``principal``; the reply for the message (updated, or told to the clicker)."""
    if app.answer_links is None:
        return _refusal(request, BUTTON_REFUSED, "Nothing was answered: this server makes no answer buttons.")
    try:
        claims = _button_claims(app, value)
        await note_audit(request, target=f"{claims.run_id}/{claims.tool_call_id}", run=claims.run_id)
        call, pending = await claimed_call(app, claims, changed=_GONE)
        if call is None:
            raise LinkRefusedError(_GONE, status=409)
    except LinkRefusedError as refused:
        return _refusal(request, BUTTON_REFUSED, f"Nothing was answered: {refused.reason}")
    choice = claims.choice
    command = ResumeCommand(
        choice.action,
        claims.run_id,
        claims.tool_call_id,
        data=choice.data,
        request_id=f"slack-{uuid.uuid4()}",
        answered_by=principal,
        answered_by_groups=tuple(named_groups(request, principal)),
        round=claims.round,
    )
    try:
        await resume_run(app, None, command, pending=pending)  # the workflow decides who may answer
    except Exception as error:
        if isinstance(error, ResumeError) and error.code == resume_errors.NOT_AN_APPROVER:
            return _refusal(request, error.code, f"You may not answer this: {error}")
        api_refused = api_error_from(error)
        if api_refused is None:
            raise
        code = api_refused.extra.get("code")
        return _refusal(
            request, code if isinstance(code, str) else BUTTON_REFUSED, f"Nothing was answered: {api_refused.message}"
        )
    return _done(choice.action, choice.name, principal)


@router.post("/interactions")
async def interactions(app: AppDep, request: Request) -> Response:
    """One click on a Slack message's button."""
    body = await request.body()
    channels = _signing_channels(app)
    if not channels:
        return _refused("no Slack app is configured on this server", 404)
    headers = {name.lower(): value for name, value in request.headers.items()}
    try:
        secret, signature = verify_slack_request(channels, headers, body, now=time.time())
    except SlackRequestRefusedError as refused:
        return await _refused_request(request, app, body, refused.code, str(refused))
    timestamp = int(headers["x-slack-request-timestamp"])  # digits: the signature's check read it
    if not await first_time(app.store, timestamp, signature, now=time.time()):
        return await _refused_request(request, app, body, REPLAYED, "this Slack request was taken already")
    channel = channels[secret]
    try:
        payload = _payload(body)
    except ValueError:  # UnicodeDecodeError is one too
        return _refused("the request carries no interaction payload", 400)
    action = _answer_action(payload) if isinstance(payload, dict) else None
    if action is None:  # not an answer button (the dashboard's link button, another action)
        note_refusal(request, NOT_AN_ANSWER)
        return Response(status_code=200)
    async with httpx.AsyncClient(timeout=10) as http:
        user_id = str((payload.get("user") or {}).get("id", ""))
        principal = await slack_principal(channel, user_id, http)
        if principal is None:
            await _note_button(request, app, str(action.get("value", "")))
            reply = _refusal(
                request, USER_UNKNOWN, "You may not answer this: your Slack account is not linked to anyone here."
            )
        else:
            await note_audit(request, principal=principal)
            reply = await _answer(app, request, str(action.get("value", "")), principal)
        response_url = payload.get("response_url")
        if isinstance(response_url, str) and response_url:
            await http.post(response_url, json=reply)
    return Response(status_code=200)
