"""Choosing a store by URL."""

from __future__ import annotations

import os
from pathlib import Path

from tempo_agents.encryption import configured_keys
from tempo_agents.errors import ConfigurationError
from tempo_agents.store.base import Store
from tempo_agents.store.redaction import redact
from tempo_agents.store.sealed_columns import StoreKeys
from tempo_agents.store.sqlite import SQLiteStore

DEFAULT_STORE_URL = "sqlite:///.tempo-agents/store.db"

STORE_ENV = "TEMPO_AGENTS_STORE"
"""The environment variable that names the store of an App that does not name one."""

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")

__all__ = ["DEFAULT_STORE_URL", "STORE_ENV", "default_store_url", "open_store", "redact"]


def default_store_url() -> str:
    """``$TEMPO_AGENTS_STORE`` when set, else :data:`DEFAULT_STORE_URL`."""
    return os.environ.get(STORE_ENV) or DEFAULT_STORE_URL


def open_store(url: str | None = None, *, keyring: StoreKeys | None = None) -> Store:
    """Open the store a URL names: ``sqlite:///relative/path.db``, ``sqlite:////absolute/path.db`` or
    ``postgresql://user:password@host:5432/database`` (also ``postgres://``; needs the ``postgresql`` extra).
    Without a URL: :func:`default_store_url`. The store seals what it keeps of runs under ``keyring``, else under
    the keys of ``$TEMPO_AGENTS_ENCRYPTION_KEYS`` when it is set (docs/store-encryption.md)."""
    if url is None:
        url = default_store_url()
    keyring = configured_keys(keyring)
    if url.startswith("sqlite:///"):
        return SQLiteStore(Path(url.removeprefix("sqlite:///")), keyring=keyring)
    if url.startswith(_POSTGRES_SCHEMES):
        try:
            from tempo_agents.store.postgres import PostgresStore
        except ImportError as error:
            raise ConfigurationError(
                f"PostgreSQL stores need psycopg ({error.name} is missing): pip install 'tempo-agents[postgresql]'"
            ) from None
        return PostgresStore(url, keyring=keyring)
    scheme = url.split(":", 1)[0] if ":" in url else url
    raise ConfigurationError(
        f"unsupported store URL {redact(url)!r} (scheme {scheme!r}); use sqlite:///path/to/store.db "
        "or postgresql://user:password@host:5432/database"
    )
