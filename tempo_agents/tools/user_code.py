"""Calling user code (tools, hooks, predicates, transforms): sync or async, with the arguments it takes."""

from __future__ import annotations

import asyncio
import functools
import inspect
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


def _positional_arity(function: Callable[..., Any], offered: int) -> int:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return offered
    count = 0
    for parameter in parameters:
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            return offered
        if parameter.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            count += 1
    return min(count, offered)
