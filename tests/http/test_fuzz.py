"""Schemathesis against the served OpenAPI document: every operation, bodies and parameters generated from its
schemas, sent with a token to a real server and worker. No response may be a 5xx, have a status the document
does not declare, or break its declared content type or schema.

Bounded: a few examples per operation (``FUZZ_EXAMPLES``). The schedules the fuzzer created are deleted
afterwards, so they start no runs on the session's dev server while the rest of the suite runs.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core.result import Ok

from tempo_agents.server.serving import ApiServer
from tests.conftest import AppFactory, running_worker
from tests.support.http_api import parity_agent

FUZZ_EXAMPLES = 30
TOKEN = "fuzz-token"
ENDLESS = {"/api/dashboard/events"}
"""Live feeds that never end (a generated request would hang): each is opened once, its first event read and
its declared status and content type checked (``_check_endless``)."""
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def _known(name: str, operation_path: str, runs: dict[str, list[str]]) -> list[str]:
    """Path values that reach the handlers (the fuzzer's own strings mostly answer 404)."""
    if name == "agent_id":
        return ["assistant"]
    if name == "tool_id":
        return ["weather-tool", "confirm-tool", "danger-tool", "boom-tool"]
    if name == "run_id":  # a suspended run's stream would follow it until it ends
        return runs["closed"] if operation_path.endswith("/stream") else runs["closed"] + runs["suspended"]
    return []


def _check_endless(base_url: str, path: str, headers: dict[str, str], document: dict[str, Any]) -> dict[str, str]:
    """Open an endless SSE route, read its first event, close it: the failures (empty: none)."""
    declared = document["paths"][path]["get"]["responses"]["200"]["content"]
    with httpx.stream("GET", base_url + path, headers=headers, timeout=20) as response:
        content_type = response.headers.get("content-type", "").split(";")[0]
        first = next(response.iter_lines(), "")
    if response.status_code != 200 or content_type not in declared or not first.startswith("data: "):
        return {path: f"{response.status_code} {content_type} {first!r}"}
    return {}


def _fuzz(base_url: str, runs: dict[str, list[str]]) -> dict[str, str]:
    """Run every operation's examples; the failures by operation (empty: none).

    Each example keeps the generated path values or, as often, takes known ones (an agent, a tool, a run).
    """
    headers = {"Authorization": f"Bearer {TOKEN}"}
    # The first request builds the document (a second of CPU idle, more than httpx's default 5 s at a load of 20).
    document = httpx.get(base_url + "/openapi.json", headers=headers, timeout=60).json()
    schema = schemathesis.openapi.from_dict(document)
    failures: dict[str, str] = {}
    succeeded: set[str] = set()
    operations = 0
    for found in schema.get_all_operations():
        assert isinstance(found, Ok), found  # an operation the loader could not read fails the test
        operation = found.ok()
        operations += 1
        if operation.path in ENDLESS:
            failures.update(_check_endless(base_url, operation.path, headers, document))
            succeeded.add(operation.label)
            continue

        @given(case=operation.as_strategy(), data=st.data())
        @settings(
            max_examples=FUZZ_EXAMPLES,
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def exercise(case: Any, data: Any) -> None:
            for name in list(case.path_parameters or {}):
                known = _known(name, case.operation.path, runs)
                if known and data.draw(st.booleans()):
                    chosen: str = data.draw(st.sampled_from(known))
                    case.path_parameters[name] = chosen
            response = case.call_and_validate(base_url=base_url, headers=headers, timeout=20, checks=CHECKS)
            if response.status_code < 300:
                succeeded.add(case.operation.label)

        try:
            exercise()
        except (Exception, BaseExceptionGroup) as error:
            failures[operation.label] = str(error)[:3000]
    assert operations >= 25, f"only {operations} operations in the OpenAPI document"
    # The examples reach the handlers, not only the request validation: most operations answered a 2xx.
    assert len(succeeded) >= operations // 2, f"only these operations ever succeeded: {sorted(succeeded)}"
    return failures


@pytest.mark.timeout(360)  # every operation's examples, each changing request recorded in the audit trail
async def test_the_openapi_document_is_true(make_app: AppFactory) -> None:
    app = make_app([parity_agent()])
    server = ApiServer(app, port=0, tokens={TOKEN: "fuzzer"})
    await server.start()
    try:
        async with running_worker(app):
            closed = await app.generate("assistant", "hello")
            suspended = [(await app.generate("assistant", message)).run_id for message in ("charge", "delete")]
            runs = {"closed": [closed.run_id], "suspended": suspended}
            try:
                failures = await asyncio.to_thread(_fuzz, server.url, runs)
            finally:
                for schedule in await app.list_schedules():
                    await app.get_schedule(schedule.id).delete()
    finally:
        await server.stop()
    assert not failures, "\n\n".join(f"{label}:\n{text}" for label, text in failures.items())
