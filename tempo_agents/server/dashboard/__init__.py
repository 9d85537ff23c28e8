"""The operations dashboard: an inbox of runs waiting for people, the runs table, run pages with their timeline.

The pages are hand-written HTML, CSS and JavaScript modules shipped in ``static/`` (no build step, no CDN), served
at ``/`` by the API server; they talk to the HTTP API: the operations routes and this package's own (``/inbox``,
``/dashboard/*``, ``/runs/:runId/timeline``).
"""

from tempo_agents.server.dashboard.feed import DashboardFeed
from tempo_agents.server.dashboard.pages import STATIC_DIR, pages_router
from tempo_agents.server.dashboard.routes import router

__all__ = ["STATIC_DIR", "DashboardFeed", "pages_router", "router"]
