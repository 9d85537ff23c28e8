"""The docs' examples as code: the first agent runs against a real dev server as the README and the site show
it, every Python block on the site runs (those that act on what their page set up, in their scene, which checks
what they did), and every ``tempo-agents`` command line on it is one the command accepts."""

from __future__ import annotations

import ast
import asyncio
import base64
import inspect
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack, nullcontext
from pathlib import Path
from types import CodeType
from typing import Any

import httpx
import pytest
from temporalio.testing import WorkflowEnvironment

from tempo_agents._ports import free_port
from tempo_agents.cli.main import build_parser
from tests.support.docs_scenes import SCENES, Names, Scene
from tests.support.docs_site import ROOT, PythonBlock, code_blocks, page_sources, python_blocks
from tests.support.docs_stand_ins import ENVIRONMENT, local_mcp_servers, stand_ins
from tests.support.slack_server import FakeSlack, block_actions, fake_slack, signed_request

FIRST_AGENT = ROOT / "examples" / "first_agent.py"


def _without_docstring(source: str) -> str:
    body = ast.parse(source).body[0]
    assert isinstance(body, ast.Expr) and isinstance(body.value, ast.Constant)
    return "".join(source.splitlines(keepends=True)[body.end_lineno or 0 :]).lstrip("\n")


def test_the_readme_shows_the_first_agent_as_it_is_in_examples() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## A first agent") :]
    shown = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert shown is not None
    assert shown.group(1) == _without_docstring(FIRST_AGENT.read_text())


PROGRAMS = {
    "first_agent.py": ["It is 21 degrees in Oslo. stop"],  # the text, then the finish reason
    "edit_then_approve.py": ["suspended", "stop [{'paid': 450, 'to': 'acme-escrow'}]"],
    "waiting_for_people.py": ["suspended", "stop Charged 990. [{'charged': 990}]"],
}
"""Each example program the docs include and the lines it prints last, as a reader running it sees them."""


def test_every_example_program_the_docs_include_is_run_here() -> None:
    included = {name for _, name in re.findall(r'--8<-- "(examples/)([^"/]+\.py)"', _all_pages())}
    assert included == {*PROGRAMS, SLACK_PROGRAM.name}


def _all_pages() -> str:
    return "\n".join(page.read_text() for page in page_sources())


SLACK_PROGRAM = ROOT / "examples" / "slack_approval.py"
SLACK_SECRET = "signing-secret-of-the-tutorial"


def test_the_slack_tutorial_waits_for_a_click_in_slack(temporal_env: WorkflowEnvironment, tmp_path: Path) -> None:
    """The tutorial's program against a local server playing Slack: the request is posted with the bot token,
    alice's signed click on Approve reaches the program's API, and the run goes on to its end."""
    address = temporal_env.client.service_client.config.target_host
    program = tmp_path / SLACK_PROGRAM.name
    program.write_text(SLACK_PROGRAM.read_text().replace("localhost:7233", address))
    with fake_slack(FakeSlack("xoxb-tutorial", {})) as slack:
        port = free_port()
        settings = {"SLACK_BOT_TOKEN": "xoxb-tutorial", "SLACK_CHANNEL": "C0TUTORIAL", "SLACK_ALICE": "U0ALICE"}
        environment = {
            **os.environ,
            **settings,
            "SLACK_SIGNING_SECRET": SLACK_SECRET,
            "LINK_SECRET": "link-secret-of-the-tutorial",
            "SLACK_API_URL": slack.api_url,
            "PUBLIC_URL": f"http://127.0.0.1:{port}",
            "PORT": str(port),
        }
        running = subprocess.Popen(
            [sys.executable, str(program)], cwd=tmp_path, env=environment, stdout=subprocess.PIPE, text=True
        )
        try:
            assert running.stdout is not None
            assert running.stdout.readline().strip() == "suspended"
            [posted] = _when(lambda: slack.posted)
            assert posted["channel"] == "C0TUTORIAL"
            [actions] = [block for block in posted["blocks"] if block["type"] == "actions"]
            [approve] = [button["value"] for button in actions["elements"] if button["action_id"] == "answer:approve"]
            click = block_actions("U0ALICE", "answer:approve", approve, slack.response_url("alice"))
            body, headers = signed_request(SLACK_SECRET, click)
            answered = httpx.post(f"http://127.0.0.1:{port}/api/slack/interactions", content=body, headers=headers)
            assert answered.status_code == 200, answered.text
            printed, _ = running.communicate(timeout=90)
        finally:
            running.kill()
            running.wait(10)
        assert running.returncode == 0
        assert printed.splitlines()[-1] == "stop Refunded 120 on order 1187."
        assert slack.responses["alice"][0]["text"] == "Approved by @alice"


