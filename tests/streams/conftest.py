"""What the stream tests share: a store of the kind the run asks for (``--store``), open for the test."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tempo_agents.store import Store, open_store
from tests.conftest import fresh_store_url


@pytest.fixture
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    store = open_store(fresh_store_url(request, request.config.getoption("--store"), tmp_path))
    await store.read_chunks("setup")  # the schema exists before anyone counts or follows
    yield store
    await store.close()
