"""The bare Temporal floor of ``bench/vs_reference.py``: no-op activities in the shape of an agent run.

A shape is a list of groups run one after the other; the activities of a group run in parallel (a step's tool
calls). A two-step tool run is ``[1, 1, 1]``: model step, tool call, model step. With ``local``, the activities are
local ones: the floor of the local configuration (model steps and tools declared ``local=True``).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import activity, workflow

_TIMEOUT = timedelta(seconds=30)


@activity.defn(name="bench.noop")
async def noop(step: int) -> int:
    return step


@workflow.defn(name="BenchBareRun")
class BareRun:
    @workflow.run
    async def run(self, shape: list[int], local: bool = False) -> int:
        done = 0
        for group, width in enumerate(shape):
            await asyncio.gather(*(self._noop(group, local) for _ in range(width)))
            done += width
        return done

    @staticmethod
    async def _noop(group: int, local: bool) -> int:
        if local:
            return await workflow.execute_local_activity(noop, group, start_to_close_timeout=_TIMEOUT)
        return await workflow.execute_activity(noop, group, start_to_close_timeout=_TIMEOUT)
