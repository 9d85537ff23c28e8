"""``tempo-agents api``: a command-line client of the HTTP API."""
