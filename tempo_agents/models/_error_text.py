"""Wording shared by the provider adapters' :class:`~tempo_agents.errors.ModelError` messages.

A model error message names what failed, quotes what the provider said (cut short: some servers echo
the whole request back), and says whether another attempt can help. It never says that the step *is*
retried: the adapter cannot know whether the activity's retry policy has an attempt left.
"""

from __future__ import annotations

__all__ = [
    "BAD_LINE_CHARS",
    "MAY_SUCCEED_LATER",
    "PROVIDER_DETAIL_CHARS",
    "WILL_NOT_SUCCEED_LATER",
    "capitalized",
    "clipped",
    "quoted_start",
    "retry_outlook",
    "without_full_stop",
]

PROVIDER_DETAIL_CHARS = 300
"""How much of a provider's own error text a message quotes."""
BAD_LINE_CHARS = 100
"""How much of a malformed stream event a message quotes."""

MAY_SUCCEED_LATER = "a later attempt may succeed"
WILL_NOT_SUCCEED_LATER = "retrying will not help"


def clipped(text: str, limit: int = PROVIDER_DETAIL_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters (ending in an ellipsis when it was longer)."""
    one_line = " ".join(text.split())
    if len(one_line) <= limit:
        return one_line
    return one_line[: limit - 1].rstrip() + "…"


def without_full_stop(text: str) -> str:
    """``text`` without trailing full stops or blanks, so it can be followed by more of a sentence."""
    return text.rstrip().rstrip(".").rstrip()


def capitalized(text: str) -> str:
    """``text`` with its first letter upper-cased and the rest untouched (names such as ``OPENAI_API_KEY``)."""
    return text[:1].upper() + text[1:]


def quoted_start(line: str, limit: int = BAD_LINE_CHARS) -> str:
    """The start of a stream line, quoted so that blanks and control characters show."""
    if len(line) <= limit:
        return repr(line)
    return repr(line[:limit]) + "…"


def retry_outlook(retryable: bool) -> str:
    """Whether another attempt can help, as the end of a message."""
    return MAY_SUCCEED_LATER if retryable else WILL_NOT_SUCCEED_LATER
