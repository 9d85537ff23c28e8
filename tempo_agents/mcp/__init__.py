"""Tools from MCP servers: :func:`mcp_tools` lists a server's tools and turns each into a tempo-agents tool.

Needs the ``mcp`` extra (``pip install 'tempo-agents[mcp]'``).
"""

try:  # the MCP client library comes with the extra only
    import mcp as _mcp  # noqa: F401
except ImportError:
    raise ModuleNotFoundError("MCP tools need the mcp package: pip install 'tempo-agents[mcp]'", name="mcp") from None

from tempo_agents.mcp._server import McpServerUnavailableError, McpToolError
from tempo_agents.mcp._tools import list_mcp_tools, mcp_tools

__all__ = ["McpServerUnavailableError", "McpToolError", "list_mcp_tools", "mcp_tools"]
