"""Tools: validation, built-in tools (tasks, web_fetch, ask_user), MCP tools, transforms."""
