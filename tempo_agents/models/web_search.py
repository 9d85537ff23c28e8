"""Web search as the model adapters see it: which providers search natively, and the error for the others.

An agent offers search with the ``web_search_tool`` marker (``tools/builtin/web_search.py``), which reaches
an adapter as a :class:`~tempo_agents.models.model.ToolDefinition` of ``kind="web_search"``; the adapter
maps it to its provider's own search tool, or raises :func:`web_search_unsupported`.
"""

from __future__ import annotations

from tempo_agents.errors import ConfigurationError

__all__ = ["SUPPORTED_PROVIDERS", "WEB_SEARCH_UNSUPPORTED_PROVIDER", "base_provider", "web_search_unsupported"]

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
