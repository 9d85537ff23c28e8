"""A resume client in its own process that knows nothing of tempo-agents: a bare Temporal client.

It reads the run's ``pending`` query, prints ``ready``, waits for ``go`` on stdin (so a test can make
every caller ready before any sends), sends the ``resume`` update with an id of its own, and prints
what happened as one JSON line.

    python -m tests.support.clients.raw_resumer ADDRESS RUN_ID DATA_JSON
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid

from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError


async def main(address: str, run_id: str, data: str) -> None:
    client = await Client.connect(address)
    handle = client.get_workflow_handle(run_id)
    pending = await handle.query("pending")
    tool_call_id = pending[0]["toolCallId"]
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    request = {"toolCallId": tool_call_id, "data": json.loads(data)}
    try:
        accepted = await handle.execute_update("resume", request, id=f"raw-{uuid.uuid4()}")
    except WorkflowUpdateFailedError as error:
        cause = error.cause
        kind = cause.type if isinstance(cause, ApplicationError) else type(cause).__name__
        print(json.dumps({"accepted": False, "code": kind, "message": str(cause)}), flush=True)
        return
    print(json.dumps({"accepted": True, "result": accepted}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
