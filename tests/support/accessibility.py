"""axe-core (through ``axe-playwright-python``, which ships it) run in a page: what a person using a screen reader,
a keyboard or high contrast would stumble on."""

from __future__ import annotations

from typing import Any

from axe_playwright_python.async_playwright import Axe
from playwright.async_api import Page


async def axe_violations(page: Page) -> list[str]:
    """Every axe-core violation in ``page`` as it is now, whatever its impact (minor to critical), one line per
    element: ``rule (impact): selector: what is wrong``."""
    results = await Axe().run(page)
    found: list[str] = []
    violations: list[dict[str, Any]] = results.response["violations"]
    for violation in violations:
        for node in violation["nodes"]:
            target = ", ".join(str(part) for part in node["target"])
            summary = " ".join(str(node.get("failureSummary", "")).split())
            found.append(f"{violation['id']} ({violation['impact']}): {target}: {summary}")
    return found
