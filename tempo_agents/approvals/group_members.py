"""Who a waiting call's approvers are as people: its principals, and the members of its ``group:<name>`` entries
where the groups configuration (principal → group names) knows them.

Used to give each person a link of their own; who may answer stays the workflow's check (``who_may_answer``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["members_by_group", "people_of"]


def members_by_group(groups: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """Group name → its members, from principal → the groups it belongs to."""
    members: dict[str, list[str]] = {}
    for principal, names in groups.items():
        for name in names:
            members.setdefault(name, []).append(principal)
    return members


def people_of(approvers: Sequence[str], members: Mapping[str, Sequence[str]]) -> list[str]:
    """The people of ``approvers``: each principal, and each known member of each group, once, in order (a group
    without known members adds nobody)."""
    people: list[str] = []
    for name in approvers:
        group = name.removeprefix("group:")
        found = list(members.get(group, ())) if name.startswith("group:") else [name]
        people += [person for person in found if person not in people]
    return people
