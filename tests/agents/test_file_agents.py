"""File-based agents (``App.from_directory``): discovery of agents, tool files and sub-agents, the merge with
``config.py``, every warning and error text, and a directory app run on the dev server by a worker and a client
that each read the directory."""

from __future__ import annotations

import logging
import textwrap
from pathlib import Path

import pytest
from temporalio.client import Client

from tempo_agents import App
from tempo_agents.errors import ConfigurationError, ToolNameCollisionError
from tempo_agents.file_agents import FileAgentError
from tempo_agents.journal.chunks import ToolResultChunk

EXAMPLE = Path(__file__).parents[2] / "examples" / "fs_app"

SCRIPTED = (
    "from tempo_agents import ScriptedModel, ScriptedResponse\nMODEL = ScriptedModel([ScriptedResponse(text='ok')])\n"
)


def tool_file(tool_id: str, *, name: str = "tool") -> str:
    return textwrap.dedent(
        f"""
        from tempo_agents import create_tool

        {name} = create_tool(id={tool_id!r}, description="The {tool_id} tool", execute=lambda data: {tool_id!r})
        """
    )


def config_file(**fields: str) -> str:
    """A config.py setting ``config = agent_config(model=MODEL, <fields as Python source>)``."""
    arguments = "".join(f", {key}={value}" for key, value in fields.items())
    return (
        f"{SCRIPTED}from tempo_agents.file_agents import agent_config\nconfig = agent_config(model=MODEL{arguments})\n"
    )


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def load(root: Path, files: dict[str, str]) -> tuple[App, list[str]]:
    warnings: list[str] = []
    app = App.from_directory(write_tree(root, files), on_warn=warnings.append)
    return app, warnings


def test_agents_and_tool_files_are_found_in_sorted_order_and_the_file_stem_names_the_tool(tmp_path: Path) -> None:
    app, warnings = load(
        tmp_path,
        {
            "agents/zoo/instructions.md": "You run the zoo.\n",
            "agents/zoo/config.py": config_file(),
            "agents/bank/config.py": config_file(instructions="'You run the bank.'"),
            "agents/bank/tools/zeta.py": tool_file("zeta-tool"),
            "agents/bank/tools/alpha.py": tool_file("alpha-tool", name="alpha"),
            "agents/bank/tools/get weather.py": tool_file("weather-tool"),
            "agents/bank/tools/test_alpha.py": "raise SystemExit('tests are not tools')",
            "agents/bank/tools/alpha_test.py": "raise SystemExit('tests are not tools')",
            "agents/bank/tools/_helpers.py": "raise SystemExit('private modules are not tools')",
            "agents/bank/tools/__init__.py": "",
            "agents/bank/tools/notes.md": "not a tool",
            "agents/bank/tools/nested/deep.py": "raise SystemExit('folders are not searched')",
            "agents/notes/README.md": "a folder without config.py or instructions.md is not an agent",
            "agents/loose.py": "raise SystemExit('files under agents/ are not agents')",
            "elsewhere/linked_tool.py": tool_file("linked"),
            "elsewhere/agent/instructions.md": "a linked agent",
        },
    )
    (tmp_path / "agents/bank/tools/linked.py").symlink_to(tmp_path / "elsewhere/linked_tool.py")
    (tmp_path / "agents/linked").symlink_to(tmp_path / "elsewhere/agent", target_is_directory=True)
    app = App.from_directory(tmp_path, on_warn=warnings.append)

    assert [agent.id for agent in app.agents] == ["bank", "zoo"]
    bank, zoo = app.agents
    assert (bank.name, bank.instructions) == ("bank", "You run the bank.")
    assert zoo.instructions == "You run the zoo."
    assert {key: tool.id for key, tool in bank.tools.items()} == {
        "alpha": "alpha-tool",
        "get_weather": "weather-tool",  # the key is sanitised like any tool key
        "zeta": "zeta-tool",
    }
    assert list(bank.tools) == ["alpha", "get_weather", "zeta"]
    assert [definition.name for definition in bank.tool_definitions(None)] == ["alpha", "get_weather", "zeta"]
    assert warnings == []


