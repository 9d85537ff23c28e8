"""Display and transcript projections (reference §1.9)."""

from __future__ import annotations

from typing import Any

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.tools.transform import REDACTED, TransformContext
from tests.conftest import AppFactory, running_worker

SECRET_CALL = {"user": "dero", "api_key": "sk-123"}


def hide_key(ctx: TransformContext) -> Any:
    return {**ctx.input, "api_key": "***"}


def model_calling(name: str, args: dict[str, Any], *, final: str = "ok") -> ScriptedModel:
    return ScriptedModel(
        lambda r: (
            ScriptedResponse(tool_calls=[ScriptedToolCall(name, args)]) if r.step == 0 else ScriptedResponse(text=final)
        )
    )


async def test_display_and_transcript_projections(make_app: AppFactory) -> None:
    received: list[Any] = []

    def execute(data: dict[str, Any]) -> dict[str, Any]:
        received.append(data)
        return {"profile": "x" * 50, "token": "t-1"}

    tool = create_tool(
        id="lookup",
        description="Looks up a user",
        execute=execute,
        transform={
            "display": {"input": hide_key, "output": lambda ctx: {"profile": "(50 chars)"}},
            "transcript": {"input": hide_key, "output": lambda ctx: "profile looked up"},
        },
    )
    model = model_calling("lookup", SECRET_CALL)
    memory = {"thread": "t-transform", "resource": "u"}
    app = make_app([Agent(id="proj", model=model, tools={"lookup": tool})])
    async with running_worker(app):
        result = await app.agent("proj").generate("look up dero", memory=memory)
        stored = await app.store.get_thread_messages("t-transform", "u")

    assert received == [SECRET_CALL]  # execute gets the real input
    call = next(c for c in result.chunks if c.type == "tool-call")
    assert call.payload.args == {"user": "dero", "api_key": "***"}  # type: ignore[union-attr]
    assert not [c for c in result.chunks if c.type == "tool-call-delta"]  # raw deltas would reveal the key
    assert [c.type for c in result.chunks].count("tool-call-input-streaming-start") == 1
    assert result.tool_results[0].payload.result == {"profile": "(50 chars)"}
    assert result.tool_results[0].payload.args == {"user": "dero", "api_key": "***"}
    # The model saw the real output in this run ...
    seen = [p.result for m in model.requests[1].messages for p in m.tool_results]
    assert seen == [{"profile": "x" * 50, "token": "t-1"}]
    # ... memory keeps the transcript form for later runs.
    kept_calls = [p for m in stored for p in m["content"] if p["type"] == "tool-call"]
    kept_results = [p for m in stored for p in m["content"] if p["type"] == "tool-result"]
    assert kept_calls[0]["args"] == {"user": "dero", "api_key": "***"}
    assert kept_results[0]["result"] == "profile looked up"


async def test_input_delta_projection_and_a_raising_transform(make_app: AppFactory) -> None:
    def boom(ctx: TransformContext) -> Any:
        raise RuntimeError("projection bug")

    tool = create_tool(
        id="lookup",
        description="Looks up",
        execute=lambda data: {"secret": "s3cr3t"},
        transform={"display": {"input": hide_key, "inputDelta": lambda ctx: "·", "output": boom}},
    )
    app = make_app([Agent(id="boom", model=model_calling("lookup", SECRET_CALL), tools={"lookup": tool})])
    async with running_worker(app):
        result = await app.agent("boom").generate("go")
    deltas = [c.payload.args_text_delta for c in result.chunks if c.type == "tool-call-delta"]  # type: ignore[union-attr]
    assert deltas and set(deltas) == {"·"}
    assert result.tool_results[0].payload.result == REDACTED
    assert "s3cr3t" not in str([c.model_dump() for c in result.chunks])


