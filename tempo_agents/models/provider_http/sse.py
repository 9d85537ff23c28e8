"""Decoding a ``text/event-stream`` body, one line at a time.

The decoder follows the event-stream format: a line starting with ``:`` is a comment (a keep-alive), a line
``name: value`` sets a field (one space after the colon is dropped), ``data`` lines of one event are joined
with newlines, a blank line ends the event. ``id`` and ``retry`` fields are read past: the adapters never
reconnect. Two choices the format leaves to the client:

- an event whose data is empty (no ``data`` line, or only empty ones) is not reported: neither provider's
  wire has one, and there is nothing in it to decode;
- the lines after the last blank line (a body cut short, or a server that does not end its last event) are
  kept; :meth:`SSEDecoder.end` reports them as an event, and the adapter decides whether to trust it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SSEDecoder", "SSEEvent"]


@dataclass(frozen=True)
class SSEEvent:
    """One event of the stream: its ``event`` field (``""`` when it had none) and its data."""

    event: str
    data: str


class SSEDecoder:
    """Feed it the body's lines (without their line ends); it answers each completed event."""

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []
        self._first_line = True

    def feed(self, line: str) -> SSEEvent | None:
        """One line of the body: the event it completes (a blank line), else ``None``."""
        if self._first_line:
            self._first_line = False
            line = line.removeprefix("\ufeff")  # a byte order mark may lead the stream
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None

    def end(self) -> SSEEvent | None:
        """The body ended: the event its last lines started without a blank line after them, if any."""
        return self._dispatch()

    def _dispatch(self) -> SSEEvent | None:
        data, event = "\n".join(self._data), self._event
        self._data, self._event = [], ""
        return SSEEvent(event, data) if data else None
