"""The schedules page (``#/schedules``) in a real headless Chromium: each schedule with its agent, spec, state, next
and recent runs (links to the runs' pages); Pause, Unpause, Run now and Delete (after a confirmation) act on the
server; a scheduled run says so on the runs table and on its page; hidden characters are shown escaped; text keeps
its contrast in light and dark. Writes ``docs/screenshots/schedules-*.png``."""

from __future__ import annotations

from playwright.async_api import expect

from tempo_agents import Agent, ScriptedModel, ScriptedResponse
from tests.conftest import AppFactory, running_worker
from tests.support.browser import chromium, dashboard_server, shoot, signed_in_page
from tests.support.contrast import low_contrast
from tests.support.scheduled_runs import QUIET_EVERY, QUIET_EVERY_SECONDS, view_with_recent_runs


async def test_the_schedules_page_shows_and_acts_on_the_apps_schedules(make_app: AppFactory) -> None:
    reporter = Agent(id="reporter", model=ScriptedModel([ScriptedResponse(text="all quiet")]))
    app = make_app([reporter])
    weekly_id = f"weekly-{app.task_queue[-8:]}"
    weekdays_id = f"weekdays-{app.task_queue[-8:]}"
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        weekly = await app.schedule("reporter", "Anything new?", every=QUIET_EVERY, schedule_id=weekly_id, jitter="2m")
        weekdays = await app.schedule(
            "reporter",
            "Summarise the week",
            cron="0 9 * * 1-5",
            time_zone="Europe/Paris",
            schedule_id=weekdays_id,
            paused=True,
            note="holidays\u202efdp.exe",
        )
        try:
            await weekly.trigger()
            first_run = (await view_with_recent_runs(weekly, 1)).recent_runs[0].run_id
            assert await app.attach(first_run).text == "all quiet"

            _, page = await signed_in_page(browser, server, None, path="/#/schedules")
            cards = page.locator("article.schedule")
            await expect(cards).to_have_count(2, timeout=15_000)
            first = page.locator(f'article.schedule[data-schedule-id="{weekly_id}"]')
            second = page.locator(f'article.schedule[data-schedule-id="{weekdays_id}"]')
            await expect(first.locator(".schedule-head")).to_contain_text("active")
            await expect(first.locator(".schedule-head")).to_contain_text("agent reporter")
            await expect(first.locator(".spec")).to_contain_text("every 7d · jitter 2m · overlap skip · 1 run started")
            await expect(first.locator(".next-runs li")).to_have_count(3)
            await expect(first.locator(".recent-runs li a")).to_have_text([first_run])
            await expect(second.locator(".spec")).to_contain_text("cron 0 9 * * 1-5 (Europe/Paris)")
            await expect(second.locator(".schedule-head")).to_contain_text("paused")
            await expect(second.locator(".next-none")).to_have_text("None while paused.")
            await expect(second.locator(".recent-none")).to_have_text("No runs yet.")
            # The note's right-to-left override is shown escaped, not obeyed.
            await expect(second.locator(".note")).to_have_text("Note: holidays\\u202Efdp.exe")
            await expect(second.locator(".note .invisible")).to_have_count(1)

            for scheme in ("light", "dark"):
                await page.emulate_media(color_scheme=scheme)
                assert await low_contrast(page) == [], scheme
            await page.emulate_media(color_scheme="light")
            await shoot(page, "schedules")
            # On a phone the page is no wider than the window.
            await page.set_viewport_size({"width": 390, "height": 844})
            assert await page.evaluate("document.documentElement.scrollWidth") <= 390
            await page.set_viewport_size({"width": 1280, "height": 860})

            # Pause and unpause act on the server, and the page shows it.
            await first.get_by_role("button", name="Pause").click()
            await expect(first).to_have_attribute("data-state", "paused")
            await expect(page.locator(".done")).to_have_text(f"Paused {weekly_id}.")
            assert (await weekly.describe()).paused
            await expect(first.locator(".next-none")).to_have_text("None while paused.")
            await first.get_by_role("button", name="Unpause").click()
            await expect(first).to_have_attribute("data-state", "active")
            assert not (await weekly.describe()).paused
            # The same button keeps the keyboard focus across the refresh.
            await expect(first.get_by_role("button", name="Pause")).to_be_focused()

            # Run now: a second run, listed newest first.
            await first.get_by_role("button", name="Run now").click()
            view = await view_with_recent_runs(weekly, 2)
            second_run = view.recent_runs[1].run_id
            await page.wait_for_timeout(5_500)  # the page refreshes every 5 s
            await expect(first.locator(".recent-runs li a")).to_have_text([second_run, first_run], timeout=10_000)
            assert await app.attach(second_run).text == "all quiet"

            # Delete asks first: keeping it changes nothing; deleting removes it (its runs stay).
            await second.get_by_role("button", name="Delete…").click()
            dialog = page.locator("dialog.confirm[open]")
            await expect(dialog.locator("h2")).to_have_text("Delete schedule " + weekdays_id + "?")
            await dialog.get_by_role("button", name="Keep schedule").click()
            await expect(cards).to_have_count(2)
            assert weekdays_id in [s.id for s in await app.list_schedules()]
            await second.get_by_role("button", name="Delete…").click()
            await page.locator("dialog.confirm[open]").get_by_role("button", name="Delete schedule").click()
            await expect(cards).to_have_count(1)
            await expect(page.locator(".done")).to_have_text(f"Deleted {weekdays_id}.")
            assert [s.id for s in await app.list_schedules()] == [weekly_id]

            # A scheduled run is shown as such: its page names the schedule, and so does the runs table.
            await first.locator(".recent-runs a", has_text=first_run).click()
            await expect(page.locator(".scheduled-by")).to_have_text(
                f"Started by the schedule {weekly_id}", timeout=15_000
            )
            await page.goto(f"{server.url}/#/runs")
            row = page.locator(f'.runs tr[data-run-id="{first_run}"]')
            await expect(row.locator(".scheduled-by")).to_have_text(f" scheduled by {weekly_id}", timeout=15_000)
            await row.locator(".scheduled-by a").click()
            await expect(page.locator("article.schedule")).to_have_count(1)
        finally:
            for schedule in (weekly, weekdays):
                if schedule.id in [s.id for s in await app.list_schedules()]:
                    await schedule.delete()


