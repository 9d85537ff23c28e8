"""Who may answer a waiting call: one check, made by the client before it sends and by the workflow as the authority.

A call assigned to approvers (user ids and ``group:<name>`` entries) may be answered only by one of them; a call
assigned to nobody may be answered by anyone. Pure: the workflow calls it while it validates an answer.
"""

from collections.abc import Iterable

__all__ = ["may_answer", "not_an_approver_text"]


def may_answer(approvers: list[str], principal: str | None, groups: Iterable[str]) -> bool:
    """Whether ``principal`` (a member of ``groups``) may answer a call assigned to ``approvers`` (empty: anyone)."""
    if not approvers:
        return True
    if principal is not None and principal in approvers:
        return True
    return any(f"group:{group}" in approvers for group in groups)


def not_an_approver_text(tool_call_id: str, approvers: list[str]) -> str:
    """The refusal of an answer from someone the call is not assigned to: it names who may answer."""
    return f'tool call "{tool_call_id}" may be answered only by {", ".join(approvers)}'
