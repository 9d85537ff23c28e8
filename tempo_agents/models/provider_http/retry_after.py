"""How long a provider asks the client to wait before trying again.

Read from ``retry-after-ms`` (milliseconds; OpenAI sends it) when it holds a usable value, else from
``retry-after`` (seconds, or an HTTP date). A usable value is a finite number of seconds, zero or more, or a
date (one in the past means "now": 0). Anything else (a negative or infinite number, ``nan``, text that is
neither a number nor a date) is no hint at all: ``None``, and the retry policy's own back-off applies.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

__all__ = ["parse_retry_after", "retry_after_seconds"]


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from a response's headers (looked up in lower case, as ``httpx.Headers`` allows)."""
    milliseconds = _number(headers.get("retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    return parse_retry_after(headers.get("retry-after"))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from one ``Retry-After`` value: a number of seconds or an HTTP date."""
    if value is None or not value.strip():
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    if _is_number(value):
        return None  # a number, but negative or not finite
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _number(value: str | None) -> float | None:
    """``value`` as a finite, non-negative number, else ``None``."""
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True
