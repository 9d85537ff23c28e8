"""What the tests and bench/ share: harnesses, local servers (PostgreSQL, model providers, MCP), the chaos App."""
