"""Error codes of rejected resumes (the reference's error ids), shared by the workflow and clients."""

__all__ = [
    "AGENT_MISMATCH",
    "AMBIGUOUS_TOOL_CALL",
    "INVALID_APPROVAL",
    "INVALID_ARGS",
    "INVALID_RESUME_DATA",
    "NOT_AN_APPROVER",
    "NOT_SUSPENDED",
    "NO_SNAPSHOT_FOUND",
    "TOOL_CALL_NOT_SUSPENDED",
    "WORDED_BY_THE_RUN",
]

NO_SNAPSHOT_FOUND = "AGENT_RESUME_NO_SNAPSHOT_FOUND"
NOT_SUSPENDED = "AGENT_RESUME_NOT_SUSPENDED"
AMBIGUOUS_TOOL_CALL = "AGENT_RESUME_AMBIGUOUS_TOOL_CALL"
TOOL_CALL_NOT_SUSPENDED = "AGENT_RESUME_TOOL_CALL_NOT_SUSPENDED"
AGENT_MISMATCH = "AGENT_RESUME_AGENT_MISMATCH"
INVALID_APPROVAL = "AGENT_RESUME_INVALID_APPROVAL"
INVALID_RESUME_DATA = "AGENT_RESUME_INVALID_DATA"
NOT_AN_APPROVER = "AGENT_RESUME_NOT_AN_APPROVER"
"""The call is assigned to other principals or groups (its refusal names who may answer)."""
INVALID_ARGS = "AGENT_RESUME_INVALID_ARGS"
"""Arguments changed by an approver that the tool's input schema refuses, or changed where no approval waits."""

WORDED_BY_THE_RUN = frozenset({NOT_AN_APPROVER, INVALID_ARGS})
"""Refusals whose text the workflow words (it alone knows who may answer); clients pass it on as it is."""
