"""``/answer-links/<token>``: one-click answers from a notification (see ``approvals/answer_links/``).

The signed link is the credential, so these routes need no bearer token. ``GET`` shows a confirmation page (the
call, its arguments as the tool's display transforms show them everywhere, and the answer the link gives) and
never changes anything; the page's button ``POST``s to the same URL, which answers that round of that call under
the principal the link names, once. A link that is forged, expired, for a call no longer waiting in that round
(answered, its link used already), whose arguments changed or that was re-assigned to others says so and answers
nothing. The token never reaches a log line or the journal.
"""

from __future__ import annotations

import html
import json
import uuid

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from temporalio.service import RPCError

from tempo_agents.agent.agent import Agent
from tempo_agents.approvals import AnswerLinks, LinkClaims, LinkRefusedError, args_hash, link_spent, record_spent
from tempo_agents.client.app import App
from tempo_agents.client.resume import check_answerer
from tempo_agents.errors import ConfigurationError, ResumeError
from tempo_agents.server.audit.intents import completion_entries, mark_completed, note_audit
from tempo_agents.server.auth import named_groups
from tempo_agents.server.dependencies import AppDep
from tempo_agents.server.errors import api_error_from
from tempo_agents.server.pending_view import shown_call
from tempo_agents.server.resuming import ResumeCommand, resume_run
from tempo_agents.workflows import resume_errors, search_attributes
from tempo_agents.workflows.payloads import PendingCall

__all__ = ["claimed_call", "router"]

router = APIRouter(prefix="/answer-links", tags=["answer links"], include_in_schema=False)

_ACTION_WORDS = {"approve": "Approve", "decline": "Decline", "resume": "Answer"}


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    document = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{html.escape(title)}</title>"
        "<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#111}"
        "pre{background:#f4f4f4;padding:.75rem;overflow:auto;white-space:pre-wrap;word-break:break-all}"
        "button{font:inherit;padding:.5rem 1.25rem;background:#0b57d0;color:#fff;border:0;border-radius:4px}"
        ".refused{color:#8a1c1c}</style></head>"
        f"<body><h1>{html.escape(title)}</h1>{body}</body></html>"
    )
    return HTMLResponse(document, status_code=status, headers={"cache-control": "no-store"})


def _refused(reason: str, status: int) -> HTMLResponse:
    return _page("This link answers nothing", f'<p class="refused" id="refused">{html.escape(reason)}</p>', status)


def _links(app: App) -> AnswerLinks:
    if app.answer_links is None:
        raise LinkRefusedError("This server makes no answer links.", status=404)
    return app.answer_links


def _verified(app: App, token: str) -> LinkClaims:
    """The claims of a link (a Slack button's value is no link)."""
    claims = _links(app).verify(token)
    if claims.use:
        raise LinkRefusedError("This link is not a valid answer link.", status=403)
    return claims


async def _needs_sign_in(app: App, claims: LinkClaims, call: PendingCall) -> None:
    """Refuses a link to a call whose tool or agent has ``answer_requires_sign_in=True``: only a signed-in person
    answers it, on the dashboard."""
    agent = await _run_agent(app, claims.run_id)
    if agent is not None and agent.answers_need_sign_in(call.tool_name):
        raise LinkRefusedError(
            "This call is answered only by a signed-in person: open the run in the dashboard to answer.", status=403
        )


async def _answered_by(app: App, claims: LinkClaims) -> str | None:
    """Who answered the call, when it was answered (the run's ``answers``)."""
    try:
        answers = await app.queries(claims.run_id).answers()
    except RPCError:
        return None
    found = [answer for answer in answers if answer.tool_call_id == claims.tool_call_id]
    return (found[-1].answered_by or "someone") if found else None


async def claimed_call(app: App, claims: LinkClaims, *, changed: str) -> tuple[PendingCall | None, list[PendingCall]]:
    """The call ``claims`` name (a link's, a Slack button's) as it waits now, ``None`` when it no longer waits in
    their round, and the run's waiting calls as read (once) to find it; raises :class:`LinkRefusedError` (409,
    ``changed``) when its arguments are no longer the ones the claims were made for."""
    try:
        pending = await app.pending(claims.run_id, settle_seconds=0)
    except RPCError:
        pending = []
    call = next((call for call in pending if call.tool_call_id == claims.tool_call_id), None)
    if call is None or call.round != claims.round:
        return None, pending
    if args_hash(call.args) != claims.args_hash:
        raise LinkRefusedError(changed, status=409)
    return call, pending


async def _waiting_call(app: App, claims: LinkClaims) -> tuple[PendingCall, list[PendingCall]]:
    """The call the link answers, as it waits now, and the run's waiting calls as read (once) to find it; raises
    when the link no longer fits it (or was used: a call whose answer its tool refused waits again in the same
    round, and the link that gave that answer is spent). Who may answer it is the client's check."""
    if await link_spent(app.store, claims):
        raise LinkRefusedError("This link was used already; it answers nothing more.", status=409)
    changed = "The call's arguments changed since this link was made; open the run in the dashboard."
    call, pending = await claimed_call(app, claims, changed=changed)
    if call is None:
        answered_by = await _answered_by(app, claims)
        if answered_by is not None:
            raise LinkRefusedError(
                f"This call was answered already (by {answered_by}); this link answers nothing more.", status=409
            )
        raise LinkRefusedError("This call no longer waits for this answer (it ended or expired).", status=409)
    return call, pending


