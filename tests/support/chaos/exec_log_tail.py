"""The execution log as it grows: which executions are open, on which worker (the scenarios choose whom to kill by
it)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.chaos.check import Key

__all__ = ["ExecLogTail"]


class ExecLogTail:
    """Follows the execution log: which executions are open, on which worker."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._position = 0
        self._partial = b""
        self.open: dict[str, set[Key]] = {}
        self.started: list[tuple[str, Key, float]] = []
        """Every start line so far: (worker, key, time)."""
        self.ended: list[tuple[str, Key, float]] = []
        """Every end line so far: (worker, key, time)."""

    def poll(self) -> None:
        if not self.path.exists():
            return
        with self.path.open("rb") as log:
            log.seek(self._position)
            data = log.read()
        self._position += len(data)
        data = self._partial + data
        *complete, self._partial = data.split(b"\n")
        for raw in complete:
            record = json.loads(raw)
            key: Key = (record["run"], record["kind"], record["call"], record["phase"])
            worker = record["worker"]
            if record["ev"] == "start":
                self.open.setdefault(worker, set()).add(key)
                self.started.append((worker, key, record["t"]))
            else:
                self.open.get(worker, set()).discard(key)
                self.ended.append((worker, key, record["t"]))

    def busy(self, worker: str) -> bool:
        return bool(self.open.get(worker))

    def size(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0
