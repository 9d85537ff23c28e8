"""The ways to name an OpenAI-compatible model: a server and a model, a local server, an ``openai/<model>`` string."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from tempo_agents.errors import ConfigurationError
from tempo_agents.models.openai_compatible.adapter import OpenAICompatibleModel

__all__ = ["LOCAL_SERVER_URLS", "LocalServer", "from_model_string", "local_model", "openai_compatible"]


def openai_compatible(
    model: str,
    *,
    base_url: str,
    api_key_env: str | None = "OPENAI_API_KEY",
    provider: str = "openai-compatible",
    **options: Any,
) -> OpenAICompatibleModel:
    """A model on any OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio, OpenRouter, ...).

    ``api_key_env=None`` for servers that need no key. ``options``: ``headers``, ``connect_timeout``,
    ``read_timeout``, ``client`` (see :class:`OpenAICompatibleModel`).
    """
    return OpenAICompatibleModel(model, base_url=base_url, api_key_env=api_key_env, provider=provider, **options)


LocalServer: TypeAlias = Literal["ollama", "llama.cpp", "vllm", "lm-studio"]

LOCAL_SERVER_URLS: dict[str, str] = {
    "ollama": "http://localhost:11434/v1",
    "llama.cpp": "http://localhost:8080/v1",
    "vllm": "http://localhost:8000/v1",
    "lm-studio": "http://localhost:1234/v1",
}
"""Where each local server listens when started with its defaults (``ollama serve``, ``llama-server``,
``vllm serve``, LM Studio's server)."""


def local_model(
    model: str,
    server: LocalServer,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    **options: Any,
) -> OpenAICompatibleModel:
    """A model on a local OpenAI-compatible server, by default at that server's default address.

    ``local_model("llama3.1", "ollama")`` talks to ``http://localhost:11434/v1`` with no key; give
    ``base_url`` for another host or port, and ``api_key_env`` when the server was started with an API key
    (``llama-server --api-key``, ``vllm serve --api-key``). ``model`` is the name the server knows the model
    by. The provider label is ``server``. ``options`` as for :func:`openai_compatible`.
    """
    if server not in LOCAL_SERVER_URLS:
        known = ", ".join(repr(name) for name in LOCAL_SERVER_URLS)
        raise ConfigurationError(f"local_model: unknown server {server!r}; expected one of {known}")
    url = base_url if base_url is not None else LOCAL_SERVER_URLS[server]
    return OpenAICompatibleModel(model, base_url=url, api_key_env=api_key_env, provider=server, **options)


def from_model_string(spec: str, **options: Any) -> OpenAICompatibleModel:
    """The model for ``openai/<model>``: ``OPENAI_BASE_URL`` (or api.openai.com) and ``OPENAI_API_KEY``."""
    prefix, _, model = spec.partition("/")
    if prefix != "openai" or not model.strip():
        raise ConfigurationError(f'expected a model string "openai/<model>", got {spec!r}')
    return OpenAICompatibleModel(model, base_url=None, api_key_env="OPENAI_API_KEY", provider="openai", **options)
