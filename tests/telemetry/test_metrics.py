"""Metrics and JSON logs of a real worker process (``tempo-agents worker --metrics-port --log-format json``)
and of the HTTP API, scraped over HTTP after real runs."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from tempo_agents.server.serving import ApiServer
from tempo_agents.worker.dev_server import free_port
from tests.support.polling import until
from tests.support.telemetry_worker import client_app, worker_process

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def scrape(url: str, headers: dict[str, str] | None = None) -> Samples:
    async with httpx.AsyncClient() as http:
        response = await http.get(url, headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


async def test_worker_and_api_metrics_count_runs_tool_outcomes_waits_and_tokens(
    temporal_env: WorkflowEnvironment, client: Client, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    task_queue = f"tq-{uuid.uuid4()}"
    port = free_port()
    app = client_app(client, store, task_queue)
    metrics_url = f"http://127.0.0.1:{port}/metrics"
    options = ("--metrics-port", str(port), "--metrics-host", "127.0.0.1")
    async with worker_process(temporal_env, store, task_queue, *options) as worker:
        assert f"metrics at {metrics_url}" in "".join(worker.stdout)
        for _ in range(2):
            assert (await app.generate("shop", "what is my balance?")).finish_reason == "stop"
        assert (await app.generate("faulty", "pay")).finish_reason == "stop"
        refund = await app.generate("refunds", "refund me")
        assert refund.finish_reason == "suspended"
        assert (await (await app.decline_tool_call("refunds", run_id=refund.run_id)).result()).finish_reason == "stop"

        asked_at = time.monotonic()
        paying = await app.generate("pay", "pay 990")
        suspended_by = time.monotonic()
        assert paying.finish_reason == "suspended"

        async def one_waiting() -> bool:
            return value(await scrape(metrics_url), "tempo_agents_runs_waiting", task_queue=task_queue) == 1

        await until(one_waiting, timeout=20)
        api = ApiServer(app, port=0, tokens={"metrics-token": "prometheus"})
        await api.start()
        try:
            async with httpx.AsyncClient() as http:
                refused = await http.get(f"{api.url}/metrics")
                document = (await http.get(f"{api.url}/openapi.json", headers=auth())).json()
            assert refused.status_code == 401
            assert "/metrics" not in document["paths"]
            from_api = await scrape(f"{api.url}/metrics", headers=auth())
            assert value(from_api, "tempo_agents_runs_waiting", task_queue=task_queue) == 1
        finally:
            await api.stop()

        answered_at = time.monotonic()
        resumed = await app.resume_generate("pay", {"confirmed": True}, run_id=paying.run_id)
        resumed_by = time.monotonic()
        assert resumed.finish_reason == "stop"

        async def none_waiting() -> bool:
            return value(await scrape(metrics_url), "tempo_agents_runs_waiting", task_queue=task_queue) == 0

        await until(none_waiting, timeout=20)
        samples = await scrape(metrics_url)

    for agent, runs in (("shop", 2), ("faulty", 1), ("refunds", 1), ("pay", 1)):
        assert value(samples, "tempo_agents_runs_started_total", agent=agent) == runs
        assert value(samples, "tempo_agents_runs_finished_total", agent=agent, reason="stop") == runs
    assert not [
        key for key in samples if key[0] == "tempo_agents_runs_finished_total" and ("reason", "suspended") in key[1]
    ]

    def calls(agent: str, tool: str, outcome: str) -> float:
        return value(samples, "tempo_agents_tool_calls_total", agent=agent, tool=tool, outcome=outcome)

    assert calls("shop", "lookup", "result") == 2
    assert calls("faulty", "broken", "error") == 1
    assert calls("refunds", "refund", "approval") == 1
    assert calls("refunds", "refund", "declined") == 1
    assert calls("pay", "charge", "suspended") == 1
    assert calls("pay", "charge", "result") == 1

    # Two runs of the shop model (10 + 12 tokens in, 3 + 4 out each); three runs of the pay model.
    assert value(samples, "tempo_agents_tokens_total", model="scripted/shop-model", direction="input") == 44
    assert value(samples, "tempo_agents_tokens_total", model="scripted/shop-model", direction="output") == 14
    assert value(samples, "tempo_agents_tokens_total", model="scripted/pay-model", direction="input") == 66

    # The charge waited from its suspension to its resume; the declined refund's wait is observed too.
    assert value(samples, "tempo_agents_wait_seconds_count", agent="pay", tool="charge") == 1
    waited = value(samples, "tempo_agents_wait_seconds_sum", agent="pay", tool="charge")
    assert answered_at - suspended_by <= waited <= resumed_by - asked_at
    assert value(samples, "tempo_agents_wait_seconds_count", agent="refunds", tool="refund") == 1

    # The Temporal SDK's own metrics are on the same page.
    sdk = {name for name, _ in samples if name.startswith("temporal_")}
    assert "temporal_workflow_completed_total" in sdk or "temporal_workflow_completed" in sdk, sorted(sdk)


def auth() -> dict[str, str]:
    return {"Authorization": "Bearer metrics-token"}


async def test_json_logs_of_a_tool_carry_the_run_and_the_tool_call(
    temporal_env: WorkflowEnvironment, client: Client, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    task_queue = f"tq-{uuid.uuid4()}"
    app = client_app(client, store, task_queue)
    async with worker_process(temporal_env, store, task_queue, "--log-format", "json") as worker:
        paying = await app.generate("pay", "pay 990")
        await app.resume_generate("pay", {"confirmed": True}, run_id=paying.run_id)
        shopping = await app.generate("shop", "what is my balance?")
    lines = [json.loads(line) for line in worker.stderr if line.startswith("{")]
    assert any(line["logger"].startswith("temporalio.") for line in lines)  # the SDK's records too

    charging = [line for line in lines if line["message"] == "charging 990"]
    assert len(charging) == 2  # the call, and the call resumed
    for line in charging:
        assert line["logger"] == "billing"
        assert line["level"] == "INFO"
        assert line["run_id"] == paying.run_id
        assert line["agent_id"] == "pay"
        assert line["tool_call_id"] == "call_0_0"
        assert line["tool_name"] == "charge"
        assert line["activity"] == "tempo_agents.tool_call"

    (looking,) = [line for line in lines if line["message"].startswith("looking up the balance")]
    assert looking["run_id"] == shopping.run_id
    assert looking["tool_call_id"] == "call_0_0"
    assert looking["temporal_activity"]["workflow_id"] == shopping.run_id