async def test_agent_policy_applies_and_tool_projections_win(make_app: AppFactory) -> None:
    plain = create_tool(id="plain", description="Plain", execute=lambda data: "plain output")
    own = create_tool(
        id="own",
        description="Own",
        execute=lambda data: "own output",
        transform={"display": {"output": lambda ctx: f"own view of {ctx.output}"}},
    )
    model = ScriptedModel(
        lambda r: (
            ScriptedResponse(tool_calls=[ScriptedToolCall("plain", {}), ScriptedToolCall("own", {})])
            if r.step == 0
            else ScriptedResponse(text="ok")
        )
    )
    agent = Agent(
        id="policy",
        model=model,
        tools={"plain": plain, "own": own},
        transform={"display": {"output": lambda ctx: f"policy view of {ctx.tool_name}"}},
    )
    app = make_app([agent])
    async with running_worker(app):
        result = await app.agent("policy").generate("go")
    shown = {r.payload.tool_name: r.payload.result for r in result.tool_results}
    assert shown == {"plain": "policy view of plain", "own": "own view of own output"}


async def test_suspension_and_approval_payloads_are_projected(make_app: AppFactory) -> None:
    async def ask(data: dict[str, Any], ctx: ToolContext) -> Any:
        assert ctx.suspend is not None
        if ctx.resume_data is None:
            return await ctx.suspend({"question": "ok?", "card": "4111 1111 1111 1111"})
        return "done"

    asker = create_tool(
        id="ask",
        description="Ask",
        execute=ask,
        transform={"display": {"suspend": lambda ctx: {**ctx.suspend_payload, "card": "•••• 1111"}}},
    )
    deleter = create_tool(
        id="delete",
        description="Delete",
        execute=lambda data: "deleted",
        require_approval=True,
        transform={"display": {"approval": lambda ctx: {"path": "(hidden)"}}},
    )
    model = ScriptedModel(
        lambda r: (
            ScriptedResponse(tool_calls=[ScriptedToolCall("ask", {}), ScriptedToolCall("delete", {"path": "/x"})])
            if r.step == 0
            else ScriptedResponse(text="ok")
        )
    )
    app = make_app([Agent(id="waits", model=model, tools={"ask": asker, "delete": deleter})])
    async with running_worker(app):
        first = await app.agent("waits").generate("go")
    suspended = next(c for c in first.chunks if c.type == "tool-call-suspended")
    approval = next(c for c in first.chunks if c.type == "tool-call-approval")
    assert suspended.payload.suspend_payload == {"question": "ok?", "card": "•••• 1111"}  # type: ignore[union-attr]
    assert approval.payload.args == {"path": "(hidden)"}  # type: ignore[union-attr]


async def test_lifecycle_hooks_run_in_order_and_a_raising_hook_does_not_fail_the_call(make_app: AppFactory) -> None:
    from tempo_agents.tools import ToolLifecycleEvent

    seen: list[tuple[str, Any]] = []

    def record(name: str) -> Any:
        def hook(event: ToolLifecycleEvent) -> None:
            value = {"start": None, "delta": event.input_text_delta, "available": event.input, "output": event.output}
            seen.append((name, value[name]))
            if name == "delta":
                raise RuntimeError("a buggy preview hook")

        return hook

    tool = create_tool(
        id="hooked",
        description="Hooked",
        execute=lambda data: {"echo": data["q"]},
        on_input_start=record("start"),
        on_input_delta=record("delta"),
        on_input_available=record("available"),
        on_output=record("output"),
    )
    app = make_app([Agent(id="life", model=model_calling("hooked", {"q": "hello"}), tools={"hooked": tool})])
    async with running_worker(app):
        result = await app.agent("life").generate("go")
    names = [name for name, _ in seen]
    assert names[0] == "start" and names[-2:] == ["available", "output"]
    assert set(names[1:-2]) == {"delta"}
    assert "".join(value for name, value in seen if name == "delta") == '{"q": "hello"}'
    assert seen[-2] == ("available", {"q": "hello"}) and seen[-1] == ("output", {"echo": "hello"})
    assert result.tool_results[0].payload.result == {"echo": "hello"}
