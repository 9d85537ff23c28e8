"""The shop agent. Its instructions are in instructions.md, its tools in tools/, its sub-agent in subagents/.

A scripted model keeps the example runnable without a provider key; use ``model="openai/gpt-4o-mini"`` (or any
other model name) for a real one.
"""

from tempo_agents import ScriptedModel, ScriptedResponse, ScriptedToolCall, Usage
from tempo_agents.file_agents import agent_config

config = agent_config(
    description="Answers questions about the shop's stock",
    model=ScriptedModel(
        [
            ScriptedResponse(
                text="Let me check the shelves.",
                tool_calls=[ScriptedToolCall("stock", {"item": "apples"})],
                usage=Usage(input_tokens=20, output_tokens=6, total_tokens=26),
            ),
            ScriptedResponse(
                text="We have 12 apples in stock.", usage=Usage(input_tokens=30, output_tokens=7, total_tokens=37)
            ),
        ]
    ),
)
