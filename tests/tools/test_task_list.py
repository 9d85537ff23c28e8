# ruff: noqa: E501
"""Tests for the pure task-list core (the four task tools) and its state-signal projection."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tempo_agents.tasks import TASKS_STATE_TYPE, TaskItem, TaskSignalState, TaskStatus
from tempo_agents.tasks.inputs import TaskIdInput, TaskInput, TaskUpdateInput, TaskWriteInput, input_json_schema
from tempo_agents.tasks.operations import (
    NO_MEMORY_MESSAGE,
    check_tasks,
    complete_task,
    demote_extra_in_progress,
    failure_result,
    format_task_list_result,
    no_memory_result,
    update_task,
    write_tasks,
)
from tempo_agents.tasks.signals import TASK_STATE_SYSTEM_MESSAGE, TaskSignal, compute_task_signal, task_list_fingerprint
from tempo_agents.tasks.task_ids import assign_task_ids, slugify
from tempo_agents.tools.builtin.task_tools import (
    TASK_CHECK_DESCRIPTION,
    TASK_COMPLETE_DESCRIPTION,
    TASK_TOOL_DESCRIPTIONS,
    TASK_UPDATE_DESCRIPTION,
    TASK_WRITE_DESCRIPTION,
)
from tempo_agents.tools.validation import Schema, validate_input

WRITE_DESCRIPTION = """Create and manage a structured task list for your current coding session. This helps you track progress, organize complex tasks, and demonstrate thoroughness to the user.

Usage:
- Use this to create the initial task list or replace the whole list after replanning
- Pass the FULL task list each time this tool is called (replaces the previous list)
- Each task has: id (stable identifier), content (imperative), status (pending, in_progress, or completed), activeForm (present continuous)
- IDs must be unique. If duplicate explicit IDs are provided, the duplicate task is returned with a generated fallback ID
- Keep task IDs stable across updates. If omitted, IDs are generated and returned in the tool result
- When an ID is omitted while rewriting an existing list, one unambiguous matching task may reuse an existing ID
- Prefer single-task update tools when they are available
- Mark tasks in_progress BEFORE starting work (only ONE at a time)
- Mark tasks completed IMMEDIATELY after finishing
- Use this for multi-step tasks requiring 3+ distinct actions

States:
- pending: Not yet started
- in_progress: Currently working on (limit to ONE)
- completed: Finished successfully"""

UPDATE_DESCRIPTION = """Update one task in the current task list by stable ID. Use this for targeted changes to one existing task.

Usage:
- Provide the task ID returned by the task-list tools
- Include only the fields that changed
- Use status to move a task between pending, in_progress, and completed
- Use task_complete when only marking a task completed
- If the ID is unknown, the tool returns an error with available task IDs"""

COMPLETE_DESCRIPTION = """Mark one task completed by stable ID. Use this when one tracked task is finished.

Usage:
- Provide the task ID returned by the task-list tools
- If the ID is unknown, the tool returns an error with available task IDs"""

CHECK_DESCRIPTION = """Check the completion status of your current task list. Use this before finishing tracked work to ensure all tasks are completed.

Returns:
- Human-readable content summary with task counts and incomplete task IDs
- Structured task list snapshot with stable IDs
- summary object with total, completed, inProgress, pending, incomplete, hasTasks, and allCompleted
- incompleteTasks array for tasks that still need work

