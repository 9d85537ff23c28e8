"""The harness's progress lines on stdout, each stamped with the time (``pytest -s`` and the bench scripts show
them)."""

from __future__ import annotations

import time

__all__ = ["say"]


def say(line: str) -> None:
    print(f"[chaos {time.strftime('%H:%M:%S')}] {line}", flush=True)
