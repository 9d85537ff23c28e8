"""``Steers`` alone (workflow state, no server): positions in the order received, delivery into one step's outbox,
refusal when the run ends, which refusals the run's result must list, and what continue-as-new carries."""

from __future__ import annotations

from tempo_agents.journal.outbox import JournalOutbox
from tempo_agents.models.messages import Message, TextPart
from tempo_agents.workflows.steering import STEER_POSITION_BASE, SteerRequest, Steers, SteerState


def steer(text: str, who: str | None = None) -> SteerRequest:
    return SteerRequest(message=Message(role="user", content=[TextPart(text=text)]), sent_by=who)


def test_steers_are_delivered_once_into_one_step_in_the_order_received() -> None:
    steers = Steers()
    assert [steers.receive(steer("a"), awaited=True), steers.receive(steer("b", "bob"))] == [1, 2]
    outbox = JournalOutbox()
    steers.deliver("run-1", 3, outbox)
    assert [(r.step, r.part, r.position) for r in outbox.transcript] == [
        (3, "steer-000001", STEER_POSITION_BASE + 1),
        (3, "steer-000002", STEER_POSITION_BASE + 2),
    ]
    assert all(r.position < 0 for r in outbox.transcript)  # before the step's assistant message (position 0)
    chunks = [(r.key, r.chunk["type"], r.chunk["data"]["text"], r.chunk["data"]["sentBy"]) for r in outbox.records]
    assert chunks == [("steer:1", "data-user-message", "a", None), ("steer:2", "data-user-message", "b", "bob")]
    assert (steers.delivered_at(1), steers.delivered_at(2), steers.any_queued) == (3, 3, False)
    later = JournalOutbox()
    steers.deliver("run-1", 4, later)
    assert later.is_empty()  # nothing rides twice


def test_a_closed_run_refuses_steers_and_lists_those_no_update_answered() -> None:
    steers = Steers()
    told = steers.receive(steer("by update"), awaited=True)
    untold = steers.receive(steer("by signal"))
    kept = steers.receive(steer("kept"), awaited=True)
    steers.answered(kept)  # its update said "kept": its sender waits for a step that never comes
    steers.close()
    steers.refuse_late(steer("after the end"))
    assert steers.closed and all(steers.settled(p) for p in (told, untold, kept))
    assert steers.delivered_at(told) is None
    assert [s.message.text for s in steers.undelivered()] == ["by signal", "kept", "after the end"]


def test_continue_as_new_carries_the_queue_and_the_count() -> None:
    steers = Steers()
    steers.receive(steer("delivered"))
    steers.deliver("run-1", 1, JournalOutbox())
    steers.receive(steer("queued"))
    carried = steers.carried()
    assert carried == SteerState(queued=[steer("queued")], received=2)
    after = Steers(SteerState.model_validate(carried.model_dump(mode="json")))
    assert (after.received, [s.message.text for s in after.queued()]) == (2, ["queued"])
    assert after.receive(steer("next")) == 3
