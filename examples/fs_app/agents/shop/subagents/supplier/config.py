"""The supplier sub-agent: the shop's model sees it as the tool ``agent-supplier``; a sub-agent needs a
description."""

from tempo_agents import ScriptedModel, ScriptedResponse
from tempo_agents.file_agents import agent_config

config = agent_config(
    description="Orders items that have run out from the supplier",
    model=ScriptedModel([ScriptedResponse(text="Ordered.")]),
)
