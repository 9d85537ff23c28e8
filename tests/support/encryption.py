"""Encryption keys and a run whose every part carries a distinctive string, for the tests of payloads sealed in
Temporal (``tests/encryption/``) and the benchmarks run with encryption on."""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
from typing import Any

from temporalio import workflow
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, ToolContext, create_tool
from tempo_agents.encryption import KEY_ID_METADATA, EncryptionKey, Keyring, is_encrypted
from tempo_agents.workflows import search_attributes
from tests.support.polling import until

__all__ = [
    "ANSWER",
    "ARGUMENT",
    "CHILD_RESULT",
    "IN_HISTORY",
    "PROMPT",
    "RESULT",
    "RESUME_NOTE",
    "SECRETS",
    "StampWorkflow",
    "keyring",
    "ledger_agent",
    "payload_key_ids",
    "readable",
    "start_and_suspend",
    "until_suspended",
]

PROMPT = "prompt-ZEBRA-7781 invoice of Hannelore Quist"
ARGUMENT = "arg-QUOKKA-5512"
RESULT = "result-NARWHAL-9931"
RESUME_NOTE = "resume-AXOLOTL-4410"
ANSWER = "answer-OKAPI-3319 all settled"
CHILD_RESULT = "child-result-IBEX-2207"
SECRETS = (PROMPT, ARGUMENT, RESULT, RESUME_NOTE, ANSWER, CHILD_RESULT)
"""What a run of :func:`ledger_agent` carries: its prompt, a tool's argument and result, a person's answer, the
model's final answer and a workflow tool's result."""
IN_HISTORY = (PROMPT, ARGUMENT, RESUME_NOTE, CHILD_RESULT)
"""Those of :data:`SECRETS` that go through Temporal at all: an activity tool's result and the final answer are
kept in the store, and the history holds only their references."""


@workflow.defn(name="Stamp", sandboxed=False)
class StampWorkflow:
    """A workflow tool: stamps a customer (a child workflow whose result is :data:`CHILD_RESULT`)."""

    @workflow.run
    async def run(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"stamp": f"{CHILD_RESULT} for {data['customer']}"}


def keyring(*key_ids: str) -> Keyring:
    """A keyring of these ids (first seals); each id's key is derived from the id, so two Apps given the same id
    hold the same key."""
    return Keyring(tuple(EncryptionKey(key_id, hashlib.sha256(key_id.encode()).digest()) for key_id in key_ids))


def ledger_agent() -> Agent:
    """``ledger``: looks a customer up (``lookup``, result :data:`RESULT`), stamps it (the workflow tool
    ``stamp``) and asks a person to confirm (``confirm``, answered with a note), then answers :data:`ANSWER`."""

    async def lookup(data: dict[str, Any], ctx: ToolContext) -> Any:
        return {"record": f"{RESULT} for {data['customer']}"}

    async def confirm(data: dict[str, Any], ctx: ToolContext) -> Any:
        if ctx.resume_data is None:
            assert ctx.suspend is not None
            return await ctx.suspend({"question": f"settle {data['customer']}?"})
        return {"settled": ctx.resume_data["note"]}

    customer = {"type": "object", "properties": {"customer": {"type": "string"}}, "required": ["customer"]}
    note = {"type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"]}
    tools = {
        "lookup": create_tool(id="lookup", description="Finds a customer", input_schema=customer, execute=lookup),
        "confirm": create_tool(
            id="confirm", description="Asks a person", input_schema=customer, resume_schema=note, execute=confirm
        ),
    }
    calls = [
        ScriptedToolCall("lookup", {"customer": ARGUMENT}, id="look"),
        ScriptedToolCall("workflow-stamp", {"inputData": {"customer": ARGUMENT}}, id="stamp"),
        ScriptedToolCall("confirm", {"customer": ARGUMENT}, id="ask"),
    ]
    model = ScriptedModel([ScriptedResponse(tool_calls=calls), ScriptedResponse(text=ANSWER)])
    return Agent(id="ledger", model=model, tools=tools, workflows={"stamp": StampWorkflow})


async def until_suspended(client: Client, run_id: str) -> None:
    """Wait until the run waits for a person with no activity left running."""
    handle = client.get_workflow_handle(run_id)

    async def suspended() -> bool:
        description = await handle.describe()
        status = description.typed_search_attributes.get(search_attributes.STATUS)
        return not description.raw_description.pending_activities and status == "suspended"

    await until(suspended, timeout=90)


async def start_and_suspend(app: App) -> str:
    """Start a run of ``ledger`` with :data:`PROMPT` and return its id once it waits for the confirmation."""
    first = await app.agent("ledger").generate(PROMPT)
    await until_suspended(app.client, first.run_id)
    return first.run_id


def readable(output: str) -> str:
    """What the CLI printed as JSON, with each base64 string (payload data and metadata, as JSON has them) decoded
    beside it: what anyone reading the output can read."""
    texts: list[str] = [output]

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str):
            with contextlib.suppress(binascii.Error, ValueError):
                texts.append(base64.b64decode(value, validate=True).decode("utf-8", "replace"))

    walk(json.loads(output))
    return "\n".join(texts)


def payload_key_ids(events: list[HistoryEvent]) -> set[str]:
    """The key ids of the encrypted payloads of workflow inputs, activity inputs and results, updates and results
    in ``events`` (``"clear"`` for one not encrypted)."""
    ids: set[str] = set()
    for event in events:
        for payload in _payloads(event):
            ids.add(payload.metadata[KEY_ID_METADATA].decode() if is_encrypted(payload) else "clear")
    return ids


def _payloads(event: HistoryEvent) -> list[Any]:
    which = event.WhichOneof("attributes")
    if which is None:
        return []
    attributes = getattr(event, which)
    found = []
    for name in ("input", "result"):
        if attributes.DESCRIPTOR.fields_by_name.get(name) and attributes.HasField(name):
            found.extend(getattr(attributes, name).payloads)
    if which == "workflow_execution_update_accepted_event_attributes":
        found.extend(attributes.accepted_request.input.args.payloads)
    return found
