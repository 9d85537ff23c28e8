"""Tool lifecycle hooks: ``on_input_start``, ``on_input_delta``, ``on_input_available``, ``on_output``.

They run where the data is: the first two in the model-step activity while the model streams a
call's arguments, the last two in the tool-call activity around ``execute``. A hook that raises is
logged and never fails the call.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tempo_agents.models.messages import Message
from tempo_agents.tools.user_code import call_user_function

__all__ = ["LifecycleHook", "ToolLifecycleEvent", "run_lifecycle_hook"]

_log = logging.getLogger("tempo_agents.tools")


@dataclass(frozen=True)
class ToolLifecycleEvent:
    """What a lifecycle hook receives; the fields that do not apply to its moment are ``None``."""

    tool_call_id: str
    tool_name: str
    messages: list[Message] = field(default_factory=list, repr=False)
    input_text_delta: str | None = None
    input: Any = None
    output: Any = None


LifecycleHook = Callable[[ToolLifecycleEvent], Awaitable[None] | None]


async def run_lifecycle_hook(hook: LifecycleHook | None, name: str, event: ToolLifecycleEvent) -> None:
    """Call a lifecycle hook; log and swallow what it raises."""
    if hook is None:
        return
    try:
        await call_user_function(hook, event)
    except Exception:
        _log.exception("tool %s: %s hook raised; the call goes on", event.tool_name, name)
