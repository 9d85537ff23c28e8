"""The garbage collector of a long-running command's process: what exists once it serves is set aside.

A process that serves (``serve``, ``worker``, ``dev``) holds some 137,000 objects the collector tracks once it has
started (``dev`` with a small App): the modules of the package and its dependencies, their classes, the validators
and routes built from them. They live as long as the process, yet each of CPython's full collections goes through
every one of them with the event loop stopped: 31 ms on an idle process, 100-200 ms in an API server streaming to a
thousand clients, every stream stalled meanwhile (bench/README.md, ``many_watchers.py``). ``gc.freeze`` moves them
to a generation the collector no longer visits; objects made later (requests, runs, streams) are collected as
before.
"""

from __future__ import annotations

import gc

__all__ = ["freeze_startup_objects"]


def freeze_startup_objects() -> None:
    """Collect what start-up left behind, then set every object that remains aside from later collections. Call it
    once the process serves: the collector never frees an object set aside (reference counting still does), so a
    reference cycle among them that the process drops later stays until it exits."""
    gc.collect()
    gc.freeze()
