"""Who may answer: a call assigned to principals or groups is answered by them only, whatever the client, and the
refusal names who may answer."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from temporalio.testing import WorkflowEnvironment

from tempo_agents import App
from tempo_agents.approvals.policy import ApprovalRequest
from tempo_agents.errors import ConfigurationError, ResumeError
from tempo_agents.server.auth import load_token_groups, load_tokens_file
from tests.conftest import AppFactory, running_worker, temporal_binary
from tests.support.agents import delegate, scripted_agent
from tests.support.approval_agents import TRANSFER_ARGS, payments_agent
from tests.support.http_api import served

REFUSAL = 'tool call "call-1" may be answered only by alice, group:finance'


async def suspended_run(app: App, agent_id: str = "payments") -> str:
    first = await app.agent(agent_id).generate("pay")
    assert first.finish_reason == "suspended", first
    return first.run_id


async def test_python_answers_come_only_from_the_assigned_principal_or_a_member_of_the_group(
    make_app: AppFactory,
) -> None:
    ran: list[dict[str, Any]] = []
    agent, _ = payments_agent(ran, tool_approvers=["alice", "group:finance"])
    app = make_app([agent], groups={"carol": ["finance"]})
    async with running_worker(app):
        run_id = await suspended_run(app)
        [waiting] = await app.pending(run_id)
        assert waiting.approvers == ["alice", "group:finance"]
        for outsider in ("mallory", None):
            with pytest.raises(ResumeError) as refused:
                await app.approve_tool_call("payments", run_id=run_id, tool_call_id="call-1", answered_by=outsider)
            assert refused.value.message == REFUSAL
            assert refused.value.code == "AGENT_RESUME_NOT_AN_APPROVER"
        with pytest.raises(ResumeError, match="may be answered only by alice, group:finance"):
            await app.decline_tool_call("payments", run_id=run_id, tool_call_id="call-1", answered_by="mallory")
        assert [call.tool_call_id for call in await app.pending(run_id)] == ["call-1"]
        assert ran == []

        stream = await app.approve_tool_call("payments", run_id=run_id, tool_call_id="call-1", answered_by="carol")
        result = await stream.result()
        answers = await app.queries(run_id).answers()
    assert result.finish_reason == "stop"
    assert ran == [TRANSFER_ARGS]
    assert [(answer.action, answer.answered_by) for answer in answers] == [("approve", "carol")]


async def test_a_refused_signal_is_journaled_with_who_may_answer_and_the_call_keeps_waiting(
    make_app: AppFactory,
) -> None:
    ran: list[dict[str, Any]] = []
    agent, _ = payments_agent(ran, tool_approvers=["alice", "group:finance"])
    app = make_app([agent])
    async with running_worker(app):
        run_id = await suspended_run(app)
        await app.signal_resume(run_id, {"approved": True}, tool_call_id="call-1", answered_by="mallory")

        async def refusal() -> dict[str, Any] | None:
            chunks = [entry.chunk for entry in await app.store.read_chunks(run_id)]
            return next((chunk for chunk in chunks if chunk["type"] == "data-error"), None)

        async with asyncio.timeout(15):
            while (found := await refusal()) is None:
                await asyncio.sleep(0.05)
        assert found["data"]["code"] == "AGENT_RESUME_NOT_AN_APPROVER"
        assert found["data"]["message"] == REFUSAL
        assert [call.tool_call_id for call in await app.pending(run_id)] == ["call-1"]
        await app.signal_resume(run_id, {"approved": True}, tool_call_id="call-1", answered_by="alice")
        result = await app.attach(run_id, follow="run").result()
    assert result.finish_reason == "stop"
    assert ran == [TRANSFER_ARGS]


async def test_an_approver_policy_on_the_app_assigns_each_call_and_the_tools_own_approvers_win(
    make_app: AppFactory,
) -> None:
    def by_amount(request: ApprovalRequest) -> list[str]:
        return ["cfo"] if request.args["amount"] > 500 else ["group:finance"]

    ran: list[dict[str, Any]] = []
    calls = [{"amount": 900, "to": "acme"}, {"amount": 50, "to": "acme"}]
    agent, _ = payments_agent(ran, calls=calls, agent_approvers="by-amount")
    app = make_app([agent], approver_policies={"by-amount": by_amount})
    overriding, _ = payments_agent(ran, agent_id="overridden", tool_approvers=["dave"], agent_approvers=["erin"])
    other = make_app([overriding])
    async with running_worker(app), running_worker(other):
        run_id = await suspended_run(app)
        assigned = {call.tool_call_id: call.approvers for call in await app.pending(run_id)}
        other_run = await suspended_run(other, "overridden")
        [overridden] = await other.pending(other_run)
    assert assigned == {"call-1": ["cfo"], "call-2": ["group:finance"]}
    assert overridden.approvers == ["dave"]


def test_an_unknown_approver_policy_is_named_when_the_app_is_built() -> None:
    agent, _ = payments_agent([], agent_approvers="nobody-registered-this")
    with pytest.raises(ConfigurationError, match='no approver policy named "nobody-registered-this"'):
        App(agents=[agent], store="sqlite:///:memory:")


def write_tokens_file(path: Path) -> Path:
    path.write_text(
        "# token principal [groups]\ntok-alice alice\ntok-carol carol finance,ops\ntok-mallory mallory\n",
        encoding="utf-8",
    )
    return path


def test_tokens_files_give_groups_and_the_old_formats_stay_valid(tmp_path: Path) -> None:
    lines = write_tokens_file(tmp_path / "tokens.txt")
    assert load_tokens_file(lines) == {"tok-alice": "alice", "tok-carol": "carol", "tok-mallory": "mallory"}
    assert load_token_groups(lines) == {"carol": ["finance", "ops"]}
    as_json = tmp_path / "tokens.json"
    as_json.write_text(
        json.dumps({"tok-a": "alice", "tok-c": {"name": "carol", "groups": ["finance"]}}), encoding="utf-8"
    )
    assert load_tokens_file(as_json) == {"tok-a": "alice", "tok-c": "carol"}
    assert load_token_groups(as_json) == {"carol": ["finance"]}
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"tok-a": "alice"}), encoding="utf-8")
    assert load_tokens_file(old) == {"tok-a": "alice"} and load_token_groups(old) == {}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"tok-a": {"name": "alice", "groups": "finance"}}), encoding="utf-8")
    with pytest.raises(ConfigurationError, match="must map tokens to names"):
        load_tokens_file(bad)


async def test_http_answers_are_refused_for_outsiders_and_accepted_from_a_group_of_the_tokens_file(
    make_app: AppFactory, tmp_path: Path
) -> None:
    tokens_file = write_tokens_file(tmp_path / "tokens.txt")
    ran: list[dict[str, Any]] = []
    agent, _ = payments_agent(ran, tool_approvers=["alice", "group:finance"])
    app = make_app([agent])
    tokens, groups = load_tokens_file(tokens_file), load_token_groups(tokens_file)
    async with running_worker(app), served(app, tokens=tokens, groups=groups) as http:
        run_id = await suspended_run(app)
        mallory = {"authorization": "Bearer tok-mallory"}
        refused = await http.post(f"/runs/{run_id}/approve", json={"toolCallId": "call-1"}, headers=mallory)
        assert refused.status_code == 403, refused.text
        assert refused.json() == {"error": REFUSAL, "code": "AGENT_RESUME_NOT_AN_APPROVER"}
        via_reference_route = await http.post(
            "/agents/payments/approve-tool-call-generate",
            json={"runId": run_id, "toolCallId": "call-1"},
            headers=mallory,
        )
        assert via_reference_route.status_code == 403 and via_reference_route.json()["error"] == REFUSAL
        accepted = await http.post(
            f"/runs/{run_id}/approve", json={"toolCallId": "call-1"}, headers={"authorization": "Bearer tok-carol"}
        )
        assert accepted.status_code == 200, accepted.text
        result = await app.attach(run_id, follow="run").result()
        answers = await app.queries(run_id).answers()
        journal = json.dumps([entry.chunk for entry in await app.store.read_chunks(run_id)])
    assert result.finish_reason == "stop"
    assert ran == [TRANSFER_ARGS]
    assert [answer.answered_by for answer in answers] == ["carol"]
    assert '"answeredBy": "carol"' in journal
    assert not [token for token in tokens if token in journal]  # principals are recorded, never their tokens


def cli_update(env: WorkflowEnvironment, run_id: str, request: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    address = env.client.service_client.config.target_host
    return subprocess.run(
        [temporal_binary(), "workflow", "update", "execute", "--address", address, "--workflow-id", run_id,
         "--name", "resume", "--input", json.dumps(request)],
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip


async def test_the_temporal_cli_is_refused_with_who_may_answer_and_an_approver_is_accepted(
    make_app: AppFactory, temporal_env: WorkflowEnvironment
) -> None:
    ran: list[dict[str, Any]] = []
    agent, _ = payments_agent(ran, tool_approvers=["alice", "group:finance"])
    app = make_app([agent])
    async with running_worker(app):
        run_id = await suspended_run(app)
        loop = asyncio.get_running_loop()
        outsider = {"toolCallId": "call-1", "action": "approve", "answeredBy": "mallory"}
        refused = await loop.run_in_executor(None, cli_update, temporal_env, run_id, outsider)
        assert refused.returncode != 0
        assert REFUSAL in refused.stdout + refused.stderr
        assert [call.tool_call_id for call in await app.pending(run_id)] == ["call-1"]
        member = {"toolCallId": "call-1", "action": "approve", "answeredBy": "carol", "answeredByGroups": ["finance"]}
        accepted = await loop.run_in_executor(None, cli_update, temporal_env, run_id, member)
        assert accepted.returncode == 0, accepted.stderr
        result = await app.attach(run_id, follow="run").result()
        answers = await app.queries(run_id).answers()
    assert result.finish_reason == "stop"
    assert ran == [TRANSFER_ARGS]
    assert [answer.answered_by for answer in answers] == ["carol"]


async def test_a_sub_agents_assigned_approval_is_assigned_on_the_parent_and_its_groups_reach_the_child(
    make_app: AppFactory,
) -> None:
    ran: list[dict[str, Any]] = []
    child, _ = payments_agent(ran, agent_id="treasurer", tool_approvers=["group:finance"])
    parent = scripted_agent("desk", [delegate("treasurer", "pay acme", "t1")], "Paid.", agents={"treasurer": child})
    app = make_app([parent], groups={"carol": ["finance"]})
    async with running_worker(app):
        first = await app.agent("desk").generate("go")
        assert first.finish_reason == "suspended"
        [waiting] = await app.pending(first.run_id, settle_seconds=60)
        assert (waiting.tool_name, waiting.approvers) == ("agent-treasurer", ["group:finance"])
        with pytest.raises(ResumeError, match="may be answered only by group:finance"):
            await app.approve_tool_call("desk", run_id=first.run_id, answered_by="mallory")
        with pytest.raises(ResumeError, match="its arguments cannot be changed"):
            await app.approve_tool_call("desk", run_id=first.run_id, answered_by="carol", args={"prompt": "x"})
        after = await (await app.approve_tool_call("desk", run_id=first.run_id, answered_by="carol")).result()
        child_answers = await app.queries(f"{first.run_id}-t1").answers()
    assert after.text == "Paid."
    assert ran == [TRANSFER_ARGS]
    assert [(a.action, a.answered_by) for a in child_answers] == [("approve", "carol")]
