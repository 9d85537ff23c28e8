"""The bare Temporal floor of ``bench/vs_reference.py``: no-op activities in the shape of an agent run.

A shape is a list of groups run one after the other; the activities of a group run in parallel (a step's tool
calls). A two-step tool run is ``[1, 1, 1]``: model step, tool call, model step. ``BareLocalRun`` is the same
with local activities: the floor of the local configuration (model steps and tools declared ``local=True``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta

from temporalio import activity, workflow

_TIMEOUT = timedelta(seconds=30)


@activity.defn(name="bench.noop")
async def noop(step: int) -> int:
    return step


async def _run_shape(shape: list[int], start: Callable[[int], Awaitable[int]]) -> int:
    done = 0
    for group, width in enumerate(shape):
        await asyncio.gather(*(start(group) for _ in range(width)))
        done += width
    return done


@workflow.defn(name="BenchBareRun")
class BareRun:
    @workflow.run
    async def run(self, shape: list[int]) -> int:
        return await _run_shape(
            shape, lambda group: workflow.execute_activity(noop, group, start_to_close_timeout=_TIMEOUT)
        )


@workflow.defn(name="BenchBareLocalRun")
class BareLocalRun:
    @workflow.run
    async def run(self, shape: list[int]) -> int:
        return await _run_shape(
            shape, lambda group: workflow.execute_local_activity(noop, group, start_to_close_timeout=_TIMEOUT)
        )
