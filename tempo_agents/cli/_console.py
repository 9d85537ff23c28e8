"""Writing to the terminal, errors the CLI reports as one line, and leaving the process."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import NoReturn

__all__ = ["CliError", "err", "exit_now", "one_line", "out"]


class CliError(Exception):
    """An error the CLI reports as one line on stderr, exiting with ``exit_code``."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


def out(text: str) -> None:
    """Print a line on stdout at once."""
    print(text, flush=True)


def err(text: str) -> None:
    """Print a line on stderr at once."""
    print(text, file=sys.stderr, flush=True)


def one_line(error: BaseException | str, limit: int = 300) -> str:
    """An error (its type and message) or a text on one line of at most ``limit`` characters."""
    text = (
        error
        if isinstance(error, str)
        else (f"{type(error).__name__}: {error}" if str(error) else type(error).__name__)
    )
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def exit_now(code: int) -> NoReturn:
    """Flush stdout and stderr and end the process with ``code``."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    # Processes that used the Temporal SDK can abort at interpreter exit; leave without finalising.
    os._exit(code)