def _reassigned(call: PendingCall) -> HTMLResponse:
    """The refusal of a link whose principal may no longer answer the call (it was re-assigned to others)."""
    return _refused(f"This call now waits for {', '.join(call.approvers)}; this link no longer answers it.", 403)


async def _run_agent(app: App, run_id: str) -> Agent | None:
    """The agent of the run (its search attribute), whose transforms shape what the page shows."""
    try:
        description = await app.client.get_workflow_handle(run_id).describe()
        return app.agent(description.typed_search_attributes.get(search_attributes.AGENT_ID) or "")
    except (RPCError, ConfigurationError):
        return None


async def _summary(app: App, claims: LinkClaims, call: PendingCall) -> str:
    """What the link answers: the call and its arguments as every other view shows them (through the tool's
    display transforms: a field they hide is hidden here too), and the answer."""
    choice = claims.choice
    answer = _ACTION_WORDS[choice.action] + ("" if choice.action != "resume" else f": {choice.name}")
    args, _ = await shown_call(
        await _run_agent(app, claims.run_id), tool_call_id=call.tool_call_id, tool_name=call.tool_name,
        args=call.args, suspend_payload=None, approval=call.requires_approval,
    )  # fmt: skip
    arguments = json.dumps(args, indent=2, ensure_ascii=False, sort_keys=True, default=str)
    return (
        f"<p>Tool <strong>{html.escape(call.tool_name)}</strong>, call <code>{html.escape(call.tool_call_id)}</code> "
        f"of run <code>{html.escape(claims.run_id)}</code>.</p>"
        f'<p id="answering-as">You are answering as <strong>{html.escape(claims.principal)}</strong>.</p>'
        f'<p>Your answer: <strong id="choice">{html.escape(answer)}</strong>, as '
        f"<strong>{html.escape(claims.principal)}</strong>.</p>"
        f'<p>Arguments:</p><pre id="arguments">{html.escape(arguments)}</pre>'
    )


@router.get("/{token}", response_class=HTMLResponse)
async def confirm(app: AppDep, token: str, request: Request) -> HTMLResponse:
    """The confirmation page: what the link answers. Changes nothing."""
    try:
        claims = _verified(app, token)
        call, _ = await _waiting_call(app, claims)
        await _needs_sign_in(app, claims, call)
    except LinkRefusedError as refused:
        return _refused(refused.reason, refused.status)
    try:
        check_answerer(call, claims.principal, named_groups(request, claims.principal))
    except ResumeError:
        return _reassigned(call)
    word = _ACTION_WORDS[claims.choice.action]
    form = f'<form method="post"><button type="submit" id="confirm">{html.escape(word)}</button></form>'
    return _page(f"{word} this call?", await _summary(app, claims, call) + form)


@router.post("/{token}", response_class=HTMLResponse)
async def answer(app: AppDep, token: str, request: Request) -> HTMLResponse:
    """Give the link's answer, once, under its principal."""
    try:
        claims = _verified(app, token)
        await note_audit(
            request, target=f"{claims.run_id}/{claims.tool_call_id}", principal=claims.principal, run=claims.run_id
        )
        groups = named_groups(request, claims.principal)
        call, pending = await _waiting_call(app, claims)
        await _needs_sign_in(app, claims, call)
    except LinkRefusedError as link_refused:
        return _refused(link_refused.reason, link_refused.status)
    choice = claims.choice
    command = ResumeCommand(
        choice.action,
        claims.run_id,
        claims.tool_call_id,
        data=choice.data,
        request_id=f"link-{uuid.uuid4()}",  # a second POST is a new request, which the run refuses
        answered_by=claims.principal,
        answered_by_groups=tuple(groups),
        round=claims.round,
    )
    try:
        await resume_run(app, None, command, pending=pending)  # the client checks who may answer before it sends
    except Exception as error:
        if isinstance(error, ResumeError) and error.code == resume_errors.NOT_AN_APPROVER:
            return _reassigned(call)
        refused = api_error_from(error)
        if refused is None:
            raise
        answered_by = await _answered_by(app, claims)
        reason = refused.message
        if answered_by is not None:
            reason = f"This call was answered already (by {answered_by}); this link answers nothing more."
        return _refused(reason, refused.status)
    await record_spent(app.store, claims, choice.name, audit=completion_entries(request))  # one transaction
    mark_completed(request)
    word = _ACTION_WORDS[choice.action]
    done = f'<p id="done">{html.escape(word)}: sent. Thank you.</p>'
    return _page("Answered", await _summary(app, claims, call) + done)
