"""Asking the person at the terminal, or reading answers already waiting on a non-terminal stdin."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import select
import threading
from typing import Any, TextIO

__all__ = ["Prompter"]


class Prompter:
    """Asks the person at the terminal, or reads answers already waiting on a non-terminal stdin.

    On a terminal it waits for a line (a stop signal ends the wait). Otherwise it never blocks for
    long: it takes what stdin holds within a second (``printf 'n\\nToo vague\\n' | tempo-agents demo``)
    and reports no answer when there is none (``< /dev/null``, a CI job, a closed stdin).
    """

    def __init__(self, stdin: TextIO | None, out: TextIO, *, first_wait: float = 1.0) -> None:
        self.stdin = stdin
        self.out = out
        self.first_wait = first_wait
        self.interactive = _isatty(stdin)
        self._waiting: list[str] | None = None

    async def ask(self, question: str, stop: asyncio.Event) -> str | None:
        """The answer (stripped), or ``None`` for none: end of input, nothing waiting, or a stop signal."""
        self.out.write(question)
        self.out.flush()
        if self.interactive:
            answer = await self._read_terminal_line(stop)
            if answer is None:
                self.out.write("\n")
        else:
            if self._waiting is None:
                self._waiting = _read_waiting_lines(self.stdin, self.first_wait)
            answer = self._waiting.pop(0).strip() if self._waiting else None
            self.out.write(f"{answer}   (read from stdin)\n" if answer is not None else "\n")
        self.out.flush()
        return answer

    async def _read_terminal_line(self, stop: asyncio.Event) -> str | None:
        loop = asyncio.get_running_loop()
        line: asyncio.Future[str] = loop.create_future()
        stdin = self.stdin
        assert stdin is not None

        def deliver(text: str) -> None:
            if not line.done():
                line.set_result(text)

        def read() -> None:
            try:
                text = stdin.readline()
            except Exception:
                text = ""
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
                loop.call_soon_threadsafe(deliver, text)

        # A daemon thread, not the default executor: asyncio.run() would wait for a read nobody finishes.
        threading.Thread(target=read, name="demo-prompt", daemon=True).start()
        stop_task: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({line, stop_task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop_task.cancel()
        if not line.done():
            line.cancel()
            return None
        text = line.result()
        return text.strip() if text else None  # "" is the end of input (Ctrl-D)


def _isatty(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (ValueError, OSError):
        return False


def _read_waiting_lines(stream: TextIO | None, first_wait: float) -> list[str]:
    """The lines a non-terminal ``stream`` holds now (waiting up to ``first_wait`` s for the first bytes)."""
    try:
        fd = stream.fileno() if stream is not None else -1
    except (ValueError, OSError, io.UnsupportedOperation):
        return []
    if fd < 0:
        return []
    data = bytearray()
    wait = first_wait
    while len(data) < 1_000_000:
        try:
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                break
            block = os.read(fd, 65536)
        except (OSError, ValueError):
            break
        if not block:
            break
        data += block
        wait = 0.1  # more of the same input follows quickly, or not at all
    return data.decode(errors="replace").splitlines()
