"""MCP servers the tests start (written with the ``mcp`` SDK's server side)."""
