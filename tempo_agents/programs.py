"""Running a short program to its end: ``run_program(main())`` in place of ``asyncio.run(main())``.

A process that used Temporal's Python SDK can abort as the interpreter tears itself down: the SDK's threads (its
Rust core's) outlive the teardown's start and touch Python after it ("Fatal Python error: PyGILState_Release", exit
status 134, or a segmentation fault). A bare temporalio program here (a worker, an update, a result; temporalio
1.35, Python 3.11) ended so in 17 of 150 runs, and a tempo-agents example in 3 of 100. ``run_program`` ends the
process once ``main`` is done, after everything Python does at exit (waiting for the program's other threads, the
``atexit`` handlers, logging's flush among them, and flushing stdout and stderr) but without the teardown, where
the abort happens. Close the files the program writes (``with open(...)``) before it ends: a file left open is not
flushed by a teardown that does not happen.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import Any, NoReturn

__all__ = ["end_process", "run_program"]

_INTERRUPTED = 130
"""The exit status of a program stopped with Ctrl-C, as shells report it (128 + SIGINT)."""


def run_program(main: Coroutine[Any, Any, object]) -> NoReturn:
    """Run ``main`` on a new event loop (as :func:`asyncio.run` does), then end the process: status 0 when it
    returns, the status of a :class:`SystemExit` it raises, 130 on Ctrl-C, and 1 after printing any other exception,
    as Python itself would. See the module's text for why it does not return."""
    try:
        asyncio.run(main)
    except SystemExit as stop:
        code = _exit_status(stop.code)
    except KeyboardInterrupt:
        code = _INTERRUPTED
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    else:
        code = 0
    end_process(code)


def end_process(code: int) -> NoReturn:
    """End the process with status ``code`` after what Python does at exit, but without the interpreter's teardown:
    the program's other non-daemon threads are waited for, the ``atexit`` handlers run, stdout and stderr are
    flushed."""
    shutdown: Callable[[], None] | None = getattr(threading, "_shutdown", None)
    if shutdown is not None:  # what the interpreter calls first at exit: waits for the non-daemon threads
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _exit_status(code: object) -> int:
    """The status Python exits with for ``SystemExit(code)``: ``None`` is 0, an integer is itself, anything else is
    printed on stderr and is 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