async def test_the_edit_form_changes_a_schedule_in_place(make_app: AppFactory) -> None:
    """Edit… opens a form filled from the schedule; saving sends only what changed (the schedule keeps its recent
    runs), a refused value is shown in the form, which stays open; Cancel changes nothing; focus comes back."""
    reporter = Agent(id="reporter", model=ScriptedModel([ScriptedResponse(text="all quiet")]))
    app = make_app([reporter])
    schedule_id = f"daily-{app.task_queue[-8:]}"
    async with running_worker(app), dashboard_server(app) as server, chromium() as browser:
        schedule = await app.schedule(
            "reporter", "Anything new?", every=QUIET_EVERY, schedule_id=schedule_id, max_steps=4
        )
        try:
            await schedule.trigger()
            first_run = (await view_with_recent_runs(schedule, 1)).recent_runs[0].run_id

            _, page = await signed_in_page(browser, server, None, path="/#/schedules")
            card = page.locator(f'article.schedule[data-schedule-id="{schedule_id}"]')
            await expect(card.locator(".schedule-message")).to_have_text("Asks: Anything new?", timeout=15_000)
            edit = card.get_by_role("button", name="Edit…")
            await edit.click()
            dialog = page.locator("dialog.edit-schedule[open]")
            await expect(dialog.locator("h2")).to_have_text(f"Edit schedule {schedule_id}")
            await expect(dialog.get_by_label("Repeats")).to_have_value("every")
            await expect(dialog.get_by_label("Interval or cron expression")).to_have_value(QUIET_EVERY)
            await expect(dialog.get_by_label("Message of each run")).to_have_value("Anything new?")
            await expect(dialog.get_by_label("Model steps per run at most")).to_have_value("4")
            await expect(dialog.get_by_label("When runs overlap")).to_have_value("skip")

            # A value the server refuses: said in the form, which stays open; nothing changes.
            await dialog.get_by_label("Repeats").select_option("every")
            await dialog.get_by_label("Interval or cron expression").fill("soon")
            await dialog.get_by_role("button", name="Save changes").click()
            await expect(dialog.locator(".form-error")).to_have_text(
                '"soon" is not a duration: write it as 30s, 15m, 1h30m or 7d'
            )
            assert (await schedule.describe()).every_seconds == [QUIET_EVERY_SECONDS]

            await dialog.get_by_label("Repeats").select_option("cron")
            await dialog.get_by_label("Interval or cron expression").fill("0 9 * * 1-5")
            await dialog.get_by_label("Time zone (IANA)").fill("Europe/Paris")
            await dialog.get_by_label("When runs overlap").select_option("allow_all")
            await dialog.get_by_label("Message of each run").fill("What changed overnight?")
            await dialog.get_by_label("Model steps per run at most").fill("")
            await dialog.get_by_label("Note").fill("weekday mornings")
            for scheme in ("light", "dark"):
                await page.emulate_media(color_scheme=scheme)
                assert await low_contrast(page) == [], scheme
            await page.emulate_media(color_scheme="light")
            await shoot(page, "schedules-edit", page.locator("dialog.edit-schedule"))
            await dialog.get_by_role("button", name="Save changes").click()
            await expect(page.locator("dialog.edit-schedule[open]")).to_have_count(0)
            await expect(page.locator(".done")).to_have_text(f"Updated {schedule_id}.")
            await expect(card.locator(".spec")).to_contain_text("cron 0 9 * * 1-5 (Europe/Paris) · overlap allow_all")
            await expect(card.locator(".schedule-message")).to_have_text("Asks: What changed overnight?")
            await expect(card.locator(".recent-runs li a")).to_have_text([first_run])
            await expect(edit).to_be_focused()

            view = await schedule.describe()
            assert (view.cron, view.every_seconds, view.time_zone, view.overlap) == (
                ["0 9 * * 1-5"],
                [],
                "Europe/Paris",
                "allow_all",
            )
            assert (view.message, view.note, "maxSteps" in view.options) == (
                "What changed overnight?",
                "weekday mornings",
                False,
            )
            assert [run.run_id for run in view.recent_runs] == [first_run] and view.runs_started == 1

            # Cancel leaves the schedule as it is, and the focus on Edit….
            await edit.click()
            await page.locator("dialog.edit-schedule[open]").get_by_label("Note").fill("changed my mind")
            await page.locator("dialog.edit-schedule[open]").get_by_role("button", name="Cancel").click()
            await expect(page.locator("dialog.edit-schedule[open]")).to_have_count(0)
            await expect(edit).to_be_focused()
            assert (await schedule.describe()).note == "weekday mornings"
        finally:
            await schedule.delete()
