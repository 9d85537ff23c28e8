"""Run-level approval policies: registered on the App by name, chosen per run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ApprovalPolicy", "ApprovalRequest"]


@dataclass(frozen=True)
class ApprovalRequest:
    """What a run-level approval policy decides on."""

    tool_name: str
    args: Any
    request_context: dict[str, Any] = field(default_factory=dict)


ApprovalPolicy = Callable[[ApprovalRequest], bool | Awaitable[bool]]
"""Returns whether a call needs a person's approval; raising means it does."""
