"""A fork's origin read from a real store (SQLite file), without a server: which steps ended, where a retry forks,
which calls a fork may reuse (arguments equal whatever their key order), and two runs aligned by step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tempo_agents.errors import ConfigurationError
from tempo_agents.forks.compare import align, conversation_steps
from tempo_agents.forks.origin import (
    FORK_STEP,
    check_fork_point,
    last_good_step,
    reusable_outcome,
    seed_fork,
    step_states,
)
from tempo_agents.models.messages import Message
from tempo_agents.store.base import INPUT_STEP, TranscriptEntry
from tempo_agents.store.url import open_store
from tempo_agents.workflows.payloads import ForkOrigin


def assistant(text: str, *calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    parts += [{"type": "tool-call", "toolCallId": i, "toolName": n, "args": a} for i, n, a in calls]
    return {"role": "assistant", "content": parts}


def tool(call_id: str, name: str, result: Any, is_error: bool = False) -> dict[str, Any]:
    part = {"type": "tool-result", "toolCallId": call_id, "toolName": name, "result": result, "isError": is_error}
    return {"role": "tool", "content": [part]}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


TRANSCRIPT = [
    TranscriptEntry(INPUT_STEP, "input-0000", 0, user("Book a trip")),
    TranscriptEntry(0, "assistant", 0, assistant("", ("a", "search", {"city": "Rome", "days": 2}))),
    TranscriptEntry(0, "tool-0000", 1, tool("a", "search", {"hotels": 3})),
    TranscriptEntry(1, "assistant", 0, assistant("Checking.", ("b", "price", {"id": 1}), ("c", "book", {"id": 1}))),
    TranscriptEntry(1, "tool-0000", 1, tool("b", "price", "no such hotel", is_error=True)),
    TranscriptEntry(1, "tool-0001", 2, tool("c", "book", {"suspended": True, "runId": "r"})),
]


async def test_steps_fork_points_reuse_and_the_copy(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        await store.put_transcript("origin", TRANSCRIPT)
        entries = await store.get_transcript("origin")
        assert [(s.step, s.calls, s.unended) for s in step_states(entries)] == [(0, 1, ()), (1, 2, ("c",))]
        assert last_good_step(entries) == 1
        check_fork_point("origin", entries, 1)
        with pytest.raises(ConfigurationError, match=r"step 1 of run \"origin\" has calls that did not end \(c\)"):
            check_fork_point("origin", entries, 2)
        with pytest.raises(ConfigurationError, match="has 2 model step"):
            check_fork_point("origin", entries, 3)

        reuse = ForkOrigin(run_id="origin", step=0, reuse="tools")
        found = await reusable_outcome(store, reuse, "search", {"days": 2, "city": "Rome"})  # keys in another order
        assert found is not None and (found.tool_call_id, found.step, found.result) == ("a", 0, {"hotels": 3})
        # An origin that is itself a fork (two steps copied before its own step 0): its steps as users number them.
        of_a_fork = ForkOrigin(run_id="origin", step=3, cut=1, reuse="tools")
        found = await reusable_outcome(store, of_a_fork, "search", {"days": 2, "city": "Rome"})
        assert found is not None and (found.tool_call_id, found.step) == ("a", 2)
        error = await reusable_outcome(store, reuse, "price", {"id": 1})
        assert error is not None and error.is_error and error.result == "no such hotel"
        assert await reusable_outcome(store, reuse, "search", {"city": "Rome", "days": 3}) is None
        assert await reusable_outcome(store, reuse, "book", {"id": 1}) is None  # it waited for a person
        assert await reusable_outcome(store, reuse.model_copy(update={"rerun": ["search"]}), "search",
                                      {"city": "Rome", "days": 2}) is None  # fmt: skip
        assert await reusable_outcome(store, ForkOrigin(run_id="origin", step=0), "price", {"id": 1}) is None

        cheap = Message.model_validate(user("Book a cheap trip"))
        replaced = ForkOrigin(run_id="origin", step=1, replace_input=[cheap])
        await seed_fork(store, "fork", replaced)
        await seed_fork(store, "fork", replaced)  # a retried step writes the same rows
        copied = await store.get_transcript("fork")
        assert [(e.step, e.part) for e in copied] == [(FORK_STEP, f"fork-{n:06d}") for n in range(3)]
        assert [e.message for e in copied] == [user("Book a cheap trip"), TRANSCRIPT[1].message, TRANSCRIPT[2].message]
        assert await store.get_transcript("origin") == entries

        # A fork of that fork (which had no input of its own): the replacement goes before its first step.
        await store.put_transcript("fork", [TranscriptEntry(0, "assistant", 0, assistant("Cheap it is."))])
        await seed_fork(store, "fork2", ForkOrigin(run_id="fork", step=1, replace_input=[cheap]))
        again = [e.message for e in await store.get_transcript("fork2")]
        assert again == [*[e.message for e in copied], user("Book a cheap trip"), assistant("Cheap it is.")]

        steps, first = align(conversation_steps(entries), conversation_steps(copied))
        assert first == 0  # the input differs
        assert [s["same"] for s in steps] == [False, False]
        assert steps[0]["toolCalls"][0]["sameArgs"] and steps[1]["b"] is None
    finally:
        await store.close()
