"""The bare Temporal floor of ``bench/vs_reference.py``: no-op activities in the shape of an agent run.

A shape is a list of groups run one after the other; the activities of a group run in parallel (a step's tool
calls). A two-step tool run is ``[1, 1, 1]``: model step, tool call, model step.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import activity, workflow


@activity.defn(name="bench.noop")
async def noop(step: int) -> int:
    return step


@workflow.defn(name="BenchBareRun")
class BareRun:
    @workflow.run
    async def run(self, shape: list[int]) -> int:
        done = 0
        for group, width in enumerate(shape):
            await asyncio.gather(
                *(
                    workflow.execute_activity(noop, group, start_to_close_timeout=timedelta(seconds=30))
                    for _ in range(width)
                )
            )
            done += width
        return done
