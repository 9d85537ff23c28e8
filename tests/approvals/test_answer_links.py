"""Signed one-click answer links against a real server: each answers one round of one call, once, as the
principal it names; forged, replayed, expired, cross-call, cross-round, changed-argument and re-assigned links are
refused and answer nothing; a GET never changes anything; no secret or token reaches the journal or the logs."""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import httpx
import pytest

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.approvals.answer_links import AnswerLinks, Choice, approval_choices
from tempo_agents.identity import Principal
from tempo_agents.server.serving import ApiServer
from tests.conftest import AppFactory, running_worker
from tests.support.approval_agents import TRANSFER_ARGS, payments_agent

SECRETS = ["link-secret-new-7f3a", "link-secret-old-91c2"]
BEARER = {"tok-alice-b71": "alice"}
OTHER_ARGS = {"amount": 40, "to": "globex"}


@asynccontextmanager
async def linked(app: App) -> AsyncIterator[tuple[AnswerLinks, httpx.AsyncClient]]:
    """The App served with bearer tokens and answer links (whose URLs need no token)."""
    server = ApiServer(app, port=0, tokens=BEARER)
    await server.start()
    app.answer_links = AnswerLinks(SECRETS, base_url=server.url)
    try:
        async with httpx.AsyncClient(timeout=60) as http:  # no Authorization header: the link is the credential
            yield app.answer_links, http
    finally:
        await server.stop()


async def two_calls(make_app: AppFactory) -> tuple[App, list[dict[str, Any]]]:
    ran: list[dict[str, Any]] = []
    agent, _ = payments_agent(ran, calls=[TRANSFER_ARGS, OTHER_ARGS], tool_approvers=["alice", "group:finance"])
    return make_app([agent]), ran


def approve_link(links: AnswerLinks, run_id: str, call: str = "call-1", **overrides: Any) -> str:
    made: dict[str, Any] = {"run_id": run_id, "tool_call_id": call, "round": 0, "args": TRANSFER_ARGS}
    made.update({"principal": "alice", **overrides})
    url: str = links.links(choices=approval_choices(), **made)["answers"]["approve"]
    return url


async def suspended(app: App) -> str:
    first = await app.agent(app.agents[0].id).generate("pay")
    assert first.finish_reason == "suspended", first
    return first.run_id


