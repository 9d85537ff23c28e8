"""ask_user, submit_plan and agent modes (reference §4.1, §4.2) on a real dev server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall
from tempo_agents.agent.modes import AgentMode
from tempo_agents.errors import ResumeValidationError
from tempo_agents.journal.chunks import DataChunk, ToolCallSuspendedChunk
from tempo_agents.models.model import ModelRequest
from tempo_agents.tools import ask_user_tool, create_submit_plan_tool, submit_plan_tool
from tests.conftest import AppFactory, running_worker

REFERENCE_SUBMIT_PLAN_DESCRIPTION = (
    "Submit a plan you wrote to a markdown file for review. Pass the `path` to that file (e.g. "
    "`.mastracode/plans/add-dark-mode.md`). Write/edit the file first — do not paste the plan contents here. Reuse "
    "the same file across revisions; only create a new file for a genuinely new plan. The user can approve, reject, "
    "or request changes. On approval, the system automatically switches to the default mode so you can implement."
)


def test_ask_user_definition() -> None:
    assert ask_user_tool.id == "ask_user"
    assert ask_user_tool.description == (
        "Ask the user a question and wait for their response. Use this when you need clarification, want to validate "
        "assumptions, or need the user to make a decision between options. Provide options for structured choices "
        "(2-4 options), or omit them for open-ended questions. Use selectionMode to choose whether the user can pick "
        "one option or multiple options."
    )
    schema = ask_user_tool.model_input_schema()
    properties = schema["properties"]
    assert properties["question"]["description"] == "The question to ask the user. Should be clear and specific."
    assert properties["question"]["minLength"] == 1
    assert set(properties) == {"question", "options", "selectionMode"}
    assert schema["required"] == ["question"]


async def test_ask_user_outside_a_run() -> None:
    assert await ask_user_tool.execute(
        {"question": "Which color?", "options": [{"label": "Red"}, {"label": "Blue"}]}
    ) == {
        "content": "[Question for user]: Which color?\nOptions: Red, Blue\nSelection mode: single_select",
        "isError": False,
    }
    assert await ask_user_tool.execute({"question": "Why?"}) == {
        "content": "[Question for user]: Why?",
        "isError": False,
    }
    assert await ask_user_tool.execute({"question": "Pick", "selectionMode": "multi_select"}) == {
        "content": "Failed to ask user: selectionMode requires options.",
        "isError": True,
    }


def ask_model(args: dict[str, Any]) -> ScriptedModel:
    return ScriptedModel(
        lambda r: (
            ScriptedResponse(tool_calls=[ScriptedToolCall("ask_user", args, id="q1")])
            if r.step == 0
            else ScriptedResponse(text="Thanks.")
        )
    )


@pytest.mark.parametrize(
    ("answer", "content"),
    [("Blue", "User answered: Blue"), (["Red", "Green"], "User answered: Red, Green"), ("", "User answered: ")],
)
async def test_ask_user_in_a_run(make_app: AppFactory, answer: Any, content: str) -> None:
    args = {"question": "Which colors?", "options": [{"label": "Red"}, {"label": "Green", "description": "g"}]}
    app = make_app([Agent(id="asker", model=ask_model(args), tools={"ask_user": ask_user_tool})])
    async with running_worker(app):
        first = await app.agent("asker").generate("pick")
        done = await app.agent("asker").resume_generate(answer, run_id=first.run_id)
    (suspended,) = [c for c in first.chunks if isinstance(c, ToolCallSuspendedChunk)]
    assert suspended.payload.tool_name == "ask_user"
    assert suspended.payload.suspend_payload == {
        "question": "Which colors?",
        "options": [{"label": "Red"}, {"label": "Green", "description": "g"}],
        "selectionMode": "single_select",
    }
    assert done.tool_results[0].payload.result == {"content": content, "isError": False}


async def test_ask_user_free_text_payload_and_bad_answer(make_app: AppFactory) -> None:
    app = make_app([Agent(id="asker2", model=ask_model({"question": "Name?"}), tools={"ask_user": ask_user_tool})])
    async with running_worker(app):
        first = await app.agent("asker2").generate("go")
        with pytest.raises(ResumeValidationError):
            await app.agent("asker2").resume_stream(5, run_id=first.run_id)
        done = await app.agent("asker2").resume_generate("Dero", run_id=first.run_id)
    assert first.suspend_payload is not None
    assert first.suspend_payload["suspendPayload"] == {"question": "Name?"}
    assert done.tool_results[0].payload.result == {"content": "User answered: Dero", "isError": False}


def test_submit_plan_definition() -> None:
    assert submit_plan_tool.id == "submit_plan"
    assert create_submit_plan_tool(plans_dir=".mastracode/plans").description == REFERENCE_SUBMIT_PLAN_DESCRIPTION
    assert submit_plan_tool.description == REFERENCE_SUBMIT_PLAN_DESCRIPTION.replace(".mastracode/plans", ".plans")
    path = create_submit_plan_tool(plans_dir=".mastracode/plans").model_input_schema()["properties"]["path"]
    assert path["description"] == "Path to the plan markdown file on disk (e.g. `.mastracode/plans/add-dark-mode.md`)."


async def test_submit_plan_outside_a_run() -> None:
    assert await submit_plan_tool.execute({"path": ".plans/x.md"}) == {
        "content": "[Plan submitted for review]\n\nPath: .plans/x.md",
        "isError": False,
    }


PLAN = "\n# Add dark mode\n\n\n1. Add a theme toggle\n2. Persist the choice\n\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    (root / ".plans" / "nested").mkdir(parents=True)
    (root / ".plans" / "dark-mode.md").write_text(PLAN)
    (root / ".plans" / "notes.txt").write_text("# not a plan")
    (root / ".plans" / "nested" / "deep.md").write_text("# deep")
    (root / "outside.md").write_text("# outside")
    (root / ".plans" / "huge.md").write_text("# Huge\n" + "x" * 300_000)
    monkeypatch.setenv("TEMPO_AGENTS_PROJECT_ROOT", str(root))
    return root


def planner(script: Any) -> Agent:
    return Agent(
        id="planner",
        instructions="You are careful.",
        model=ScriptedModel(script),
        tools={"submit_plan": submit_plan_tool, "ask_user": ask_user_tool},
        modes=[
            AgentMode(
                id="plan", instructions="Plan only.", active_tools=["submit_plan", "ask_user"], transitions_to="build"
            ),
            AgentMode(id="build", instructions="Implement the plan.", active_tools=["ask_user"]),
        ],
    )


def submit(path: str) -> Any:
    def script(request: ModelRequest) -> ScriptedResponse:
        if request.step == 0:
            return ScriptedResponse(tool_calls=[ScriptedToolCall("submit_plan", {"path": path}, id="p1")])
        return ScriptedResponse(text="Working on it.")

    return script


async def test_plan_is_read_on_the_worker_and_approval_switches_mode(make_app: AppFactory, project: Path) -> None:
    agent = planner(submit(".plans/dark-mode.md"))
    app = make_app([agent])
    async with running_worker(app):
        first = await app.agent("planner").generate("add dark mode")
        assert await app.queries(first.run_id).mode() == "plan"
        (project / ".plans" / "dark-mode.md").unlink()  # the reviewer shares no files with the worker
        pending = await app.pending(first.run_id)
        decision = {"action": "approved", **pending[0].suspend_payload}
        done = await app.agent("planner").resume_generate(decision, run_id=first.run_id)
        mode_after = await app.queries(first.run_id).mode()

    assert pending[0].suspend_payload == {
        "path": ".plans/dark-mode.md",
        "title": "Add dark mode",
        "plan": "1. Add a theme toggle\n2. Persist the choice",
    }
    assert done.tool_results[0].payload.result == {
        "content": "Plan approved. Proceed with implementation following the approved plan.",
        "isError": False,
        "submittedPlan": {
            "title": "Add dark mode",
            "path": ".plans/dark-mode.md",
            "plan": "1. Add a theme toggle\n2. Persist the choice",
        },
    }
    mode_chunks = [c for c in done.chunks if isinstance(c, DataChunk) and c.type == "data-mode"]
    assert [c.model_dump(by_alias=True)["data"] for c in mode_chunks] == [{"mode": "build", "previousMode": "plan"}]
    assert mode_after == "build"
    model: Any = agent.model
    first_request, second_request = model.requests
    assert first_request.messages[0].text == "You are careful.\n\nPlan only."
    assert [t.name for t in first_request.tools] == ["submit_plan", "ask_user"]
    assert second_request.messages[0].text == "You are careful.\n\nImplement the plan."
    assert [t.name for t in second_request.tools] == ["ask_user"]


@pytest.mark.parametrize(
    ("decision", "content"),
    [
        (
            {"action": "rejected", "feedback": "Use CSS variables"},
            "Plan was not approved. The user wants revisions.\n\nUser feedback: Use CSS variables\n\n"
            "Please revise the plan based on the feedback and submit again with submit_plan.",
        ),
        (
            {"action": "rejected"},
            "Plan was not approved. The user will send revision instructions in their next message. Stop now and "
            "wait for the user to provide feedback before revising the plan.",
        ),
    ],
)
async def test_rejected_plans_keep_the_mode(
    make_app: AppFactory, project: Path, decision: dict[str, Any], content: str
) -> None:
    app = make_app([planner(submit(".plans/dark-mode.md"))])
    async with running_worker(app):
        first = await app.agent("planner").generate("add dark mode", mode="plan")
        done = await app.agent("planner").resume_generate(decision, run_id=first.run_id)
        mode_after = await app.queries(first.run_id).mode()
    result = done.tool_results[0].payload.result
    assert result["content"] == content and result["isError"] is False
    assert mode_after == "plan"
    assert not [c for c in done.chunks if c.type == "data-mode"]


@pytest.mark.parametrize(
    "path", [".plans/notes.txt", ".plans/nested/deep.md", "outside.md", ".plans/../outside.md", ".plans/missing.md"]
)
async def test_only_markdown_files_directly_in_the_plans_dir_are_read(
    make_app: AppFactory, project: Path, path: str
) -> None:
    app = make_app([planner(submit(path))])
    async with running_worker(app):
        first = await app.agent("planner").generate("plan")
    assert first.suspend_payload is not None
    assert first.suspend_payload["suspendPayload"] == {"path": path}


async def test_oversized_plans_are_refused(make_app: AppFactory, project: Path) -> None:
    app = make_app([planner(submit(".plans/huge.md"))])
    async with running_worker(app):
        result = await app.agent("planner").generate("plan")
    assert result.finish_reason == "stop"
    refused = result.tool_results[0].payload.result
    assert refused["isError"] is True
    assert refused["content"].startswith("Failed to submit plan: .plans/huge.md is ")
    assert refused["content"].endswith(
        "plans larger than 262144 bytes are not submitted. Shorten the plan and submit again."
    )


async def test_unknown_start_mode_is_refused(make_app: AppFactory, project: Path) -> None:
    from tempo_agents.errors import ConfigurationError

    app = make_app([planner(submit("x"))])
    with pytest.raises(ConfigurationError, match='has no mode "ship"'):
        await app.agent("planner").stream("hi", mode="ship")