def _when(found: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 60
    while not found():
        assert time.monotonic() < deadline, "nothing was posted to Slack"
        time.sleep(0.1)
    return found()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_an_example_program_runs(name: str, temporal_env: WorkflowEnvironment, tmp_path: Path) -> None:
    address = temporal_env.client.service_client.config.target_host
    program = tmp_path / name
    program.write_text((ROOT / "examples" / name).read_text().replace("localhost:7233", address))
    done = subprocess.run([sys.executable, str(program)], cwd=tmp_path, capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = done.stdout.splitlines()[-len(PROGRAMS[name]) :]
    assert [line for line, expected in zip(printed, PROGRAMS[name], strict=True) if expected not in line] == []


BLOCKS = [block for block in python_blocks() if not block.included]
"""The Python blocks written on the pages themselves (the included programs run above, whole)."""


def test_every_scene_sets_a_block_of_the_site() -> None:
    assert set(SCENES) - {block.name for block in BLOCKS} == set()


@pytest.mark.parametrize("block", BLOCKS, ids=str)
def test_a_block_runs(
    block: PythonBlock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """The block runs in a namespace holding the names its page introduced before it, in a folder of its own
    (where ``myapp/`` is the file-defined App of examples/ and ``keys.json`` a keys file), its servers the tests'
    own: the dev server for the Temporal address it connects to, local MCP servers for its MCP servers. A block
    that acts on what its page set up in prose (a waiting run, a connected App) runs in its scene, which prepares
    that and then checks what the block did."""
    for name, value in ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    shutil.copytree(ROOT / "examples" / "fs_app", tmp_path / "myapp")
    (tmp_path / "keys.json").write_text(
        json.dumps({"keys": [{"id": "k1", "key": base64.b64encode(b"k" * 32).decode()}]})
    )
    monkeypatch.chdir(tmp_path)
    scene = SCENES.get(block.name)
    with ExitStack() as stack:
        if "mcp_tools(" in block.code:
            for name, value in stack.enter_context(local_mcp_servers(tmp_path)).items():
                monkeypatch.setenv(name, value)
        source, address = block.code, ""
        if scene is not None or "await app." in source:  # the dev server, for the address the block names
            env: WorkflowEnvironment = request.getfixturevalue("temporal_env")
            address = env.client.service_client.config.target_host
            source = source.replace("temporal:7233", address).replace("localhost:7233", address)
        tree = ast.increment_lineno(ast.parse(source), block.line - 1)  # a traceback names the page's own lines
        code = compile(tree, str(block.page), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
        connect_to = address if address and scene is None and "app.connect(" not in source else None
        asyncio.run(_run(code, stand_ins(), connect_to, scene, address))


async def _run(code: CodeType, namespace: Names, connect_to: str | None, scene: Scene | None, address: str) -> None:
    """Run ``code`` in ``namespace``, in its ``scene``, or its App first connected to ``connect_to`` (when the
    block does not connect it)."""
    async with scene(namespace, address) if scene is not None else nullcontext():
        if connect_to is not None:
            await namespace["app"].connect(connect_to)
        awaited = eval(code, namespace)  # the docs' own code, run as a reader would
        if inspect.iscoroutine(awaited):
            await awaited


def _command_lines(script: str) -> list[list[str]]:
    """The arguments of each ``tempo-agents`` invocation in a shell block. A line that spells alternatives
    (``list|show``, no spaces around the bar, as a pipe would have) is a synopsis, not a command line."""
    found: list[list[str]] = []
    for line in script.replace("\\\n", " ").splitlines():
        if re.search(r"\w\|\w", line.split("#")[0]):
            continue
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        try:
            words = list(lexer)
        except ValueError:
            continue
        command: list[str] = []
        at_start = True  # the first word of a command (after any VAR=value assignments)
        for word in [*words, ";"]:
            if word and set(word) <= set(";&|"):
                if command:
                    found.append(command)
                command, at_start = [], True
            elif command or (at_start and word == "tempo-agents"):
                command.append(word)
            elif not re.fullmatch(r"\w+=.*", word):
                at_start = False
    return [command[1:] for command in found]


def test_every_command_line_on_the_site_is_accepted() -> None:
    parser = build_parser()
    lines = [args for language in ("bash", "sh") for _, code in code_blocks(language) for args in _command_lines(code)]
    assert len(lines) >= 15, lines
    refused = []
    for args in lines:
        try:
            parser.parse_args(args)
        except SystemExit:
            refused.append(" ".join(args))
    assert refused == []
