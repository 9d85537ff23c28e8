"""Task tools as workflow state (reference §4.3 to §4.6): no activity, a `tasks` query, thread state, signals."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from tempo_agents import Agent, App, RunQueries, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.journal.chunks import DataChunk
from tempo_agents.models.model import ModelRequest
from tempo_agents.signals import TaskSignalProvider
from tempo_agents.tasks.signals import TASK_STATE_SYSTEM_MESSAGE
from tempo_agents.tools import ask_user_tool
from tests.conftest import AppFactory, closed_history, continue_as_new_server, running_worker

MEMORY = {"thread": "thread-tasks", "resource": "user-1"}

WRITE = {
    "tasks": [
        {"content": "Write tests", "status": "in_progress", "activeForm": "Writing tests"},
        {"content": "Fix auth-bug!", "status": "pending", "activeForm": "Fixing the auth bug"},
    ]
}


def scripted(*steps: list[ScriptedToolCall], final: str = "Done.") -> ScriptedModel:
    return ScriptedModel([*(ScriptedResponse(tool_calls=calls) for calls in steps), ScriptedResponse(text=final)])


def activity_names(history: Any) -> list[str]:
    return [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]


async def test_task_write_changes_workflow_state_without_an_activity(make_app: AppFactory) -> None:
    model = scripted(
        [ScriptedToolCall("task_write", WRITE)], [ScriptedToolCall("task_complete", {"id": "task_write_tests"})]
    )
    app = make_app([Agent(id="tasker", model=model, signals=[TaskSignalProvider()])])
    async with running_worker(app):
        result = await app.agent("tasker").generate("work", memory=MEMORY)
        tasks = await app.queries(result.run_id).tasks()
        history = await closed_history(app.client, result.run_id)
        stored = await app.store.get_thread_state("thread-tasks", "task")

    assert activity_names(history).count("tempo_agents.tool_call") == 0
    first = result.tool_results[0].payload.result
    assert first["isError"] is False
    assert first["content"] == (
        "Tasks updated: [0/2 completed]\n"
        "Currently: Writing tests (task_write_tests)\n"
        "Task IDs:\n"
        "- task_write_tests: Write tests (in_progress)\n"
        "- task_fix_auth_bug: Fix auth-bug! (pending)"
    )
    updates = [c for c in result.chunks if isinstance(c, DataChunk) and c.type == "data-task-updated"]
    assert len(updates) == 2
    assert updates[0].model_dump(by_alias=True)["data"]["threadId"] == "thread-tasks"
    final = [
        {"id": "task_write_tests", "content": "Write tests", "status": "completed", "activeForm": "Writing tests"},
        {
            "id": "task_fix_auth_bug",
            "content": "Fix auth-bug!",
            "status": "pending",
            "activeForm": "Fixing the auth bug",
        },
    ]
    assert updates[1].model_dump(by_alias=True)["data"]["tasks"] == final
    assert [t.id for t in tasks] == ["task_write_tests", "task_fix_auth_bug"]
    assert stored == final
    # The model was shown the list: the system message, a snapshot after the write, a delta after the completion.
    second, third = model.requests[1], model.requests[2]
    assert TASK_STATE_SYSTEM_MESSAGE in second.messages[0].text
    assert second.messages[-1].text == (
        '<current-task-list count="2">\n'
        "  ▸ [in_progress] {id: task_write_tests} Write tests\n"
        "  ○ [pending] {id: task_fix_auth_bug} Fix auth-bug!\n"
        "</current-task-list>"
    )
    assert third.messages[-1].text == (
        second.messages[-1].text
        + '\n<task-list-update changes="1">\n  ✓ {id: task_write_tests} [completed] Write tests\n</task-list-update>'
    )


async def test_without_memory_task_tools_return_the_reference_result(make_app: AppFactory) -> None:
    model = scripted([ScriptedToolCall("task_write", WRITE), ScriptedToolCall("task_check", {})])
    app = make_app([Agent(id="nomem", model=model, signals=[TaskSignalProvider()])])
    async with running_worker(app):
        result = await app.agent("nomem").generate("work")
    message = (
        "Task tools require agent memory (a memory-backed thread). No task was recorded. "
        "Configure the agent with Memory to use the task list."
    )
    write, check = (r.payload.result for r in result.tool_results)
    assert write == {"content": message, "tasks": [], "isError": True}
    assert check["content"] == message and check["summary"]["hasTasks"] is False


async def test_validation_errors_and_the_single_in_progress_rule(make_app: AppFactory) -> None:
    two_active = {
        "tasks": [
            {"content": "A", "status": "in_progress", "activeForm": "Doing A"},
            {"content": "B", "status": "in_progress", "activeForm": "Doing B"},
        ]
    }
    model = scripted([ScriptedToolCall("task_update", {"id": "x"}), ScriptedToolCall("task_write", two_active)])
    app = make_app([Agent(id="rules", model=model, signals=[TaskSignalProvider()])])
    async with running_worker(app):
        result = await app.agent("rules").generate("work", memory={"thread": "t-rules", "resource": "u"})
        tasks = await app.queries(result.run_id).tasks()
    update, write = (r.payload.result for r in result.tool_results)
    assert update["message"].startswith(
        "Tool input validation failed for task_update. Please fix the following errors and try again:\n"
        "- root: Provide at least one field to update.\n\n"
    )
    assert write == {"content": "Only one task can be in_progress at a time.", "tasks": [], "isError": True}
    assert tasks == []


async def test_next_run_of_the_thread_starts_with_the_list_and_a_suspended_run_is_queryable(
    make_app: AppFactory,
) -> None:
    first_model = scripted([ScriptedToolCall("task_write", WRITE)])

    def second_script(request: ModelRequest) -> ScriptedResponse:
        if request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("ask_user", {"question": "Go on?"})])
        return ScriptedResponse(text="ok")

    second_model = ScriptedModel(second_script)
    memory = {"thread": "t-carry", "resource": "u"}
    app = make_app(
        [
            Agent(id="first", model=first_model, signals=[TaskSignalProvider()]),
            Agent(id="second", model=second_model, tools={"ask_user": ask_user_tool}, signals=[TaskSignalProvider()]),
        ]
    )
    async with running_worker(app):
        await app.agent("first").generate("plan", memory=memory)
        waiting = await app.agent("second").generate("continue", memory=memory)
        handle = app.client.get_workflow_handle(waiting.run_id)
        before = -1
        for _ in range(100):  # wait until the suspended run is idle: its last activity completion recorded
            count = len((await handle.fetch_history()).events)
            if count == before:
                break
            before = count
            await asyncio.sleep(0.1)

        tasks = await RunQueries(handle).tasks()
        after = len((await handle.fetch_history()).events)
    assert waiting.finish_reason == "suspended"
    assert [t.id for t in tasks] == ["task_write_tests", "task_fix_auth_bug"]
    assert before == after  # a query adds nothing to history and runs no activity
    assert second_model.requests[0].messages[-1].text.startswith('<current-task-list count="2">')


async def test_agent_tools_win_over_signal_tools(make_app: AppFactory) -> None:
    mine = create_tool(id="my-task-check", description="Mine", execute=lambda data: "agent's own")
    model = scripted([ScriptedToolCall("task_check", {})])
    app = make_app([Agent(id="own", model=model, tools={"task_check": mine}, signals=[TaskSignalProvider()])])
    async with running_worker(app):
        result = await app.agent("own").generate("check", memory=MEMORY)
    assert result.tool_results[0].payload.result == "agent's own"
    assert sorted(t.name for t in model.requests[0].tools) == [
        "task_check",
        "task_complete",
        "task_update",
        "task_write",
    ]


async def test_tasks_survive_continue_as_new(tmp_path: Path) -> None:
    async with continue_as_new_server(20) as env:
        steps: list[list[ScriptedToolCall]] = [[ScriptedToolCall("task_write", WRITE)]]
        steps += [[ScriptedToolCall("task_check", {})] for _ in range(8)]
        model = scripted(*steps)
        app = App(
            agents=[Agent(id="long", model=model, signals=[TaskSignalProvider()])],
            store=f"sqlite:///{tmp_path / 's.db'}",
            task_queue=f"tq-{uuid.uuid4()}",
            client=env.client,
        )
        async with running_worker(app):
            result = await app.agent("long").generate("go", memory=MEMORY, max_steps=12)
            runs = [w async for w in app.client.list_workflows(f"WorkflowId = '{result.run_id}'")]
            tasks = await app.queries(result.run_id).tasks()
        assert len(runs) >= 2
        assert result.finish_reason == "stop"
        assert [t.id for t in tasks] == ["task_write_tests", "task_fix_auth_bug"]
        last_check = result.tool_results[-1].payload.result
        assert last_check["summary"]["total"] == 2
        assert model.requests[-1].messages[-1].text.startswith('<current-task-list count="2">')


async def test_tasks_survive_a_worker_restart(make_app: AppFactory) -> None:
    def script(request: ModelRequest) -> ScriptedResponse:
        if request.step == 0:
            return ScriptedResponse(
                tool_calls=[ScriptedToolCall("task_write", WRITE), ScriptedToolCall("ask_user", {"question": "Go?"})]
            )
        return ScriptedResponse(text="ok")

    def build() -> Agent:
        return Agent(
            id="restart-tasks",
            model=ScriptedModel(script),
            tools={"ask_user": ask_user_tool},
            signals=[TaskSignalProvider()],
        )

    first = make_app([build()])
    async with running_worker(first):
        waiting = await first.agent("restart-tasks").generate("go", memory={"thread": "t-restart", "resource": "u"})
    second = App(agents=[build()], store=first.store.url, task_queue=first.task_queue, client=first.client)
    async with running_worker(second):  # a new worker replays the run to answer the query
        tasks = await second.queries(waiting.run_id).tasks()
        done = await second.agent("restart-tasks").resume_generate("yes", run_id=waiting.run_id)
    assert waiting.finish_reason == "suspended"
    assert [t.id for t in tasks] == ["task_write_tests", "task_fix_auth_bug"]
    assert done.finish_reason == "stop"
