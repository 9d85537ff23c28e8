"""Choosing a store by URL."""

from __future__ import annotations

from pathlib import Path

from tempo_agents.errors import ConfigurationError
from tempo_agents.store.base import Store
from tempo_agents.store.sqlite import SQLiteStore

DEFAULT_STORE_URL = "sqlite:///.tempo-agents/store.db"


def open_store(url: str = DEFAULT_STORE_URL) -> Store:
    """Open the store a URL names: ``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db``."""
    if url.startswith("sqlite:///"):
        return SQLiteStore(Path(url.removeprefix("sqlite:///")))
    scheme = url.split(":", 1)[0] if ":" in url else url
    raise ConfigurationError(f"unsupported store URL {url!r} (scheme {scheme!r}); use sqlite:///path/to/store.db")
