"""``tempo-agents api``: a command-line client of the HTTP API."""

__all__: list[str] = []
