"""Built-in tools shipped with tempo-agents."""
