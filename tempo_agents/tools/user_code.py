"""Calling user code (tools, hooks, predicates, transforms): sync or async, with the arguments it takes."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["call_user_function"]


async def call_user_function(function: Callable[..., Any], *args: Any) -> Any:
    """Call user code that may be sync or async and may take fewer arguments than offered.

    Sync functions run in a worker thread so they never block the event loop.
    """
    arguments = args[: _positional_arity(function, len(args))]
    if inspect.iscoroutinefunction(function):
        return await function(*arguments)
    result = await asyncio.to_thread(functools.partial(function, *arguments))
    if inspect.isawaitable(result):
        return await result
    return result


_ARITIES: weakref.WeakKeyDictionary[Callable[..., Any], int | None] = weakref.WeakKeyDictionary()
"""Each function's positional parameters (``None``: any number), worked out at its first call: reading a signature
takes longer than most tools' own work."""


def _positional_arity(function: Callable[..., Any], offered: int) -> int:
    try:
        arity = _ARITIES[function]
    except (KeyError, TypeError):  # not worked out yet, or a callable that takes no weak reference
        arity = _arity_of(function)
        with contextlib.suppress(TypeError):
            _ARITIES[function] = arity
    return offered if arity is None else min(arity, offered)


def _arity_of(function: Callable[..., Any]) -> int | None:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    count = 0
    for parameter in parameters:
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            return None
        if parameter.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            count += 1
    return count
