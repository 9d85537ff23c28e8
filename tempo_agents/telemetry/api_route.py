"""``GET /metrics`` of the HTTP API: the same page as a worker's endpoint, for the API's process.

Left out of the OpenAPI document (it is not JSON); behind the bearer tokens like every route but
``/api/health``, so a Prometheus scrape job sends one (``authorization: {credentials: ...}``).
"""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request, Response

from tempo_agents.telemetry.exposition import CONTENT_TYPE, MetricsExposition
from tempo_agents.telemetry.sdk_metrics import installed_sdk_metrics

__all__ = ["METRICS_PATH", "metrics_router"]

METRICS_PATH = "/metrics"


def metrics_router() -> APIRouter:
    router = APIRouter()

    @router.get(METRICS_PATH, include_in_schema=False)
    async def metrics(request: Request) -> Response:
        app = request.app.state.tempo_app
        exposition = MetricsExposition(
            client=app.client, task_queue=app.task_queue, loop=asyncio.get_running_loop(), sdk=installed_sdk_metrics()
        )
        return Response(await asyncio.to_thread(exposition.render), media_type=CONTENT_TYPE)

    return router
