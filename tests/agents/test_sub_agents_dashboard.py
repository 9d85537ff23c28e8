"""Sub-agents in the dashboard, in a real headless Chromium against a real API server, worker and Temporal dev server.

The example app's ``desk`` hands "research ..." to its ``researcher`` sub-agent (the tool ``agent-researcher``):
the run page shows the child's conversation nested under that call as it streams, links to the child's own page
(which links back), and the timeline shows the call as one bar; a question asked inside the child appears once in
the inbox, on the top run, and answering it there finishes both runs.
"""

from __future__ import annotations

from typing import Any

import httpx
from playwright.async_api import expect

from tempo_agents import App
from tests.conftest import AppFactory, running_worker
from tests.support.browser import TOKENS, chromium, dashboard_server, desk_agent, shoot, signed_in_page
from tests.support.polling import until


async def start(app: App, message: str) -> str:
    stream = await app.agent("desk").stream(message)
    return stream.run_id


async def test_a_sub_agents_text_and_tool_result_are_nested_under_its_call(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        run_id = await start(app, "research tides")
        _, page = await signed_in_page(browser, server, None, path=f"/#/runs/{run_id}")
        call = page.locator(".conversation .tool-call", has=page.locator("summary > code", has_text="agent-researcher"))
        await expect(call).to_have_count(1, timeout=10_000)
        nested = call.locator(".child-run .conversation.nested")
        await expect(nested.locator(".msg .text").first).to_have_text(
            "Looking up tides in the records.", timeout=15_000
        )
        lookup = nested.locator(".tool-call", has=page.locator("summary > code", has_text="lookup"))
        await expect(lookup.locator(".result")).to_contain_text("city archive", timeout=15_000)
        await expect(nested).to_contain_text("On tides, I found the city archive and the annual report.")
        await expect(call.locator(":scope > summary .tool-state")).to_have_text("done", timeout=15_000)
        final = "The researcher reports: On tides, I found the city archive and the annual report. That settles it."
        await expect(page.locator(".conversation").first.locator(":scope > .msg .text").last).to_have_text(
            final, timeout=15_000
        )
        await expect(page.locator(".run[data-status=completed]")).to_be_visible(timeout=10_000)
        child_bars = page.locator(".timeline .bar.child")
        await expect(child_bars).to_have_count(1, timeout=10_000)  # the call and its relays: one bar
        await expect(child_bars).to_have_text("agent-researcher")
        await expect(page.locator(".timeline .bar.activity")).to_have_count(0)

        await shoot(page, "run-sub-agent")
        child_id = await call.locator(".child-run").get_attribute("data-child-run-id")
        assert child_id and child_id.startswith(f"{run_id}-"), child_id
        await call.get_by_role("link", name="Open child run").click()
        await expect(page).to_have_url(f"{server.url}/#/runs/{child_id}")
        await expect(page.locator("#run-title")).to_contain_text(child_id)
        await expect(page.locator(".facts")).to_contain_text("researcher")
        await expect(page.locator(".conversation")).to_contain_text("On tides, I found the city archive")
        await expect(page.locator(".run[data-status=completed]")).to_be_visible(timeout=10_000)
        await page.locator(".parent-run").get_by_role("link", name=run_id).click()  # and back to the parent
        await expect(page.locator("#run-title")).to_contain_text(run_id)
        await expect(page.locator(".parent-run")).to_be_hidden()


async def test_a_question_inside_a_sub_agent_is_answered_once_from_the_inbox(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app, tokens=TOKENS) as server, chromium() as browser:
        _, inbox = await signed_in_page(browser, server, "tok-alice")
        await expect(inbox.get_by_text("Nothing is waiting for you.")).to_be_visible()
        run_id = await start(app, "research tides and ask")
        card = inbox.locator(f'article[data-run-id="{run_id}"]')
        await expect(card).to_be_visible(timeout=15_000)  # live, on the top run
        await expect(card.locator("code.tool")).to_have_text("agent-researcher")
        await expect(card.get_by_text("Which source should I trust?")).to_be_visible()
        await expect(inbox.get_by_text("1 waiting run")).to_be_visible()
        await expect(inbox.locator("article.item")).to_have_count(1)  # once: not again on the child run

        _, follower = await signed_in_page(browser, server, "tok-alice", path=f"/#/runs/{run_id}")
        call = follower.locator(
            ".conversation .tool-call", has=follower.locator("summary > code", has_text="agent-researcher")
        )
        await expect(call.locator(":scope > summary .tool-state")).to_have_text("waiting", timeout=10_000)
        nested = call.locator(".child-run .conversation.nested")
        await expect(nested).to_contain_text("Which source should I trust?")  # the child's own suspension
        child_id = await call.locator(".child-run").get_attribute("data-child-run-id")
        assert child_id == f"{run_id}-" + (await card.get_attribute("data-tool-call-id") or "")
        _, child_page = await signed_in_page(browser, server, "tok-alice", path=f"/#/runs/{child_id}")
        await expect(child_page.locator(".parent-run")).to_contain_text(f"Child run of {run_id}")
        waiting_here = child_page.locator(".pending .item")
        await expect(waiting_here).to_contain_text("Answered on the parent run.", timeout=10_000)
        await expect(waiting_here.locator("form")).to_have_count(0)  # answered once, through the parent
        await follower.evaluate(
            "window.__painted = []; addEventListener('tempo:chunk-painted', e => "
            "window.__painted.push([e.detail.chunk.type, e.detail.at]))"
        )

        await card.get_by_role("button", name="Archive").click()  # one choice: a button
        await expect(card).to_be_hidden(timeout=5_000)
        await expect(inbox.get_by_text("Nothing is waiting for you.")).to_be_visible()

        await expect(nested).to_contain_text("I will trust the archive.", timeout=15_000)
        await expect(nested).to_contain_text("On tides, I found the city archive and the annual report.")
        conversation = follower.locator(".conversation").first
        last_text = conversation.locator(":scope > .msg .text").last
        final = "The researcher reports: On tides, I found the city archive and the annual report. That settles it."
        await expect(last_text).to_have_text(final, timeout=15_000)
        await expect(follower.locator(".run[data-status=completed]")).to_be_visible(timeout=10_000)
        await expect(call.locator(":scope > summary .tool-state")).to_have_text("done")
        painted: list[list[Any]] = await follower.evaluate("window.__painted")
        text_frames = {at for kind, at in painted if kind == "text-delta"}
        assert len(text_frames) >= 3, f"the final text arrived in {len(text_frames)} paints, not streamed"
        result = await app.attach(run_id, follow="run").result()
        assert result.text.endswith(final), result.text

        await follower.goto(f"{server.url}/#/runs/{child_id}")
        await expect(follower.locator(".run[data-status=completed]")).to_be_visible(timeout=10_000)
        await expect(follower.locator(".parent-run")).to_contain_text(run_id)


async def test_an_approval_inside_a_sub_agent_shows_the_childs_tool_and_arguments(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app, tokens=TOKENS) as server, chromium() as browser:
        run_id = await start(app, "research tides and clean up")
        _, inbox = await signed_in_page(browser, server, "tok-bob")
        card = inbox.locator(f'article[data-run-id="{run_id}"]')
        await expect(card.locator("code.tool")).to_have_text("agent-researcher", timeout=15_000)
        await expect(card.locator("form p").first).to_have_text(
            "Run delete_file (in agent-researcher) with these arguments?"
        )
        await expect(card.get_by_label("Arguments")).to_contain_text('"path": "drafts/tides.md"')
        await card.get_by_role("button", name="Approve").click()
        await expect(card).to_be_hidden(timeout=5_000)
        result = await app.attach(run_id, follow="run").result()
        assert result.text.endswith("The researcher reports: I deleted drafts/tides.md. That settles it."), result.text

        await inbox.goto(f"{server.url}/#/runs/{run_id}")
        nested = inbox.locator(".child-run .conversation.nested")
        await expect(nested.locator(".tool-call .result")).to_contain_text("drafts/tides.md", timeout=10_000)
        await expect(inbox.locator(".run[data-status=completed]")).to_be_visible(timeout=10_000)


async def test_the_dashboard_routes_name_the_child_run_and_its_parent(make_app: AppFactory) -> None:
    app = make_app([desk_agent()])
    async with running_worker(app), dashboard_server(app) as server:
        run_id = await start(app, "research tides and ask")
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:

            async def waiting() -> list[dict[str, Any]]:
                items: list[dict[str, Any]] = (await http.get("/api/inbox")).json()["items"]
                return items

            [question] = await until(waiting)
            assert question["runId"] == run_id and question["toolName"] == "agent-researcher"
            assert question["kind"] == "question"  # rendered as the child's ask_user
            assert question["suspendPayload"]["question"] == "Which source should I trust?"
            child_id = f"{run_id}-{question['toolCallId']}"
            child = (await http.get(f"/api/runs/{child_id}")).json()
            assert child["parentRunId"] == run_id and child["parentToolCallId"] == question["toolCallId"]
            assert "parentRunId" not in (await http.get(f"/api/runs/{run_id}")).json()

            body = {"runId": run_id, "toolCallId": question["toolCallId"], "resumeData": "Press"}
            assert (await http.post("/api/inbox/answer", json=body)).status_code == 200
            result = await app.attach(run_id, follow="run").result()
            assert result.text.endswith("That settles it.")

            async def closed_timeline() -> dict[str, Any] | None:
                timeline: dict[str, Any] = (await http.get(f"/api/runs/{run_id}/timeline")).json()
                return timeline if timeline["endedAt"] and all(b["end"] for b in timeline["bars"]) else None

            timeline = await until(closed_timeline)
            [bar] = [b for b in timeline["bars"] if b["kind"] == "child"]
            assert bar["label"] == "agent-researcher" and bar["childRunId"] == child_id
            assert bar["outcome"] == "completed"
            assert [b["kind"] for b in timeline["bars"]] == ["model", "child", "model"]  # relays folded in
            [wait] = timeline["waits"]  # the wait for the answer, inside the child call's bar
            assert bar["start"] < wait["start"] < wait["end"] < bar["end"]
