"""Choosing a store: by URL, by ``TEMPO_AGENTS_STORE``, and ``tempo-agents store migrate`` on either backend."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tempo_agents import App
from tempo_agents.cli.main import run_cli
from tempo_agents.store import SQLiteStore, open_store
from tempo_agents.store.postgres import PostgresStore
from tempo_agents.store.url import DEFAULT_STORE_URL, STORE_ENV, default_store_url


def test_tempo_agents_store_names_the_store_of_an_app_that_names_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(STORE_ENV, raising=False)
    assert default_store_url() == DEFAULT_STORE_URL
    monkeypatch.setenv(STORE_ENV, "postgresql://ann:s3cret@db.invalid:5432/runs")
    app = App()
    assert isinstance(app.store, PostgresStore)
    assert app.store.display_url == "postgresql://ann:***@db.invalid:5432/runs"
    assert isinstance(open_store(), PostgresStore)
    assert isinstance(App(store="sqlite:///x.db").store, SQLiteStore)  # an App's own store comes first


async def test_store_migrate_on_sqlite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    assert await asyncio.to_thread(run_cli, ["store", "migrate", "--store", url]) == 0
    assert capsys.readouterr().out.strip() == f"{url}: schema up to date"
    assert (tmp_path / "runs.db").exists()


async def test_store_migrate_refuses_an_unknown_scheme(capsys: pytest.CaptureFixture[str]) -> None:
    assert await asyncio.to_thread(run_cli, ["store", "migrate", "--store", "mysql://ann:s3cret@db/runs"]) == 2
    error = capsys.readouterr().err
    assert "unsupported store URL" in error and "s3cret" not in error
