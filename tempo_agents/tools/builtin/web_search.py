"""``web_search_tool``: a marker the model adapter replaces with the provider's native search (reference §4.8).

It has no ``execute``: the provider runs the search, and its results arrive as ``tool-result``
chunks with ``providerExecuted: true``. OpenAI and Anthropic adapters map it; ``google`` and ``xai``
are recognised provider names; any other provider fails the run with the reference's text.
"""

from __future__ import annotations

from tempo_agents.errors import ConfigurationError
from tempo_agents.tools.tool import Tool, create_tool

WEB_SEARCH_UNSUPPORTED_PROVIDER = "WEB_SEARCH_UNSUPPORTED_PROVIDER"
SUPPORTED_PROVIDERS = frozenset({"openai", "anthropic", "google", "xai"})


def web_search_unsupported(provider: str) -> ConfigurationError:
    """The error for the web search marker offered to a provider without a native search tool."""
    return ConfigurationError(
        "The built-in webSearchTool supports OpenAI, Anthropic, Google, and xAI models. "
        f'Could not infer a supported provider from "{provider}".',
        code=WEB_SEARCH_UNSUPPORTED_PROVIDER,
    )


def base_provider(provider: str) -> str:
    """``openai.responses`` → ``openai``; router strings ``openai/gpt-5`` → ``openai``."""
    return provider.split("/", 1)[0].split(".", 1)[0].lower()


web_search_tool: Tool = create_tool(
    id="web_search",
    description="Search the web with the model provider's built-in search tool.",
)
web_search_tool.provider_tool = "web_search"
