"""The run page in a real Chromium: "Send to the run" delivers a message into the running run (the conversation shows
it, with who sent it), Interrupt and Roll back ask for a confirmation first and say what they did."""

from __future__ import annotations

import asyncio
from typing import Any

from playwright.async_api import expect

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.models.model import ModelRequest
from tempo_agents.workflows.agent_run import AgentRunWorkflow
from tests.conftest import AppFactory, running_worker
from tests.support.browser import TOKENS, chromium, dashboard_server, shoot, signed_in_page

MEMORY = {"thread": "t-dash", "resource": "u-1"}


async def test_send_to_the_run_interrupt_and_roll_back_from_the_run_page(make_app: AppFactory) -> None:
    release = {"Oslo": asyncio.Event(), "Bergen": asyncio.Event()}  # by city: a retried call waits on the same one
    reached = asyncio.Event()

    async def slow_lookup(data: dict[str, Any]) -> str:
        reached.set()
        await release[data["city"]].wait()
        return f"{data['city']}: 4 degrees"

    def script(request: ModelRequest) -> ScriptedResponse:
        users = [m.text for m in request.messages if m.role == "user"]
        if request.step == 0:
            city = "Bergen" if users[-1] == "And in Bergen?" else "Oslo"
            return ScriptedResponse(text="Checking.", tool_calls=[ScriptedToolCall("lookup", {"city": city})])
        return ScriptedResponse(text=f"Answered after: {users[-1]}")

    model = ScriptedModel(script)
    lookup = create_tool(id="lookup", description="Weather", execute=slow_lookup)
    app = make_app([Agent(id="weather", model=model, tools={"lookup": lookup})])
    async with running_worker(app), dashboard_server(app, tokens=TOKENS) as server, chromium() as browser:
        stream = await app.stream("weather", "Weather in Oslo?", memory=MEMORY)
        await reached.wait()
        _, page = await signed_in_page(browser, server, "tok-alice", path=f"/#/runs/{stream.run_id}")
        box = page.locator("form.steer")
        await expect(box.get_by_role("heading", name="Send to the run")).to_be_visible(timeout=10_000)
        await box.get_by_label("Send to the run").fill("Use Fahrenheit too")
        await shoot(page, "run-steer", box)
        await box.get_by_role("button", name="Send").click()
        handle = app.client.get_workflow_handle(stream.run_id)
        while await handle.query(AgentRunWorkflow.steers_received) < 1:
            await asyncio.sleep(0.05)
        release["Oslo"].set()
        note = page.locator(".control-note")
        await expect(note).to_have_text("Delivered: the model reads it at step 1.", timeout=15_000)
        steer = page.locator(".conversation .msg.user.steer")
        await expect(steer).to_contain_text("Use Fahrenheit too", timeout=15_000)
        await expect(steer).to_contain_text("sent by alice")
        await expect(page.locator(".conversation")).to_contain_text("Answered after: Use Fahrenheit too")
        await expect(box).to_be_hidden(timeout=10_000)  # the run has finished: nothing more can be sent

        reached.clear()
        second = await app.stream("weather", "And in Bergen?", memory=MEMORY)
        await reached.wait()
        await page.goto(f"{server.url}/#/runs/{second.run_id}")
        await expect(page.locator(".run[data-status=running]")).to_be_visible(timeout=10_000)
        await page.get_by_role("button", name="Interrupt…").click()
        await page.get_by_role("button", name="Keep running").click()  # the confirmation can be refused
        await expect(page.locator(".control-note")).to_be_hidden()
        await page.get_by_role("button", name="Interrupt…").click()
        await page.get_by_role("button", name="Interrupt run", exact=True).click()
        await expect(page.locator(".control-note")).to_contain_text("Interrupt requested")
        release["Bergen"].set()
        await expect(page.locator(".conversation .segment-end.run-interrupted")).to_contain_text(
            "Interrupted by alice", timeout=15_000
        )
        await expect(page.locator(".run[data-status=completed]")).to_be_visible(timeout=10_000)
        assert len(model.requests) == 3  # the interrupted run took no second step

        await page.get_by_role("button", name="Roll back…").click()
        await page.get_by_role("button", name="Keep it").click()
        await page.get_by_role("button", name="Roll back…").click()
        await page.get_by_role("button", name="Roll back run", exact=True).click()
        await expect(page.locator(".control-note")).to_have_text(
            "Rolled back: 3 messages removed from thread t-dash.", timeout=15_000
        )
        await page.reload()  # the journal kept the run's history, and the page says it was rolled back
        await expect(page.locator(".control-note")).to_have_text(
            "Rolled back: 3 messages removed from thread t-dash.", timeout=15_000
        )
        await expect(page.locator(".conversation .segment-end.run-interrupted")).to_have_count(1)
        await expect(page.get_by_role("button", name="Roll back…")).to_be_hidden()
    thread = await app.store.get_thread_messages("t-dash", "u-1")
    texts = [m["content"][0].get("text") for m in thread if m["role"] == "user"]
    assert texts == ["Weather in Oslo?", "Use Fahrenheit too"]
