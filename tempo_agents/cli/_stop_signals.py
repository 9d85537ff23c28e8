"""SIGINT/SIGTERM handling shared by the long-running commands."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable

from tempo_agents.cli._console import err, exit_now

__all__ = ["StopSignals"]


class StopSignals:
    """SIGINT/SIGTERM set :attr:`stop`; a second one runs the ``on_force`` callbacks and exits at once."""

    def __init__(self) -> None:
        self.stop = asyncio.Event()
        self.on_force: list[Callable[[], None]] = []
        self._received = 0

    def install(self) -> None:
        """Handle SIGINT and SIGTERM on the running event loop."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._handle)

    def _handle(self) -> None:
        self._received += 1
        if self._received == 1:
            err("stopping (press Ctrl-C again to stop at once)")
            self.stop.set()
            return
        for callback in self.on_force:
            with contextlib.suppress(Exception):
                callback()
        exit_now(130)