def test_code_tools_win_over_tool_files_with_a_warning(tmp_path: Path) -> None:
    config = config_file(instructions="'Count.'", tools="{'count': counter, 'extra': counter}")
    config = config.replace("config =", tool_file("from-config", name="counter") + "config =")
    app, warnings = load(
        tmp_path,
        {
            "agents/clerk/config.py": config,
            "agents/clerk/tools/count.py": tool_file("from-file"),
            "agents/clerk/tools/stamp.py": tool_file("stamp"),
        },
    )
    clerk = app.agent("clerk")
    assert {key: tool.id for key, tool in clerk.tools.items()} == {
        "count": "from-config",
        "stamp": "stamp",
        "extra": "from-config",
    }
    assert warnings == ['Agent "clerk": tool "count" defined in both config.tools and tools/; config.tools wins.']


def test_warnings_are_logged_when_no_handler_is_given(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    write_tree(
        tmp_path,
        {
            "agents/clerk/config.py": config_file(instructions="lambda context: 'Count.'"),
            "agents/clerk/instructions.md": "Overruled.",
        },
    )
    with caplog.at_level(logging.WARNING, logger="tempo_agents.file_agents"):
        app = App.from_directory(tmp_path)
    assert callable(app.agent("clerk").instructions)
    assert [record.getMessage() for record in caplog.records] == [
        'Agent "clerk": instructions defined in both config.py and instructions.md; '
        "config.instructions is a function, so it wins."
    ]


def test_subagent_folders_become_the_agents_sub_agents_and_nest_at_most_three_levels(tmp_path: Path) -> None:
    def level(name: str) -> dict[str, str]:
        return {f"{name}/config.py": config_file(description=repr(f"The {name.rsplit('/', 1)[-1]} level"))}

    chain = "agents/top/subagents/one/subagents/two/subagents/three/subagents/four"
    files = {"agents/top/config.py": config_file(), "agents/top/instructions.md": "Delegate."}
    for depth in range(1, 5):
        path = "/".join(chain.split("/")[: 2 + 2 * depth])
        files |= level(path) | {f"{path}/instructions.md": f"Level {depth}."}
    files["agents/top/subagents/one/subagents/two/tools/note.py"] = tool_file("note")
    app, warnings = load(tmp_path, files)

    top = app.agent("top")
    assert list(top.agents) == ["one"]
    one = top.agents["one"]
    two = one.agents["two"]
    three = two.agents["three"]
    assert (one.id, one.description, one.instructions) == ("one", "The one level", "Level 1.")
    assert list(two.tools) == ["note", "agent-three"]  # its tool file, then its sub-agent
    assert list(three.agents) == []  # "four" would be four levels below top
    assert warnings == [
        'Agent "three": ignoring its subagents — subagents may only nest 3 levels below a top-level agent.'
    ]
    # sub-agents are registered beside their parent, so a worker of this App can run them as child workflows
    assert [agent.id for agent in app.agents] == ["top", "one", "two", "three"]


def test_two_subagent_folders_of_one_name_under_two_parents_need_distinct_ids(tmp_path: Path) -> None:
    sub = config_file(description="'Helps'", instructions="'Help.'")
    files = {f"agents/{parent}/config.py": config_file(instructions="'Lead.'") for parent in ("a", "b")}
    files |= {"agents/a/subagents/helper/config.py": sub, "agents/b/subagents/helper/config.py": sub}
    with pytest.raises(ConfigurationError, match=r'two agents share the id "helper": .*give one of them another id'):
        load(tmp_path / "same", files)
    files["agents/b/subagents/helper/config.py"] = config_file(
        id="'b-helper'", description="'Helps'", instructions="'Help.'"
    )
    app, _ = load(tmp_path / "distinct", files)
    assert [agent.id for agent in app.agents] == ["a", "b", "helper", "b-helper"]


def test_config_agents_win_over_subagent_folders_with_a_warning(tmp_path: Path) -> None:
    config = config_file(instructions="'Lead.'", agents="{'helper': HELPER}")
    config = config.replace(
        "config =", "from tempo_agents import Agent\nHELPER = Agent(id='coded', model=MODEL, description='x')\nconfig ="
    )
    app, warnings = load(
        tmp_path,
        {
            "agents/lead/config.py": config,
            "agents/lead/subagents/helper/config.py": config_file(description="'Helps'", instructions="'Help.'"),
            "agents/lead/subagents/runner/config.py": config_file(description="'Runs'", instructions="'Run.'"),
        },
    )
    lead = app.agent("lead")
    assert {key: agent.id for key, agent in lead.agents.items()} == {"helper": "coded", "runner": "runner"}
    assert warnings == [
        'Agent "lead": subagent "helper" defined in both config.agents and subagents/; config.agents wins.'
    ]


def test_a_config_that_is_an_agent_is_used_as_it_is(tmp_path: Path) -> None:
    agent = "Agent(id='ready-made', model=MODEL, instructions='Mine.')"
    config = f"{SCRIPTED}from tempo_agents import Agent\nconfig = {agent}\n"
    app, warnings = load(
        tmp_path,
        {
            "agents/made/config.py": config,
            "agents/made/instructions.md": "Ignored.",
            "agents/made/tools/broken.py": "raise SystemExit('an ignored tool file is not imported')",
            "agents/made/subagents/kid/instructions.md": "Ignored.",
        },
    )
    (made,) = app.agents
    assert (made.id, made.instructions, made.tools, made.agents) == ("ready-made", "Mine.", {}, {})
    assert warnings == [
        'Agent "made": config.py exports a new Agent(), so discovered tools under agents/made/tools/ are ignored.',
        'Agent "made": config.py exports a new Agent(), so agents/made/instructions.md is ignored.',
        'Agent "made": config.py exports a new Agent(), so discovered subagents under agents/made/subagents/ are '
        "ignored. Set 'agents' in the Agent config instead.",
    ]


@pytest.mark.parametrize(
    ("files", "code", "message"),
    [
        (
            {
                "agents/desk/instructions.md": "Work.",
                "agents/desk/config.py": config_file(),
                "agents/desk/tools/get weather.py": tool_file("a"),
                "agents/desk/tools/get_weather.py": tool_file("b"),
            },
            "AGENT_TOOL_NAME_COLLISION",
            'Two or more tools resolve to the same name "get_weather". '
            "Please rename one of the tools to avoid this collision.",
        ),
        (
            {"agents/desk/config.py": config_file(instructions="'Work.'"), "agents/desk/tools/empty.py": "X = 1\n"},
            "AGENT_FS_ROUTING_TOOL_REQUIRED",
            'Agent "desk": agents/desk/tools/empty.py exports no tool. '
            "Define one at module level with create_tool(...) (named `tool` when the file holds several).",
        ),
        (
            {
                "agents/desk/config.py": config_file(instructions="'Work.'"),
                "agents/desk/tools/two.py": tool_file("a", name="first") + tool_file("b", name="second"),
            },
            "AGENT_FS_ROUTING_TOOL_AMBIGUOUS",
            'Agent "desk": agents/desk/tools/two.py exports several tools (first, second). '
            "Name the one this file stands for `tool`.",
        ),
        (
            {
                "agents/desk/config.py": config_file(instructions="'Work.'"),
                "agents/desk/subagents/helper/instructions.md": "Help.",
                "agents/desk/subagents/helper/config.py": config_file(),
            },
            "AGENT_FS_ROUTING_SUBAGENT_DESCRIPTION_REQUIRED",
            'Agent "desk": subagent "helper" requires a non-empty \'description\'. '
            "Set one in agents/desk/subagents/helper/config.py.",
        ),
        (
            {
                "agents/desk/config.py": config_file(instructions="'Work.'"),
                "agents/desk/tools/helper.py": tool_file("helper"),
                "agents/desk/subagents/helper/config.py": config_file(description="'Helps'", instructions="'Help.'"),
            },
            "AGENT_FS_ROUTING_SUBAGENT_NAME_COLLISION",
            'Agent "desk": subagent "helper" collides with a tool of the same name. '
            "Rename agents/desk/subagents/helper/ or the tool.",
        ),
        (
            {"agents/desk/instructions.md": "Work."},
            "AGENT_FS_ROUTING_MODEL_REQUIRED",
            "Agent \"desk\": missing model in config.py and no default. Provide a 'model' in agents/desk/config.py.",
        ),
        (
            {"agents/desk/config.py": config_file(), "agents/desk/instructions.md": "  \n"},
            "AGENT_FS_ROUTING_INSTRUCTIONS_REQUIRED",
            'Agent "desk": missing instructions. '
            "Provide agents/desk/instructions.md, or an 'instructions' field in config.py.",
        ),
        (
            {"agents/desk/config.py": "settings = {}\n"},
            "AGENT_FS_ROUTING_ERROR",
            'Agent "desk": agents/desk/config.py must set `config` to agent_config(...) or to an Agent(...), '
            "but it does not set it.",
        ),
        (
            {"agents/desk/config.py": config_file(instructions="'Work.'", colour="'blue'")},
            "AGENT_FS_ROUTING_ERROR",
            "Agent \"desk\": agents/desk/config.py: Agent.__init__() got an unexpected keyword argument 'colour'",
        ),
        ({"elsewhere/x.md": ""}, "AGENT_FS_ROUTING_ERROR", "{root} has no agents/ folder"),
    ],
    ids=[
        "two-files-one-name",
        "file-without-tool",
        "file-with-two-tools",
        "subagent-without-description",
        "subagent-named-like-a-tool",
        "no-model",
        "no-instructions",
        "config-not-set",
        "unknown-config-field",
        "no-agents-folder",
    ],
)
def test_errors(tmp_path: Path, files: dict[str, str], code: str, message: str) -> None:
    write_tree(tmp_path, files)
    with pytest.raises((FileAgentError, ToolNameCollisionError)) as raised:
        App.from_directory(tmp_path)
    assert raised.value.code == code
    assert raised.value.message.startswith(message.replace("{root}", str(tmp_path)))


def test_a_default_model_serves_agents_whose_config_names_none(tmp_path: Path) -> None:
    write_tree(tmp_path, {"agents/desk/instructions.md": "Work."})
    app = App.from_directory(tmp_path, default_model="openai/gpt-4o-mini")
    assert app.agent("desk").model == "openai/gpt-4o-mini"


async def test_a_directory_app_runs_with_a_worker_and_a_client_that_each_read_the_directory(
    client: Client, tmp_path: Path
) -> None:
    store, task_queue = f"sqlite:///{tmp_path / 'store.db'}", f"tq-{tmp_path.name}"
    worker_app = App.from_directory(EXAMPLE, store=store, task_queue=task_queue, client=client)
    client_app = App.from_directory(EXAMPLE, store=store, task_queue=task_queue, client=client)
    assert [(agent.id, list(agent.tools), list(agent.agents)) for agent in client_app.agents] == [
        ("shop", ["price", "stock", "agent-supplier"], ["supplier"]),
        ("supplier", [], []),
    ]
    async with worker_app.worker():
        result = await client_app.agent("shop").generate("How many apples do you have?")
    (stock,) = [chunk.payload for chunk in result.chunks if isinstance(chunk, ToolResultChunk)]
    assert (stock.tool_name, stock.result) == ("stock", {"item": "apples", "count": 12})
    assert result.text.endswith("We have 12 apples in stock.")
    await worker_app.store.close()
    await client_app.store.close()
