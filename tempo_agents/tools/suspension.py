"""``ctx.suspend()``: a tool stops its run to wait for a person, and what approvals look like."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from tempo_agents.tools.validation import Schema, ValidationFailure, validate_suspend_payload

__all__ = ["APPROVAL_EXPIRED_RESULT", "APPROVAL_RESUME_SCHEMA", "DECLINED_RESULT", "Suspender", "schema_string"]

DECLINED_RESULT = "Tool call was not approved by the user"
"""The tool result of a declined approval, unless a reason is given (word for word: the model reads it)."""

APPROVAL_EXPIRED_RESULT = "Tool call was not approved before its deadline"
"""The tool result of an approval request nobody answered in time."""

APPROVAL_RESUME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approved": {
            "type": "boolean",
            "description": "Controls if the tool call is approved or not, should be true when approved and false "
            "when declined",
        }
    },
    "required": ["approved"],
}


def schema_string(schema: Schema | dict[str, Any] | None) -> str:
    """A JSON-schema as the compact JSON string chunks carry; ``''`` when there is none."""
    if schema is None:
        return ""
    document = schema if isinstance(schema, dict) else schema.json_schema()
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)


class Suspender:
    """The ``suspend`` function of a tool running inside a run. The tool should return right after it."""

    def __init__(self, tool_id: str, suspend_schema: Schema | None, default_expires_in: timedelta | None) -> None:
        self._tool_id = tool_id
        self._schema = suspend_schema
        self._default_expires_in = default_expires_in
        self.called = False
        self.payload: Any = None
        self.failure: ValidationFailure | None = None
        self.expires_in: timedelta | None = None

    async def __call__(self, payload: Any = None, *, expires_in: timedelta | None = None) -> None:
        """Suspend the call with ``payload`` (checked against ``suspend_schema``).

        ``expires_in`` ends the wait: when it passes, ``execute`` runs again with ``ctx.expired``
        set and no ``resume_data``. Without it the tool's or the agent's default applies.
        """
        if expires_in is not None and expires_in <= timedelta(0):
            raise ValueError("suspend(expires_in=...) must be a positive duration")
        self.called = True
        _, self.failure = validate_suspend_payload(self._tool_id, self._schema, payload)
        self.payload = payload
        self.expires_in = expires_in or self._default_expires_in
