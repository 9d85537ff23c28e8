"""The probes a quiet stream asks whether its run has closed: when Temporal cannot answer now (stopped, unreachable,
a loaded worker's query timing out) the answer is "not known to have closed", so the stream waits and asks again
instead of failing a run that goes on."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.service import RPCError

from tempo_agents.client.run_probes import NOT_KNOWN_NOW, run_closed_probe, thread_run_probe
from tempo_agents.errors import RunNotFoundError
from tempo_agents.worker.dev_server import DevServer, free_port

pytestmark = pytest.mark.timeout(180)


async def test_a_probe_while_temporal_is_down_does_not_end_the_stream(tmp_path: Path) -> None:
    async with DevServer(db_filename=str(tmp_path / "temporal.db"), port=free_port()) as server:
        client = await Client.connect(server.address)
        with pytest.raises(RunNotFoundError):  # while it is up, a run nobody started is not found
            await run_closed_probe(client, "never-started")()
    # The server is gone: Temporal cannot tell, which is not an answer about the run.
    with pytest.raises(RPCError) as raised:
        await client.get_workflow_handle("never-started").describe()
    assert raised.value.status in NOT_KNOWN_NOW
    assert await run_closed_probe(client, "never-started")() is None
    assert await thread_run_probe(client, "tq", "never-started", "t1", "acme")() is None
