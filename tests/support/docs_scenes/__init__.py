"""The settings the docs' blocks act in, by block (``page#number``): each scene prepares what its page has set up
in prose (a connected App with its worker, a run waiting for an approval, a run still working), lets the block
run unchanged, then checks that it did what the page says."""

from __future__ import annotations

from tests.support.docs_scenes.answer_links import waiting_call
from tests.support.docs_scenes.approvers import a_transfer_to_approve
from tests.support.docs_scenes.budgets import a_tenant_with_a_budget
from tests.support.docs_scenes.edit_then_approve import waiting_payment
from tests.support.docs_scenes.forks import runs_that_happened
from tests.support.docs_scenes.scene import Names, Scene, served_app
from tests.support.docs_scenes.steering import working_run
from tests.support.docs_scenes.threads import busy_thread, payment_waits_on_a_thread

__all__ = ["SCENES", "Names", "Scene", "served_app"]

SCENES: dict[str, Scene] = {
    "how-to/answer-links.md#1": waiting_call,
    "how-to/approvers.md#1": a_transfer_to_approve,
    "how-to/budgets.md#1": a_tenant_with_a_budget,
    "how-to/edit-then-approve.md#2": waiting_payment,
    "how-to/forks.md#1": runs_that_happened,
    "how-to/steering.md#1": working_run,
    "how-to/threads.md#1": busy_thread,
    "how-to/threads.md#2": payment_waits_on_a_thread,
}
"""The scene of each block that acts on something its page set up before it."""
