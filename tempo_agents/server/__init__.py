"""The HTTP API: the reference's agent and tool routes, durable run streams and run operations."""

from tempo_agents.server.app import DEFAULT_PREFIX, create_server
from tempo_agents.server.auth import Authorize
from tempo_agents.server.errors import ApiError

__all__ = ["DEFAULT_PREFIX", "ApiError", "Authorize", "create_server"]
