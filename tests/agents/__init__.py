"""How agents are defined: sub-agents and workflows as tools, file-based agents."""
