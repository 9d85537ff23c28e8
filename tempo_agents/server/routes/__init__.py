"""The HTTP API's routers: agents and tools (the reference's routes) and runs (operations)."""

__all__: list[str] = []
