"""``web_search_tool``: a marker the model adapter replaces with the provider's native search.

It has no ``execute``: the provider runs the search, and its results arrive as ``tool-result``
chunks with ``providerExecuted: true``. OpenAI and Anthropic adapters map it; ``google`` and ``xai``
are recognised provider names; any other provider fails the run with ``WEB_SEARCH_UNSUPPORTED_PROVIDER``
(``models/web_search.py``, where the adapters find it).
"""

from __future__ import annotations

from tempo_agents.models.web_search import (
    SUPPORTED_PROVIDERS,
    WEB_SEARCH_UNSUPPORTED_PROVIDER,
    base_provider,
    web_search_unsupported,
)
from tempo_agents.tools.tool import Tool, create_tool

__all__ = [
    "SUPPORTED_PROVIDERS",
    "WEB_SEARCH_UNSUPPORTED_PROVIDER",
    "base_provider",
    "web_search_tool",
    "web_search_unsupported",
]

web_search_tool: Tool = create_tool(
    id="web_search",
    description="Search the web with the model provider's built-in search tool.",
)
"""Web search by the model provider itself: the adapter replaces this marker with the provider's native tool."""
web_search_tool.provider_tool = "web_search"
