"""Every warning and error text of file-based agents.

The texts are the reference framework's, with Python's file names: ``config.py`` for ``config.ts``, ``.py`` tool
files. Texts for what Python has no counterpart of (``instructions.ts``, skills, workspaces, processors …) are left
out; the texts marked "ours" cover what Python adds (a tool file is a module that must hold a tool).
"""

from __future__ import annotations

__all__ = [
    "MAX_SUBAGENT_DEPTH",
    "agent_ignores_instructions",
    "agent_ignores_subagents",
    "agent_ignores_tools",
    "instructions_function_wins",
    "instructions_required",
    "model_required",
    "no_agents_folder",
    "no_config_in_file",
    "no_tool_in_file",
    "several_tools_in_file",
    "subagent_collides_with_tool",
    "subagent_defined_twice",
    "subagent_description_required",
    "subagents_too_deep",
    "tool_defined_twice",
]

MAX_SUBAGENT_DEPTH = 3
"""How many levels of ``subagents/`` may nest below a top-level agent."""


# warnings -----------------------------------------------------------------------------------


def tool_defined_twice(name: str, key: str) -> str:
    return f'Agent "{name}": tool "{key}" defined in both config.tools and tools/; config.tools wins.'


def subagent_defined_twice(name: str, child_id: str) -> str:
    return f'Agent "{name}": subagent "{child_id}" defined in both config.agents and subagents/; config.agents wins.'


def subagents_too_deep(name: str) -> str:
    return (
        f'Agent "{name}": ignoring its subagents — subagents may only nest {MAX_SUBAGENT_DEPTH} levels below a '
        "top-level agent."
    )


def instructions_function_wins(name: str) -> str:
    return (
        f'Agent "{name}": instructions defined in both config.py and instructions.md; '
        "config.instructions is a function, so it wins."
    )


def agent_ignores_tools(name: str) -> str:
    return (
        f'Agent "{name}": config.py exports a new Agent(), so discovered tools under agents/{name}/tools/ are ignored.'
    )


def agent_ignores_instructions(name: str) -> str:
    return f'Agent "{name}": config.py exports a new Agent(), so agents/{name}/instructions.md is ignored.'


def agent_ignores_subagents(name: str) -> str:
    return (
        f'Agent "{name}": config.py exports a new Agent(), so discovered subagents under agents/{name}/subagents/ '
        "are ignored. Set 'agents' in the Agent config instead."
    )


# errors ---------------------------------------------------------------------------------------


def model_required(name: str) -> str:
    return f"Agent \"{name}\": missing model in config.py and no default. Provide a 'model' in agents/{name}/config.py."


def instructions_required(name: str) -> str:
    return (
        f'Agent "{name}": missing instructions. '
        f"Provide agents/{name}/instructions.md, or an 'instructions' field in config.py."
    )


def subagent_collides_with_tool(name: str, child_id: str) -> str:
    return (
        f'Agent "{name}": subagent "{child_id}" collides with a tool of the same name. '
        f"Rename agents/{name}/subagents/{child_id}/ or the tool."
    )


def subagent_description_required(name: str, child_id: str) -> str:
    return (
        f'Agent "{name}": subagent "{child_id}" requires a non-empty \'description\'. '
        f"Set one in agents/{name}/subagents/{child_id}/config.py."
    )


def no_tool_in_file(name: str, file: str) -> str:  # ours
    return (
        f'Agent "{name}": {file} exports no tool. '
        "Define one at module level with create_tool(...) (named `tool` when the file holds several)."
    )


def several_tools_in_file(name: str, file: str, names: list[str]) -> str:  # ours
    return (
        f'Agent "{name}": {file} exports several tools ({", ".join(names)}). Name the one this file stands for `tool`.'
    )


def no_config_in_file(name: str, file: str, found: str) -> str:  # ours
    return f'Agent "{name}": {file} must set `config` to agent_config(...) or to an Agent(...), but {found}.'


def no_agents_folder(path: str) -> str:  # ours
    return f"{path} has no agents/ folder: put each agent in agents/<name>/ (with config.py or instructions.md)"
