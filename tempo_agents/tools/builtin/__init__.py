"""Built-in tools shipped with tempo-agents."""

__all__: list[str] = []
