"""The Temporal plugin and worker entry point."""

from tempo_agents.worker.plugin import TempoAgentsPlugin

__all__ = ["TempoAgentsPlugin"]
