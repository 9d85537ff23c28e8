"""A whole run with a store keyring, on SQLite and PostgreSQL: its prompt, tool arguments and result, a person's
answer, its thread's messages and its reply are nowhere in the store's bytes (the SQLite file and its WAL, before
and after a checkpoint; every PostgreSQL table read as text), while the API still returns all of them."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tempo_agents import Agent, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.encryption import EncryptionKey, keyring_of
from tempo_agents.store import SQLiteStore
from tests.conftest import STORES, AppFactory, fresh_store_url, running_worker
from tests.support.http_api import served, sse_blocks

PROMPT = "Zephyrine-prompt-4417"
ARGUMENT = "Quillbright-argument-8821"
RESULT = "Marrowfen-result-3390"
ANSWER = "Ostravelle-answer-5512"
REPLY = "Tindlewick-reply-7065"
SECRETS = (PROMPT, ARGUMENT, RESULT, ANSWER, REPLY)
KEYRING = keyring_of([EncryptionKey("tenant-key-1", bytes(range(32)))])


def ledger_tool() -> Any:
    """``ledger``: asks a person for a note on the entry it was given, then returns what it found."""

    async def execute(data: dict[str, Any], ctx: ToolContext) -> Any:
        if ctx.resume_data is None:
            assert ctx.suspend is not None
            return await ctx.suspend({"question": "a note?"})
        return {"found": RESULT, "entry": data["entry"], "note": ctx.resume_data["note"]}

    return create_tool(
        id="ledger",
        description="Looks an entry up in the ledger, after a person's note",
        input_schema={"type": "object", "properties": {"entry": {"type": "string"}}, "required": ["entry"]},
        resume_schema={"type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"]},
        execute=execute,
    )


def bookkeeper() -> Agent:
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("ledger", {"entry": ARGUMENT}, id="look-up")]),
            ScriptedResponse(text=REPLY),
        ]
    )
    return Agent(id="bookkeeper", model=model, tools={"ledger": ledger_tool()})


def sqlite_bytes(path: Path) -> dict[str, bytes]:
    return {file.name: file.read_bytes() for file in (path, path.with_name(path.name + "-wal")) if file.exists()}


def postgres_text(url: str) -> str:
    with psycopg.connect(url) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'tempo_agents'"
            ).fetchall()
        ]
        assert {"journal", "transcript", "outcomes", "thread_messages", "answered_calls"} <= set(tables)
        return "\n".join(
            str(row[0])
            for table in tables
            for row in conn.execute(f'SELECT t::text FROM tempo_agents."{table}" t').fetchall()
        )


@pytest.mark.parametrize("kind", STORES)
async def test_a_runs_content_is_sealed_in_the_store_and_the_api_still_returns_it(
    make_app: AppFactory, request: pytest.FixtureRequest, tmp_path: Path, kind: str
) -> None:
    url = fresh_store_url(request, kind, tmp_path)
    app = make_app([bookkeeper()], store=url, encryption_keys=KEYRING)
    memory = {"thread": "ledger-thread", "resource": "acme"}
    async with running_worker(app), served(app) as http:
        waiting = await app.generate("bookkeeper", PROMPT, memory=memory)
        assert waiting.finish_reason == "suspended"
        resumed = await app.resume_stream("bookkeeper", {"note": ANSWER}, run_id=waiting.run_id)
        done = await resumed.result()
        assert done.text == REPLY

        journal = "\n".join(sse_blocks((await http.get(f"/runs/{done.run_id}/stream")).content))
        thread = (await http.get("/threads/ledger-thread", params={"resourceId": "acme"})).text
        answers = await app.store.answered_calls(app.task_queue)
        for secret in (ARGUMENT, RESULT, ANSWER, REPLY):
            assert secret in journal, secret
        assert PROMPT in thread and REPLY in thread
        assert [answer.answer["data"] for answer in answers.answers] == [{"note": ANSWER}]

    store = app.store
    if isinstance(store, SQLiteStore):
        before = sqlite_bytes(store.path)
        assert b"ledger-thread" in b"".join(before.values())  # ids stay in clear: the bytes are read
        with sqlite3.connect(store.path) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        after = sqlite_bytes(store.path)
        for name, content in [*before.items(), *after.items()]:
            for secret in SECRETS:
                assert secret.encode() not in content, (name, secret)
    else:
        text = postgres_text(url)
        assert "ledger-thread" in text and done.run_id in text  # ids stay in clear: the rows are read
        for secret in SECRETS:
            assert secret not in text, secret
