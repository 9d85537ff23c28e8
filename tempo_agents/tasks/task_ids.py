"""The ids of the tasks a ``task_write`` sends: explicit ones kept, unambiguous earlier ones reused, the rest made
from the content.

Pure and deterministic (the standard library and the task types only), so it runs in workflow code.

Decisions where the reference is silent:

* Slugs are cut to 48 characters first and trailing ``_`` is stripped afterwards, so a slug never ends in ``_``.
* "The n-th task with the same content" counts every task of the write (with or without an explicit id), in order.
* A previous id is only reused if no earlier task of the same write already took it (possible only when the
  previous list itself held duplicate ids); otherwise the task gets a generated id.
"""

from __future__ import annotations

from collections import Counter

from tempo_agents.tasks.inputs import TaskInput
from tempo_agents.tasks.items import TaskItem

__all__ = ["assign_task_ids", "slugify"]

_SLUG_MAX = 48


def slugify(content: str) -> str:
    """Lowercase ASCII ``a-z0-9`` runs of ``content`` joined by ``_``, at most 48 characters, no edge ``_``."""
    parts: list[str] = []
    current: list[str] = []
    for char in content.lower():
        if "a" <= char <= "z" or "0" <= char <= "9":
            current.append(char)
        elif current:
            parts.append("".join(current))
            current = []
    if current:
        parts.append("".join(current))
    return "_".join(parts)[:_SLUG_MAX].rstrip("_")


def assign_task_ids(tasks: list[TaskInput], previous: list[TaskItem]) -> list[TaskItem]:
    """Give every task of a ``task_write`` a unique id, keeping explicit ids and reusing unambiguous previous ones."""
    explicit = {task.id for task in tasks if task.id is not None}
    reusable = _reusable_previous_ids(tasks, previous, explicit)
    reserved = explicit | set(reusable.values())
    used: set[str] = set()
    seen_content: Counter[str] = Counter()
    assigned: list[TaskItem] = []
    for task in tasks:
        seen_content[task.content] += 1
        task_id = task.id if task.id is not None else reusable.get(task.content)
        if task_id is None or task_id in used:
            task_id = _unique(_generated_id(task.content, seen_content[task.content]), used | reserved)
        used.add(task_id)
        assigned.append(TaskItem(id=task_id, content=task.content, status=task.status, active_form=task.active_form))
    return assigned


def _reusable_previous_ids(tasks: list[TaskInput], previous: list[TaskItem], explicit: set[str]) -> dict[str, str]:
    """Content → previous id, for id-less contents that match exactly one unclaimed previous task."""
    idless = Counter(task.content for task in tasks if task.id is None)
    previous_by_content: dict[str, list[str]] = {}
    for item in previous:
        previous_by_content.setdefault(item.content, []).append(item.id)
    reusable: dict[str, str] = {}
    for content, count in idless.items():
        ids = previous_by_content.get(content, [])
        if count == 1 and len(ids) == 1 and ids[0] not in explicit:
            reusable[content] = ids[0]
    return reusable


def _generated_id(content: str, occurrence: int) -> str:
    base = f"task_{slugify(content) or 'item'}"
    return base if occurrence < 2 else f"{base}_{occurrence}"


def _unique(candidate: str, taken: set[str]) -> str:
    if candidate not in taken:
        return candidate
    suffix = 2
    while f"{candidate}_{suffix}" in taken:
        suffix += 1
    return f"{candidate}_{suffix}"
