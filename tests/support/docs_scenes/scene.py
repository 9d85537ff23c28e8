"""What a scene is: the setting a docs block acts in, prepared in the namespace the block runs in, and the checks
that the block did what its page says, made once it has run."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from tempo_agents import Agent, App

__all__ = ["Names", "Scene", "served_app"]

Names = dict[str, Any]
"""The namespace a block runs in: the scene adds the names its page has set up in prose, the block its own."""

Scene = Callable[[Names, str], AbstractAsyncContextManager[None]]
"""Given the namespace and the dev server's address: prepares the setting, yields while the block runs, then checks
what the block did (an exception from the block is raised at the yield, and the setting is taken down)."""


@asynccontextmanager
async def served_app(address: str, agents: list[Agent], **options: Any) -> AsyncIterator[App]:
    """An App of ``agents`` on a task queue of its own (its store a SQLite file in the working folder), connected
    to the dev server at ``address``, with its worker running in this process."""
    app = App(agents=agents, task_queue=f"docs-{uuid.uuid4()}", **options)
    await app.connect(address)
    try:
        async with app.worker():
            yield app
    finally:
        await app.store.close()
