"""Steering and interrupting a running run: the messages sent into it, and the request to stop it.

A *steer* is a user message delivered into a run that is already working: the model sees it at the run's next model
step (it rides once in that step's outbox: a transcript entry before the step's assistant message and a
``data-user-message`` chunk naming who sent it), and no new run starts. An *interrupt* stops the run at its next step
boundary, keeping what it did, with finish reason ``interrupted``.

:class:`Steers` is workflow state, pure and deterministic, so it is tested without a server.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from tempo_agents._wire import WireModel
from tempo_agents.journal import constructors
from tempo_agents.journal.outbox import JournalOutbox, JournalRecord, TranscriptRecord
from tempo_agents.models.messages import Message

__all__ = [
    "INTERRUPT",
    "INTERRUPTED",
    "RUN_FINISHED",
    "STEER",
    "STEERING_PATCH",
    "STEER_CHUNK",
    "STEER_POSITION_BASE",
    "InterruptRequest",
    "SteerAccepted",
    "SteerRequest",
    "SteerState",
    "Steers",
    "interrupted_call_message",
    "interrupted_record",
    "steer_record",
]

STEER = "tempo_agents.steer"
"""The name of the steer update (answers where the message goes) and of the steer signal (fire-and-forget)."""

INTERRUPT = "tempo_agents.interrupt"
"""The name of the interrupt signal."""

STEERING_PATCH = "steer-and-interrupt"
"""Patch id: asked only when a steer is delivered or an interrupt ends the run, so histories that never saw one
carry no marker and replay unchanged."""

RUN_FINISHED = "run-finished"
"""Error type of a steer the run cannot take: it finishes (or finished) without another model step."""

INTERRUPTED = "interrupted"
"""The finish reason of an interrupted run."""

STEER_CHUNK = "data-user-message"
"""The journal chunk of a delivered steer."""

STEER_POSITION_BASE = -1_000_000
"""Transcript position of the first steer: a step's steers sort before its assistant message (position 0), in the
order the run received them."""


class SteerRequest(WireModel):
    """The ``tempo_agents.steer`` update and signal: a user message for the run's next model step."""

    message: Message
    sent_by: str | None = None
    """Who sent it (a principal name), shown as ``sentBy`` in its journal chunk."""


class SteerAccepted(WireModel):
    """The steer update's answer: the steer's place among the run's steers and where it went.

    ``delivered``: the model step ``step`` has it in its input. ``kept``: the run waits for a person (or continues as
    new); the model sees it at the run's next model step, after the answer."""

    position: int
    status: Literal["delivered", "kept"]
    step: int | None = None


class InterruptRequest(WireModel):
    """The ``tempo_agents.interrupt`` signal: stop at the next step boundary; ``by_run_id`` names the run (or
    ``""``, a person) that asked."""

    by_run_id: str = ""
    requested_by: str | None = None
    """The principal that asked (the HTTP API's token name), when a person did."""


class Steers:
    """The steers a run received: queued until a model step takes them, then delivered; refused when the run ends
    without another model step. Positions count from 1 across continue-as-new."""

    def __init__(self, carried: SteerState | None = None) -> None:
        self._queued: list[tuple[int, SteerRequest]] = []
        self._delivered: dict[int, int] = {}
        """Position → the step that took it."""
        self._refused: list[tuple[int, SteerRequest]] = []
        self._refused_positions: set[int] = set()
        self._awaited: set[int] = set()
        """Steers whose update waits for the answer: a refusal reaches their senders."""
        self.closed = False
        """The run takes no more model steps: new steers are refused."""
        queued = carried.queued if carried is not None else []
        self._received = (carried.received if carried is not None else 0) - len(queued)
        for request in queued:
            self.receive(request)

    def carried(self) -> SteerState:
        """What continue-as-new carries: the steers still queued and how many were received."""
        return SteerState(queued=self.queued(), received=self._received)

    @property
    def received(self) -> int:
        return self._received

    @property
    def any_queued(self) -> bool:
        return bool(self._queued)

    def queued(self) -> list[SteerRequest]:
        """The steers no step has taken yet (carried across continue-as-new)."""
        return [request for _, request in self._queued]

    def receive(self, request: SteerRequest, *, awaited: bool = False) -> int:
        """Queue a steer; its position. ``awaited``: its sender waits for the update's answer."""
        self._received += 1
        self._queued.append((self._received, request))
        if awaited:
            self._awaited.add(self._received)
        return self._received

    def answered(self, position: int) -> None:
        """The steer's update has answered (``delivered`` or ``kept``): a later refusal must be reported elsewhere."""
        self._awaited.discard(position)

    def deliver(self, run_id: str, step: int, outbox: JournalOutbox) -> None:
        """Give every queued steer to model step ``step``: a transcript entry before its assistant message and the
        ``data-user-message`` chunk, in the order received."""
        for position, request in self._queued:
            outbox.transcript.append(
                TranscriptRecord(
                    step=step,
                    part=f"steer-{position:06d}",
                    position=STEER_POSITION_BASE + position,
                    message=request.message.to_wire(),
                )
            )
            outbox.records.append(steer_record(run_id, step, position, request))
            self._delivered[position] = step
        self._queued = []

    def close(self) -> None:
        """The run ends: refuse what is queued, and whatever comes later."""
        self.closed = True
        for position, request in self._queued:
            self._refused.append((position, request))
            self._refused_positions.add(position)
        self._queued = []

    def refuse_late(self, request: SteerRequest) -> None:
        """A signal that came after the run stopped taking steers."""
        self._received += 1
        self._refused.append((self._received, request))
        self._refused_positions.add(self._received)

    def undelivered(self) -> list[SteerRequest]:
        """The refused steers whose senders were not told by an update's failure (signals, and updates answered
        ``kept`` before the run ended): the run's result lists them."""
        return [request for position, request in self._refused if position not in self._awaited]

    def settled(self, position: int) -> bool:
        return position in self._delivered or position in self._refused_positions

    def delivered_at(self, position: int) -> int | None:
        return self._delivered.get(position)


def steer_record(run_id: str, step: int, position: int, request: SteerRequest) -> JournalRecord:
    """The ``data-user-message`` chunk of a steer delivered into model step ``step``."""
    data: dict[str, Any] = {
        "kind": "steer",
        "message": request.message.to_wire(),
        "text": request.message.text,
        "sentBy": request.sent_by,
        "step": step,
        "position": position,
    }
    chunk = constructors.data_chunk(run_id, STEER_CHUNK, data, source="USER")
    return JournalRecord(chunk=chunk, key=f"steer:{position}")


def interrupted_record(run_id: str, request: InterruptRequest, steps: int) -> JournalRecord:
    """The ``data-interrupted`` chunk written before an interrupted run's ``finish``: who asked, after how many
    model steps."""
    data = {"byRunId": request.by_run_id or None, "requestedBy": request.requested_by, "steps": steps}
    return JournalRecord(chunk=constructors.data_chunk(run_id, "data-interrupted", data), key="interrupted")


def interrupted_call_message(tool_name: str) -> str:
    """The tool error a waiting call ends with when its run is interrupted."""
    return f'The run was interrupted while "{tool_name}" waited for an answer; the call did not run to its end.'


class SteerState(WireModel):
    """What a run carries of its steers across continue-as-new."""

    queued: list[SteerRequest] = Field(default_factory=list)
    received: int = 0