async def test_a_link_shows_a_page_on_get_and_answers_its_call_once_as_its_principal(
    make_app: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    app, ran = await two_calls(make_app)
    async with running_worker(app), linked(app) as (links, http):
        run_id = await suspended(app)
        made = links.links(
            run_id=run_id, tool_call_id="call-1", round=0, args=TRANSFER_ARGS, choices=approval_choices(),
            principal="alice",
        )  # fmt: skip
        assert made["dashboard"].endswith(f"/#/runs/{run_id}")
        url = made["answers"]["approve"]
        for _ in range(2):
            page = await http.get(url)
            assert page.status_code == 200, page.text
            assert 'id="choice">Approve</strong>' in page.text and "&quot;amount&quot;: 900" in page.text
            assert '<form method="post">' in page.text
        assert sorted(call.tool_call_id for call in await app.pending(run_id)) == ["call-1", "call-2"]
        assert await app.queries(run_id).answers() == []  # the GETs changed nothing

        answered = await http.post(url)
        assert answered.status_code == 200, answered.text
        assert 'id="done">Approve: sent.' in answered.text
        again = await http.post(url)
        assert again.status_code == 409
        assert "This link was used already; it answers nothing more." in again.text
        other = approve_link(links, run_id)  # another link to the same call, not used yet: the call was answered
        not_again = await http.post(other)
        assert not_again.status_code == 409
        assert "This call was answered already (by alice); this link answers nothing more." in not_again.text
        answers = await app.queries(run_id).answers()
        assert [(a.tool_call_id, a.action, a.answered_by) for a in answers] == [("call-1", "approve", "alice")]
        assert [call.tool_call_id for call in await app.pending(run_id)] == ["call-2"]  # the other call waits still

        await app.approve_tool_call(app.agents[0].id, run_id=run_id, tool_call_id="call-2", answered_by="alice")
        await app.attach(run_id, follow="run").result()
        journal = json.dumps([entry.chunk for entry in await app.store.read_chunks(run_id)])
    assert ran == [TRANSFER_ARGS, OTHER_ARGS]
    assert '"answeredBy": "alice"' in journal
    token = url.rsplit("/", 1)[1]
    client_side = ("httpx", "httpcore")  # the test's own HTTP client logs the URLs it requests
    logged = "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith(client_side))
    for secret in [*SECRETS, *BEARER, token]:
        assert secret not in journal
        assert secret not in logged


def tampered(url: str, **claims: Any) -> str:
    """``url`` with its claims changed and the signature kept."""
    base, token = url.rsplit("/", 1)
    version, body, signature = token.split(".")
    decoded = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    decoded.update(claims)
    forged = base64.urlsafe_b64encode(json.dumps(decoded).encode()).rstrip(b"=").decode()
    return f"{base}/{version}.{forged}.{signature}"


async def test_forged_links_are_refused_and_answer_nothing(make_app: AppFactory) -> None:
    app, _ = await two_calls(make_app)
    async with running_worker(app), linked(app) as (links, http):
        run_id = await suspended(app)
        genuine = approve_link(links, run_id)
        stranger = AnswerLinks(["a-secret-nobody-configured"], base_url=links.base_url)
        forgeries = {
            "another secret": approve_link(stranger, run_id),
            "claims changed to another call": tampered(genuine, c="call-2"),
            "claims changed to another principal": tampered(genuine, p="mallory"),
            "signature cut": genuine[:-6],
            "not a token": genuine.rsplit("/", 1)[0] + "/v1.garbage",
        }
        for what, url in forgeries.items():
            for method in ("GET", "POST"):
                answer = await http.request(method, url)
                assert answer.status_code == 403, (what, method, answer.text)
                assert "This link is not a valid answer link" in answer.text, what
        assert await app.queries(run_id).answers() == []
        assert sorted(call.tool_call_id for call in await app.pending(run_id)) == ["call-1", "call-2"]
        rotated = AnswerLinks([SECRETS[1]], base_url=links.base_url)  # signed before the new secret was put first
        assert (await http.post(approve_link(rotated, run_id))).status_code == 200
        assert [a.tool_call_id for a in await app.queries(run_id).answers()] == ["call-1"]
        assert [call.tool_call_id for call in await app.pending(run_id)] == ["call-2"]


async def test_an_expired_link_is_refused(make_app: AppFactory) -> None:
    app, _ = await two_calls(make_app)
    async with running_worker(app), linked(app) as (links, http):
        run_id = await suspended(app)
        week_ago = AnswerLinks(SECRETS, base_url=links.base_url, clock=lambda: time.time() - 8 * 86400)
        url = approve_link(week_ago, run_id)
        for method in ("GET", "POST"):
            answer = await http.request(method, url)
            assert answer.status_code == 410
            assert "This link has expired" in answer.text
        short = AnswerLinks(SECRETS, base_url=links.base_url, expires_in=timedelta(seconds=-1))
        assert (await http.post(approve_link(short, run_id))).status_code == 410
        assert await app.queries(run_id).answers() == []


async def test_a_link_answers_only_its_own_call_with_its_own_arguments_for_its_principal(make_app: AppFactory) -> None:
    app, _ = await two_calls(make_app)
    async with running_worker(app), linked(app) as (links, http):
        run_id = await suspended(app)
        refusals = {
            # call-1's arguments offered for call-2: the link of call A does not fit call B
            "call-2 with call-1's arguments": (approve_link(links, run_id, call="call-2"), 409, "arguments changed"),
            "changed arguments": (approve_link(links, run_id, args={"amount": 1, "to": "acme"}), 409, "changed"),
            "a call of another run": (approve_link(links, "no-such-run"), 409, "no longer waits"),
            "escalated away": (approve_link(links, run_id, principal="bob"), 403, "now waits for alice, group:finance"),
        }
        for what, (url, status, words) in refusals.items():
            answer = await http.post(url)
            assert answer.status_code == status, (what, answer.text)
            assert words in answer.text, (what, answer.text)
        assert await app.queries(run_id).answers() == []
        assert sorted(call.tool_call_id for call in await app.pending(run_id)) == ["call-1", "call-2"]


def approve_then_ask_agent(ran: list[Any]) -> Agent:
    """``wire`` needs approval (round 0), then asks which account (round 1) before it runs."""

    async def execute(data: dict[str, Any], ctx: ToolContext) -> Any:
        if ctx.resume_data is None:
            assert ctx.suspend is not None
            return await ctx.suspend({"question": "which account?"})
        ran.append(ctx.resume_data)
        return {"wired": ctx.resume_data}

    wire = create_tool(
        id="wire", description="Wires money", execute=execute, require_approval=True, approvers=["alice"]
    )
    model = ScriptedModel(
        [ScriptedResponse(tool_calls=[ScriptedToolCall("wire", {"amount": 5}, id="call-1")]), ScriptedResponse("ok")]
    )
    return Agent(id="wires", model=model, tools={"wire": wire})


async def test_a_link_of_one_round_does_not_answer_the_next(make_app: AppFactory) -> None:
    ran: list[Any] = []
    app = make_app([approve_then_ask_agent(ran)])
    async with running_worker(app), linked(app) as (links, http):
        run_id = await suspended(app)
        args = {"amount": 5}
        round_0 = links.links(
            run_id=run_id, tool_call_id="call-1", round=0, args=args, choices=approval_choices(), principal="alice"
        )["answers"]["approve"]
        await (await app.approve_tool_call("wires", run_id=run_id, tool_call_id="call-1", answered_by="alice")).result()
        [waiting] = await app.pending(run_id)
        assert waiting.round == 1
        refused = await http.post(round_0)
        assert refused.status_code == 409 and "answered already (by alice)" in refused.text
        assert [call.round for call in await app.pending(run_id)] == [1]
        round_1 = links.links(
            run_id=run_id, tool_call_id="call-1", round=1, args=args, choices=[Choice("savings", "resume", "savings")],
            principal="alice",
        )["answers"]["savings"]  # fmt: skip
        assert (await http.post(round_1)).status_code == 200
        await app.attach(run_id, follow="run").result()
    assert ran == ["savings"]


def test_as_a_link_maker_it_gives_each_choice_a_link_answering_as_the_first_person_approver() -> None:
    links = AnswerLinks(SECRETS, base_url="https://agents.example.com")

    def claims(url: str) -> Any:
        assert url.startswith("https://agents.example.com/api/answer-links/v1.")
        return links.verify(url.rsplit("/", 1)[1])

    approval = links("run-1", "call-1", 3, TRANSFER_ARGS, approvers=["group:finance", "alice"])
    assert sorted(approval) == ["approve", "decline"]
    verified = claims(approval["approve"])
    assert (verified.run_id, verified.tool_call_id, verified.round, verified.principal) == (
        "run-1",
        "call-1",
        3,
        "alice",
    )
    assert verified.choice.action == "approve" and claims(approval["decline"]).choice.action == "decline"
    question = links("run-1", "call-2", 0, {}, kind="question", options=[{"label": "Lisbon"}, "Porto"])
    assert sorted(question) == ["Lisbon", "Porto"]
    lisbon = claims(question["Lisbon"])
    assert (lisbon.choice.action, lisbon.choice.data, lisbon.principal) == ("resume", "Lisbon", "answer-link")
    # a call assigned to groups only: no link answers as a whole group; its links open the run in the dashboard
    group_only = links("r", "c", 0, {}, approvers=["group:ops"])
    assert group_only == {name: "https://agents.example.com/#/runs/r" for name in ("approve", "decline")}


async def test_a_link_answers_with_the_groups_a_tokens_file_gives_its_principal(make_app: AppFactory) -> None:
    app, _ = await two_calls(make_app)  # the calls wait for alice or group:finance
    carol = Principal(name="carol", groups=("finance",))  # a tokens file's entry, its groups with it
    server = ApiServer(app, port=0, tokens={"tok-carol-5d1": carol})
    await server.start()
    app.answer_links = AnswerLinks(SECRETS, base_url=server.url)
    try:
        async with running_worker(app), httpx.AsyncClient(timeout=60) as http:
            run_id = await suspended(app)
            answered = await http.post(approve_link(app.answer_links, run_id, principal="carol"))
            assert answered.status_code == 200, answered.text
            answers = await app.queries(run_id).answers()
            assert [(a.tool_call_id, a.answered_by) for a in answers] == [("call-1", "carol")]
    finally:
        await server.stop()
