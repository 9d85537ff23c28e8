"""How agents are defined: sub-agents and workflows as tools (also through the HTTP API and in the dashboard),
file-based agents (also from the CLI)."""
