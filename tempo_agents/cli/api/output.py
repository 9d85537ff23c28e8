"""How ``tempo-agents api`` prints: JSON when stdout is not a terminal, readable text when it is."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from tempo_agents.cli.printing import ChunkPrinter, json_preview
from tempo_agents.journal.chunks import chunk_from_wire

__all__ = ["Output", "table"]


def _dumps(value: Any, *, pretty: bool = False) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2 if pretty else None, default=str)


class Output:
    """Prints results, chunks and errors for a terminal or for a program."""

    def __init__(self, *, tty: bool | None = None) -> None:
        self.tty = sys.stdout.isatty() if tty is None else tty
        self._printer: ChunkPrinter | None = None

    def result(self, data: Any, readable: Callable[[Any], str] | None = None) -> None:
        """A one-shot result: ``{"data": ...}`` as JSON, or ``readable(data)`` at a terminal."""
        if not self.tty:
            print(_dumps({"data": data}), flush=True)
        elif readable is not None:
            print(readable(data), flush=True)
        else:
            print(_dumps(data, pretty=True), flush=True)

    def chunk(self, chunk: dict[str, Any]) -> None:
        """One stream chunk: a JSON line, or printed as the ``run`` command prints chunks."""
        if not self.tty:
            print(_dumps(chunk), flush=True)
            return
        if self._printer is None:
            self._printer = ChunkPrinter(sys.stdout)
        try:
            self._printer.write(chunk_from_wire(chunk))
        except ValidationError:
            print(f"[{chunk.get('type')}] {json_preview(chunk.get('payload'))}", flush=True)

    def end_stream(self) -> bool:
        """Close a printed stream; whether the run failed."""
        if self._printer is None:
            return False
        self._printer.close()
        return self._printer.failed

    def error(self, payload: dict[str, Any], readable: str) -> None:
        """An error on stderr: the JSON object, or one readable line at a terminal."""
        print(readable if self.tty else _dumps(payload), file=sys.stderr, flush=True)


def table(rows: list[list[str]], header: list[str]) -> str:
    """Rows as aligned columns under a header."""
    if not rows:
        return "(none)"
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
             for row in [header, *rows]]  # fmt: skip
    return "\n".join(lines)
