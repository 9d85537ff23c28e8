"""How long this process's stores could not reach their databases: a tally the metrics endpoints read.

A store adds to it while it waits an outage out (``store/postgres/connections.py``, its probe): one outage from
the first failed probe to the first connection that gets through. The tally belongs to the process, like the
metrics that show it (``telemetry/exposition.py``), and knows nothing of them.
"""

from __future__ import annotations

import threading
import time

__all__ = ["STORE_OUTAGES", "OutageTally"]


class OutageTally:
    """Outages begun and seconds spent unreachable, the outages still going included."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ended_seconds = 0.0
        self._count = 0
        self._ongoing: dict[int, float] = {}
        self._next = 0

    def begin(self) -> int:
        """An outage begins now; returns its token for :meth:`end`."""
        with self._lock:
            self._next += 1
            self._count += 1
            self._ongoing[self._next] = time.monotonic()
            return self._next

    def end(self, token: int) -> float:
        """The outage of ``token`` ended now; returns how long it lasted."""
        with self._lock:
            began = self._ongoing.pop(token, None)
            if began is None:
                return 0.0
            lasted = time.monotonic() - began
            self._ended_seconds += lasted
            return lasted

    def read(self) -> tuple[int, float]:
        """``(outages begun, seconds unreachable)`` so far."""
        with self._lock:
            now = time.monotonic()
            return self._count, self._ended_seconds + sum(now - began for began in self._ongoing.values())


STORE_OUTAGES = OutageTally()
"""The process's tally."""
