"""The Temporal dev server under chaos: on a data file, SIGKILLed and restarted on the same file and port; and a
client of it with the payload converter the runs use."""

from __future__ import annotations

import asyncio
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from tempo_agents.worker.dev_server import DevServer

__all__ = ["ServerChaos", "connect"]


@dataclass
class ServerChaos:
    """The Temporal dev server on a data file, SIGKILLed and restarted on the same file and port."""

    db_path: Path
    port: int
    server: DevServer | None = None
    restarts: int = 0

    async def start(self) -> DevServer:
        self.server = DevServer(db_filename=self.db_path, port=self.port, startup_timeout=60.0)
        await self.server.start()
        return self.server

    async def kill(self) -> float:
        """SIGKILL the server (no SIGTERM first) and wait until it is dead; returns when the signal was sent."""
        assert self.server is not None
        process = self.server._process
        assert process is not None
        sent = time.time()
        process.send_signal(signal.SIGKILL)
        await asyncio.to_thread(process.wait)
        await self.server.stop()  # releases the data file's lock and the log; the process is gone already
        return sent

    async def restart(self) -> None:
        await self.start()
        self.restarts += 1

    async def stop(self) -> None:
        if self.server is not None:
            await self.server.stop()


async def connect(address: str) -> Client:
    return await Client.connect(address, data_converter=pydantic_data_converter)
