"""Runs ask for eager start while few starts overlap; the rest go through the task queue."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, Interceptor, OutboundInterceptor, StartWorkflowInput, WorkflowHandle
from temporalio.exceptions import WorkflowAlreadyStartedError

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse
from tempo_agents.client.app import EAGER_STARTS_IN_FLIGHT
from tests.conftest import running_worker


class _RecordedStarts(Interceptor):
    """Notes whether each workflow start from the client asked for eager execution."""

    def __init__(self) -> None:
        self.eager: list[bool] = []

    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        recorded = self

        class _Outbound(OutboundInterceptor):
            async def start_workflow(self, input: StartWorkflowInput) -> WorkflowHandle[Any, Any]:
                recorded.eager.append(input.request_eager_start)
                return await super().start_workflow(input)

        return _Outbound(next)


async def test_overlapping_starts_beyond_the_limit_go_through_the_task_queue(client: Client, tmp_path: Path) -> None:
    """Five runs started together (every start issued before any answers): the first two ask for eager start, the
    other three do not, and all complete. A start that fails gives its place back, and so does each finished one:
    the next lone start is eager again."""
    assert EAGER_STARTS_IN_FLIGHT == 2
    starts = _RecordedStarts()
    config = client.config()
    config["interceptors"] = [*config["interceptors"], starts]
    app = App(
        agents=[Agent(id="quick", model=ScriptedModel([ScriptedResponse(text="Done.")] * 10))],
        client=Client(**config),
        store=f"sqlite:///{tmp_path / 'store.db'}",
        task_queue=f"tq-{uuid.uuid4()}",
    )
    held_id = f"held-{uuid.uuid4()}"
    try:
        held = await app.agent("quick").stream("held", run_id=held_id)  # no worker yet: it stays open
        with pytest.raises(WorkflowAlreadyStartedError):
            await app.agent("quick").stream("again", run_id=held_id)
        assert starts.eager == [True, True]  # the failed start gave its place back

        async with running_worker(app):
            streams = await asyncio.gather(*(app.agent("quick").stream(f"run {n}") for n in range(5)))
            results = await asyncio.gather(*(stream.result() for stream in [held, *streams]))
            assert [result.text for result in results] == ["Done."] * 6
            assert starts.eager[2:] == [True, True, False, False, False]

            lone = await app.agent("quick").generate("alone")
            assert lone.text == "Done."
            assert starts.eager[7:] == [True]
    finally:
        await app.store.close()
