"""The answers a link can give: approve or decline an approval, pick one option of a question."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Choice", "approval_choices", "call_choices", "option_choices"]


@dataclass(frozen=True)
class Choice:
    """One answer a link gives: its name (the key of ``answers`` in a waiting event's ``links``), the action and,
    for a resume, the data."""

    name: str
    action: Literal["approve", "decline", "resume"]
    data: Any = None


def approval_choices() -> list[Choice]:
    """An approval's two answers: ``approve`` and ``decline``."""
    return [Choice("approve", "approve"), Choice("decline", "decline")]


def option_choices(options: Iterable[str | Mapping[str, Any]]) -> list[Choice]:
    """A choice question's answers, one per option (an ``ask_user`` option's ``label``): resumed with the label."""
    choices = []
    for option in options:
        label = option if isinstance(option, str) else str(option.get("label", ""))
        if label:
            choices.append(Choice(label, "resume", label))
    return choices


def call_choices(kind: str, options: Iterable[str | Mapping[str, Any]] = ()) -> list[Choice]:
    """The answers of a waiting call of ``kind``: an approval's two, else one per option of its question."""
    return approval_choices() if kind == "approval" else option_choices(options)
