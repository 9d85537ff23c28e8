"""A tool call as people see it: its arguments and its suspend payload through the tool's display transforms.

Every place that shows a call's arguments to a person goes through :func:`displayed_call`: the journal's chunks of a
waiting or declined call, the inbox, the run's page and detail, the list of suspended runs, notification events
(and so mail, Slack and webhooks) and the one-click answer link's confirmation page. So a display transform that
hides a field hides it everywhere; nothing shows the raw arguments beside it.

The arguments of a call that waits for approval are projected by the ``approval`` transform when the tool (or its
agent) has one, else by the ``input`` transform, which shapes every other view of the call's arguments: a tool that
hides a field of its input hides it in its approval too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tempo_agents.tools.transform import Slot, ToolTransform, project

__all__ = ["DisplayedCall", "args_slot", "displayed_call"]


@dataclass(frozen=True)
class DisplayedCall:
    """A call's ``args`` and ``suspend_payload`` as clients may see them."""

    args: Any
    suspend_payload: Any = None


def args_slot(transform: ToolTransform | None, *, approval: bool) -> Slot:
    """The projection that shapes a call's arguments: ``approval`` for a call that waits for approval when there is
    one, else ``input``."""
    if approval and transform is not None and transform.function("display", "approval") is not None:
        return "approval"
    return "input"


async def displayed_call(
    transform: ToolTransform | None,
    *,
    tool_name: str,
    tool_call_id: str,
    args: Any,
    suspend_payload: Any = None,
    approval: bool = False,
) -> DisplayedCall:
    """The call as people see it; ``approval``: it waits for (or was answered in) an approval."""
    ids = {"tool_name": tool_name, "tool_call_id": tool_call_id}
    shown_args = await project(transform, "display", args_slot(transform, approval=approval), args, input=args, **ids)
    shown_payload = suspend_payload
    if suspend_payload is not None:
        shown_payload = await project(
            transform, "display", "suspend", suspend_payload, input=args, suspend_payload=suspend_payload, **ids
        )
    return DisplayedCall(shown_args, shown_payload)
