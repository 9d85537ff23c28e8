"""Putting the dashboard into the API server: its pages at ``/``, its assets, its data routes and its state."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI

from tempo_agents.client.app import App
from tempo_agents.server.dashboard.feed import DashboardFeed
from tempo_agents.server.dashboard.pages import ASSETS_PATH, assets, pages_router
from tempo_agents.server.dashboard.routes import router
from tempo_agents.server.dashboard.runs_table import RunFigures
from tempo_agents.server.errors import ERROR_RESPONSES

__all__ = ["mount_dashboard"]


def mount_dashboard(
    api: FastAPI, app: App, *, prefix: str, dependencies: Sequence[Any], temporal_ui_url: str | None
) -> list[str]:
    """Add the dashboard to ``api``; the paths it serves without a token (its page and assets)."""
    api.state.dashboard_feed = DashboardFeed(app)
    api.state.dashboard_figures = RunFigures(app)
    api.state.temporal_ui_url = temporal_ui_url.rstrip("/") if temporal_ui_url else None
    api.include_router(router, prefix=prefix, dependencies=list(dependencies), responses=ERROR_RESPONSES)
    api.include_router(pages_router)
    api.mount(ASSETS_PATH, assets(), name="dashboard-assets")
    return ["/", "/dashboard", ASSETS_PATH + "/"]