summary.allCompleted is true only when at least one tracked task exists and every tracked task is completed. If no tasks exist, summary.hasTasks is false and summary.allCompleted is false."""

NO_MEMORY = "Task tools require agent memory (a memory-backed thread). No task was recorded. Configure the agent with Memory to use the task list."

EMPTY_SUMMARY = {
    "total": 0,
    "completed": 0,
    "inProgress": 0,
    "pending": 0,
    "incomplete": 0,
    "hasTasks": False,
    "allCompleted": False,
}


def item(task_id: str, content: str, status: TaskStatus = "pending", active_form: str = "") -> TaskItem:
    return TaskItem(id=task_id, content=content, status=status, active_form=active_form or f"Doing {content}")


def task_input(content: str, status: TaskStatus = "pending", task_id: str | None = None) -> TaskInput:
    return TaskInput(id=task_id, content=content, status=status, active_form=f"Doing {content}")


def ids(tasks: list[TaskItem]) -> list[str]:
    return [task.id for task in tasks]


def wire(*tasks: TaskItem) -> list[dict[str, Any]]:
    return [{"id": t.id, "content": t.content, "status": t.status, "activeForm": t.active_form} for t in tasks]


# --- purity ------------------------------------------------------------------------------------------------------------

TASK_MODULES = ["__init__", "items", "operation_names", "inputs", "task_ids", "operations", "signals"]
ALLOWED_PROJECT_IMPORTS = {"tempo_agents._wire", *(f"tempo_agents.tasks.{name}" for name in TASK_MODULES[1:])}


def test_every_module_of_the_task_list_is_checked_for_purity() -> None:
    package = Path(__file__).parents[2] / "tempo_agents" / "tasks"
    assert sorted(path.stem for path in package.glob("*.py")) == sorted(TASK_MODULES)


@pytest.mark.parametrize("module", TASK_MODULES)
def test_modules_import_only_pure_dependencies(module: str) -> None:
    path = Path(__file__).parents[2] / "tempo_agents" / "tasks" / f"{module}.py"
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    allowed_roots = set(sys.stdlib_module_names) | {"__future__", "pydantic", "pydantic_core"}
    impure = {name for name in imported if name.split(".")[0] not in allowed_roots}
    assert impure <= ALLOWED_PROJECT_IMPORTS


def test_task_types_keep_their_earlier_import_paths() -> None:
    """The task types live in ``tempo_agents.tasks``; code that imported them from the task tools still works."""
    from tempo_agents import tasks
    from tempo_agents.tools.builtin import task_list, task_signals

    assert task_list.TaskItem is tasks.TaskItem and task_list.TASKS_STATE_TYPE == tasks.TASKS_STATE_TYPE == "task"
    assert task_signals.TaskSignalState is tasks.TaskSignalState


# --- constants and schemas -------------------------------------------------------------------------------------------


def test_descriptions_are_verbatim() -> None:
    assert TASK_WRITE_DESCRIPTION == WRITE_DESCRIPTION
    assert TASK_UPDATE_DESCRIPTION == UPDATE_DESCRIPTION
    assert TASK_COMPLETE_DESCRIPTION == COMPLETE_DESCRIPTION
    assert TASK_CHECK_DESCRIPTION == CHECK_DESCRIPTION
    assert TASK_TOOL_DESCRIPTIONS == {
        "task_write": WRITE_DESCRIPTION,
        "task_update": UPDATE_DESCRIPTION,
        "task_complete": COMPLETE_DESCRIPTION,
        "task_check": CHECK_DESCRIPTION,
    }


def test_constants() -> None:
    assert TASKS_STATE_TYPE == "task"
    assert NO_MEMORY_MESSAGE == NO_MEMORY
    assert TASK_STATE_SYSTEM_MESSAGE == (
        "Task list state may appear in the conversation as <current-task-list ...>...</current-task-list> snapshots and <task-list-update ...>...</task-list-update> deltas. These are automatic observations of your task list, not user instructions. Use them as the latest task state, continue following the actual user request, and do not treat task-list updates as the user asking you to repeat, summarize, or change tasks unless an actual user message asks for that."
    )


def test_write_schema_has_the_field_descriptions() -> None:
    schema = input_json_schema("task_write")
    assert schema["required"] == ["tasks"]
    assert schema["properties"]["tasks"]["description"] == "The complete updated task list"
    item_schema = schema["$defs"]["TaskInput"]
    assert item_schema["required"] == ["content", "status", "activeForm"]
    assert item_schema["properties"] == {
        "id": {
            "description": "Stable task identifier (for example, 'task_investigate_tests'). Keep this unchanged across updates.",
            "minLength": 1,
            "type": "string",
        },
        "content": {
            "description": "Task description in imperative form (e.g., 'Fix authentication bug')",
            "minLength": 1,
            "type": "string",
        },
        "status": {
            "description": "Current task status",
            "enum": ["pending", "in_progress", "completed"],
            "type": "string",
        },
        "activeForm": {
            "description": "Present continuous form shown during execution (e.g., 'Fixing authentication bug')",
            "minLength": 1,
            "type": "string",
        },
    }


def test_update_complete_and_check_schemas() -> None:
    update = input_json_schema("task_update")
    assert update["required"] == ["id"]
    assert update["properties"]["content"] == {
        "description": "New task description in imperative form",
        "minLength": 1,
        "type": "string",
    }
    assert update["properties"]["status"]["description"] == "New task status"
    assert update["properties"]["activeForm"] == {
        "description": "New present continuous form shown during execution",
        "minLength": 1,
        "type": "string",
    }
    assert input_json_schema("task_complete") == {
        "properties": {"id": {"type": "string"}},
        "required": ["id"],
        "type": "object",
    }
    assert input_json_schema("task_check") == {"properties": {}, "type": "object"}
    with pytest.raises(ValueError, match="Not a task tool"):
        input_json_schema("ask_user")


def test_write_input_validates_min_lengths_and_camel_case() -> None:
    data = TaskWriteInput.model_validate(
        {"tasks": [{"content": "Write tests", "status": "pending", "activeForm": "Writing tests"}]}
    )
    assert data.tasks[0].active_form == "Writing tests"
    assert data.tasks[0].id is None
    with pytest.raises(ValidationError) as caught:
        TaskWriteInput.model_validate({"tasks": [{"id": "", "content": "", "status": "done", "activeForm": ""}]})
    assert {error["loc"] for error in caught.value.errors()} == {
        ("tasks", 0, "id"),
        ("tasks", 0, "content"),
        ("tasks", 0, "status"),
        ("tasks", 0, "activeForm"),
    }


# --- task_update validation --------------------------------------------------------------------------------------------


def test_update_without_fields_fails_at_the_root() -> None:
    with pytest.raises(ValidationError) as caught:
        TaskUpdateInput.model_validate({"id": "task_a"})
    errors = caught.value.errors()
    assert [(error["loc"], error["msg"]) for error in errors] == [((), "Provide at least one field to update.")]


def test_update_without_fields_is_a_root_validation_result() -> None:
    _, failure = validate_input("task_update", Schema(TaskUpdateInput), {"id": "task_a"})
    assert failure is not None
    assert "\n- root: Provide at least one field to update.\n" in failure.to_result()["message"]


def test_update_with_only_null_fields_fails_at_the_root() -> None:
    with pytest.raises(ValidationError) as caught:
        TaskUpdateInput.model_validate({"id": "task_a", "content": None, "status": None, "activeForm": None})
    assert [(error["loc"], error["msg"]) for error in caught.value.errors()] == [
        ((), "Provide at least one field to update.")
    ]


def test_update_without_id_is_rejected() -> None:
    with pytest.raises(ValidationError) as caught:
        TaskUpdateInput.model_validate({"status": "completed"})
    assert [error["loc"] for error in caught.value.errors()] == [("id",)]


def test_update_with_one_field_is_accepted() -> None:
    data = TaskUpdateInput.model_validate({"id": "task_a", "activeForm": "Testing"})
    assert data.changes() == {"active_form": "Testing"}


# --- ids ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("Write tests", "task_write_tests"),
        ("Fix auth-bug!", "task_fix_auth_bug"),
        ("日本", "task_item"),
        ("  --Déjà vu 42--  ", "task_d_j_vu_42"),
    ],
)
def test_generated_ids(content: str, expected: str) -> None:
    assert ids(assign_task_ids([task_input(content)], [])) == [expected]


def test_slug_is_cut_at_48_characters_without_trailing_underscore() -> None:
    assert slugify("a" * 60) == "a" * 48
    # The 48th character would be "_": it is cut, then stripped.
    assert slugify("a" * 47 + " bcd") == "a" * 47
    assert len(slugify("word " * 20)) <= 48
    assert not slugify("word " * 20).endswith("_")


def test_explicit_ids_are_kept() -> None:
    assigned = assign_task_ids([task_input("Write tests", task_id="custom")], [item("old", "Write tests")])
    assert ids(assigned) == ["custom"]


def test_duplicate_explicit_id_gets_a_generated_fallback() -> None:
    assigned = assign_task_ids([task_input("First", task_id="dup"), task_input("Second", task_id="dup")], [])
    assert ids(assigned) == ["dup", "task_second"]


def test_same_content_gets_numbered_ids() -> None:
    assigned = assign_task_ids([task_input("Run it"), task_input("Run it"), task_input("Run it")], [])
    assert ids(assigned) == ["task_run_it", "task_run_it_2", "task_run_it_3"]


def test_occurrence_number_counts_tasks_with_explicit_ids() -> None:
    assigned = assign_task_ids([task_input("Run it", task_id="mine"), task_input("Run it")], [])
    assert ids(assigned) == ["mine", "task_run_it_2"]


def test_numbered_id_gets_its_own_uniqueness_suffix() -> None:
    tasks = [task_input("Run it"), task_input("Run it"), task_input("Other", task_id="task_run_it_2")]
    assert ids(assign_task_ids(tasks, [])) == ["task_run_it", "task_run_it_2_2", "task_run_it_2"]


def test_generated_id_avoids_explicit_ids_with_suffix() -> None:
    assigned = assign_task_ids([task_input("Write tests"), task_input("Other", task_id="task_write_tests")], [])
    assert ids(assigned) == ["task_write_tests_2", "task_write_tests"]


def test_generated_id_avoids_reserved_previous_ids() -> None:
    previous = [item("task_build", "Ship it")]
    assigned = assign_task_ids([task_input("Build"), task_input("Ship it")], previous)
    assert ids(assigned) == ["task_build_2", "task_build"]


def test_suffixes_continue_until_free() -> None:
    tasks = [task_input("A", task_id="task_x"), task_input("B", task_id="task_x_2"), task_input("x")]
    assert ids(assign_task_ids(tasks, [])) == ["task_x", "task_x_2", "task_x_3"]


def test_unambiguous_previous_id_is_reused() -> None:
    previous = [item("task_1", "Write tests", "completed"), item("task_2", "Fix bug")]
    assigned = assign_task_ids([task_input("Fix bug", "in_progress"), task_input("New thing")], previous)
    assert ids(assigned) == ["task_2", "task_new_thing"]
    assert assigned[0].status == "in_progress"


def test_no_reuse_when_two_previous_tasks_match() -> None:
    previous = [item("p1", "Fix bug"), item("p2", "Fix bug")]
    assert ids(assign_task_ids([task_input("Fix bug")], previous)) == ["task_fix_bug"]


def test_no_reuse_when_content_repeats_among_idless_tasks() -> None:
    previous = [item("p1", "Fix bug")]
    assert ids(assign_task_ids([task_input("Fix bug"), task_input("Fix bug")], previous)) == [
        "task_fix_bug",
        "task_fix_bug_2",
    ]


def test_no_reuse_when_previous_id_is_claimed_explicitly() -> None:
    previous = [item("p1", "Fix bug")]
    tasks = [task_input("Something else", task_id="p1"), task_input("Fix bug")]
    assert ids(assign_task_ids(tasks, previous)) == ["p1", "task_fix_bug"]


def test_no_reuse_when_a_later_task_claims_the_previous_id() -> None:
    previous = [item("p1", "Fix bug")]
    tasks = [task_input("Fix bug"), task_input("Something else", task_id="p1")]
    assert ids(assign_task_ids(tasks, previous)) == ["task_fix_bug", "p1"]


def test_reuse_ignores_tasks_with_explicit_ids_when_counting() -> None:
    previous = [item("p1", "Fix bug")]
    tasks = [task_input("Fix bug", task_id="mine"), task_input("Fix bug")]
    assert ids(assign_task_ids(tasks, previous)) == ["mine", "p1"]


def test_previous_id_is_not_reused_twice() -> None:
    # A corrupt previous list with a repeated id must still give unique ids.
    previous = [item("p", "One"), item("p", "Two")]
    assert ids(assign_task_ids([task_input("One"), task_input("Two")], previous)) == ["p", "task_two"]


def test_reuse_requires_identical_content() -> None:
    assert ids(assign_task_ids([task_input("fix bug")], [item("p1", "Fix bug")])) == ["task_fix_bug"]


# --- task_write ----------------------------------------------------------------------------------------------------------


def test_write_replaces_the_list() -> None:
    current = [item("old", "Old")]
    data = TaskWriteInput(tasks=[task_input("Write tests", "in_progress"), task_input("Ship", "pending")])
    mutation = write_tasks(current, data)
    expected = [item("task_write_tests", "Write tests", "in_progress"), item("task_ship", "Ship")]
    assert mutation.tasks == expected
    assert mutation.result == {
        "content": "Tasks updated: [0/2 completed]\n"
        "Currently: Doing Write tests (task_write_tests)\n"
        "Task IDs:\n"
        "- task_write_tests: Write tests (in_progress)\n"
        "- task_ship: Ship (pending)",
        "tasks": wire(*expected),
        "isError": False,
    }


def test_write_with_two_in_progress_persists_nothing() -> None:
    current = [item("a", "A", "in_progress")]
    data = TaskWriteInput(tasks=[task_input("X", "in_progress"), task_input("Y", "in_progress")])
    mutation = write_tasks(current, data)
    assert mutation.tasks is None
    assert mutation.result == {
        "content": "Only one task can be in_progress at a time.",
        "tasks": wire(*current),
        "isError": True,
    }


def test_write_of_an_empty_list_persists_it() -> None:
    mutation = write_tasks([item("a", "A")], TaskWriteInput(tasks=[]))
    assert mutation.tasks == []
    assert mutation.result == {"content": "Tasks updated: [0/0 completed]", "tasks": [], "isError": False}


# --- task_update / task_complete -------------------------------------------------------------------------------------


def test_update_patches_only_given_fields() -> None:
    current = [item("a", "A"), item("b", "B", active_form="Doing B")]
    mutation = update_task(current, TaskUpdateInput(id="b", content="B2"))
    assert mutation.tasks == [item("a", "A"), item("b", "B2", active_form="Doing B")]
    assert mutation.result["isError"] is False
    assert (
        mutation.result["content"] == "Tasks updated: [0/2 completed]\nTask IDs:\n- a: A (pending)\n- b: B2 (pending)"
    )


def test_update_demotes_the_other_in_progress_task() -> None:
    current = [item("a", "A", "in_progress"), item("b", "B"), item("c", "C", "completed")]
    mutation = update_task(current, TaskUpdateInput(id="b", status="in_progress"))
    assert mutation.tasks is not None
    assert [task.status for task in mutation.tasks] == ["pending", "in_progress", "completed"]
    assert "Currently: Doing B (b)" in mutation.result["content"]


def test_demote_extra_in_progress_without_preference_keeps_the_last() -> None:
    tasks = [item("a", "A", "in_progress"), item("b", "B", "in_progress"), item("c", "C", "in_progress")]
    assert [t.status for t in demote_extra_in_progress(tasks)] == ["pending", "pending", "in_progress"]
    assert [t.status for t in demote_extra_in_progress(tasks, 0)] == ["in_progress", "pending", "pending"]
    assert demote_extra_in_progress(tasks[:1]) == tasks[:1]


def test_update_unknown_id_on_empty_list() -> None:
    mutation = update_task([], TaskUpdateInput(id="nope", status="completed"))
    assert mutation.tasks is None
    assert mutation.result == {
        "content": "Task not found: nope\n\nNo tasks are currently tracked.",
        "tasks": [],
        "isError": True,
    }


def test_update_unknown_id_lists_available_tasks() -> None:
    current = [item("a", "Alpha", "completed"), item("b", "Beta", "in_progress")]
    mutation = update_task(current, TaskUpdateInput(id="zzz", content="New"))
    assert mutation.tasks is None
    assert mutation.result == {
        "content": "Task not found: zzz\n\nAvailable task IDs:\n- a: Alpha (completed)\n- b: Beta (in_progress)",
        "tasks": wire(*current),
        "isError": True,
    }


def test_complete_marks_one_task_and_keeps_order() -> None:
    current = [item("a", "A", "in_progress"), item("b", "B")]
    mutation = complete_task(current, TaskIdInput(id="a"))
    assert mutation.tasks == [item("a", "A", "completed"), item("b", "B")]
    assert (
        mutation.result["content"] == "Tasks updated: [1/2 completed]\nTask IDs:\n- a: A (completed)\n- b: B (pending)"
    )


def test_complete_unknown_id() -> None:
    mutation = complete_task([item("a", "A")], TaskIdInput(id="b"))
    assert mutation.tasks is None
    assert mutation.result["content"] == "Task not found: b\n\nAvailable task IDs:\n- a: A (pending)"
    assert mutation.result["isError"] is True


# --- text formats ------------------------------------------------------------------------------------------------------


def test_format_task_list_result_with_and_without_in_progress() -> None:
    assert format_task_list_result([]) == "Tasks updated: [0/0 completed]"
    done = [item("a", "A", "completed"), item("b", "B")]
    assert (
        format_task_list_result(done)
        == "Tasks updated: [1/2 completed]\nTask IDs:\n- a: A (completed)\n- b: B (pending)"
    )
    working = [item("a", "A", "completed"), item("b", "B", "in_progress", "Building B")]
    assert format_task_list_result(working) == (
        "Tasks updated: [1/2 completed]\nCurrently: Building B (b)\nTask IDs:\n- a: A (completed)\n- b: B (in_progress)"
    )


def test_check_without_tasks() -> None:
    assert check_tasks([]) == {
        "content": "No tasks found. Consider using task_write to create a task list for complex work.",
        "tasks": [],
        "summary": EMPTY_SUMMARY,
        "incompleteTasks": [],
        "isError": False,
    }


def test_check_all_completed() -> None:
    tasks = [item("a", "A", "completed"), item("b", "B", "completed")]
    result = check_tasks(tasks)
    assert result["content"] == (
        "Task Status: [2/2 completed]\n- Completed: 2\n- In Progress: 0\n- Pending: 0\n\nAll tasks completed: YES"
    )
    assert result["summary"] == {
        "total": 2,
        "completed": 2,
        "inProgress": 0,
        "pending": 0,
        "incomplete": 0,
        "hasTasks": True,
        "allCompleted": True,
    }
    assert result["incompleteTasks"] == []
    assert result["tasks"] == wire(*tasks)
    assert result["isError"] is False


def test_check_incomplete_lists_in_progress_first() -> None:
    tasks = [
        item("p1", "Pend one"),
        item("c", "Done", "completed"),
        item("w", "Work", "in_progress"),
        item("p2", "Pend two"),
    ]
    result = check_tasks(tasks)
    assert result["content"] == (
        "Task Status: [1/4 completed]\n"
        "- Completed: 1\n"
        "- In Progress: 1\n"
        "- Pending: 2\n"
        "\n"
        "All tasks completed: NO\n"
        "\n"
        "Incomplete tasks:\n"
        "\n"
        "In Progress:\n"
        "- w: Work\n"
        "\n"
        "Pending:\n"
        "- p1: Pend one\n"
        "- p2: Pend two\n"
        "\n"
        "Continue working on these tasks before ending."
    )
    assert result["incompleteTasks"] == wire(tasks[2], tasks[0], tasks[3])
    assert result["summary"]["incomplete"] == 3
    assert result["summary"]["allCompleted"] is False


def test_check_incomplete_without_in_progress_section() -> None:
    result = check_tasks([item("p", "Pend")])
    assert result["content"].endswith(
        "All tasks completed: NO\n\nIncomplete tasks:\n\nPending:\n- p: Pend\n\nContinue working on these tasks before ending."
    )


def test_no_memory_results() -> None:
    for tool in ("task_write", "task_update", "task_complete"):
        assert no_memory_result(tool) == {"content": NO_MEMORY, "tasks": [], "isError": True}
    assert no_memory_result("task_check") == {
        "content": NO_MEMORY,
        "tasks": [],
        "summary": EMPTY_SUMMARY,
        "incompleteTasks": [],
        "isError": True,
    }


def test_failure_results() -> None:
    assert failure_result("task_write", "boom") == {
        "content": "Failed to update tasks: boom",
        "tasks": [],
        "isError": True,
    }
    assert failure_result("task_update", None)["content"] == "Failed to update task: Unknown error"
    assert failure_result("task_complete", "x")["content"] == "Failed to complete task: x"
    assert failure_result("task_check", "y")["summary"] == EMPTY_SUMMARY


# --- state signals -----------------------------------------------------------------------------------------------------


def test_no_signal_when_both_lists_are_empty() -> None:
    signal, state = compute_task_signal(None, [])
    assert signal is None
    assert state == TaskSignalState()


def test_first_signal_is_a_snapshot() -> None:
    tasks = [item("a", "Task A", "in_progress"), item("b", "Task B")]
    signal, state = compute_task_signal(None, tasks)
    assert signal is not None
    assert signal.mode == "snapshot"
    assert signal.render() == (
        '<current-task-list count="2">\n  ▸ [in_progress] {id: a} Task A\n  ○ [pending] {id: b} Task B\n</current-task-list>'
    )
    assert signal.cache_key == task_list_fingerprint(tasks)
    assert state == TaskSignalState(snapshot_tasks=tasks, deltas_since_snapshot=0, last_tasks=tasks)


def test_completed_icon_in_snapshot() -> None:
    signal, _ = compute_task_signal(None, [item("c", "Done", "completed")])
    assert signal is not None
    assert signal.contents == "\n  ✓ [completed] {id: c} Done\n"


def test_no_signal_when_unchanged() -> None:
    tasks = [item("a", "A")]
    _, state = compute_task_signal(None, tasks)
    signal, next_state = compute_task_signal(state, [item("a", "A")])
    assert signal is None
    assert next_state == state


def test_delta_for_add_update_and_remove() -> None:
    _, state = compute_task_signal(None, [item("a", "A"), item("b", "B"), item("c", "C")])
    current = [item("a", "A", "completed"), item("c", "C"), item("d", "D")]
    signal, next_state = compute_task_signal(state, current)
    assert signal is not None
    assert signal.mode == "delta"
    assert signal.render() == (
        '<task-list-update changes="3">\n'
        "  ✓ {id: a} [completed] A\n"
        "  + {id: d} [pending] D\n"
        "  \u2212 removed {id: b}\n"
        "</task-list-update>"
    )
    assert next_state.deltas_since_snapshot == 1
    assert next_state.last_tasks == current
    assert next_state.snapshot_tasks == state.snapshot_tasks


def test_update_icon_follows_the_new_status() -> None:
    _, state = compute_task_signal(None, [item("a", "A")])
    signal, _ = compute_task_signal(state, [item("a", "A", "in_progress")])
    assert signal is not None
    assert signal.contents == "\n  ▸ {id: a} [in_progress] A\n"
    assert signal.attributes == {"changes": 1}


def test_activeform_change_is_an_update() -> None:
    _, state = compute_task_signal(None, [item("a", "A", active_form="Doing A")])
    signal, _ = compute_task_signal(state, [item("a", "A", active_form="Really doing A")])
    assert signal is not None
    assert signal.mode == "delta"


def test_resnapshot_after_ten_deltas() -> None:
    signal, state = compute_task_signal(None, [item("t0", "Task 0")])
    tasks = [item("t0", "Task 0")]
    for n in range(1, 11):
        tasks = [*tasks, item(f"t{n}", f"Task {n}")]
        signal, state = compute_task_signal(state, tasks)
        assert signal is not None
        assert signal.mode == "delta"
        assert state.deltas_since_snapshot == n
    signal, state = compute_task_signal(state, [*tasks, item("t11", "Task 11")])
    assert signal is not None
    assert signal.mode == "snapshot"
    assert signal.attributes == {"count": 12}
    assert state.deltas_since_snapshot == 0


def test_resnapshot_of_an_emptied_list_is_self_closing() -> None:
    tasks = [item("a", "A")]
    state = TaskSignalState(snapshot_tasks=tasks, deltas_since_snapshot=10, last_tasks=tasks)
    signal, next_state = compute_task_signal(state, [])
    assert signal is not None
    assert signal.render() == '<current-task-list count="0" />'
    assert signal.cache_key == "tasks:"
    assert next_state == TaskSignalState(snapshot_tasks=[], last_tasks=[])


def test_emptying_the_list_within_the_delta_budget_is_a_delta() -> None:
    _, state = compute_task_signal(None, [item("a", "A")])
    signal, _ = compute_task_signal(state, [])
    assert signal is not None
    assert signal.render() == '<task-list-update changes="1">\n  \u2212 removed {id: a}\n</task-list-update>'


def test_cache_key_is_length_prefixed() -> None:
    assert task_list_fingerprint([item("a", "Ab", "pending", "Doing"), item("bc", "C", "completed", "X")]) == (
        "tasks:1:a2:Ab7:pending5:Doing|2:bc1:C9:completed1:X"
    )


def test_render_escapes_attributes_and_self_closes_empty_contents() -> None:
    signal = TaskSignal(mode="snapshot", tag_name="t", contents="", attributes={"k": 'a"<'}, cache_key="")
    assert signal.render() == '<t k="a&quot;&lt;" />'
