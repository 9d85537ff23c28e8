"""The dashboard's page and assets: open to every browser (they hold no data; the data routes need the token)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

__all__ = ["ASSETS_PATH", "STATIC_DIR", "assets", "pages_router"]

STATIC_DIR = Path(__file__).resolve().parent / "static"
"""The HTML, CSS and JavaScript modules of the dashboard, shipped as package data."""
ASSETS_PATH = "/dashboard/assets"
"""Where the assets are served (open without a token, like ``/``)."""

pages_router = APIRouter(include_in_schema=False)


@pages_router.get("/")
async def index() -> FileResponse:
    return FileResponse(STATIC_DIR / "index.html", headers={"cache-control": "no-cache"})


@pages_router.get("/dashboard")
async def dashboard() -> RedirectResponse:
    return RedirectResponse("/")


def assets() -> StaticFiles:
    """The static files app mounted at :data:`ASSETS_PATH`."""
    return StaticFiles(directory=STATIC_DIR)
