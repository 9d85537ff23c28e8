"""The demo that ``tempo-agents demo`` runs: its App (a planner that waits for approval) ships in the package."""

from tempo_agents.cli.demo.app import DEMO_AGENT, DEMO_PROMPT, create_app

__all__ = ["DEMO_AGENT", "DEMO_PROMPT", "create_app"]
