"""The ways to name a Claude model: ``anthropic("claude-...")`` and the ``anthropic/<model>`` string."""

from __future__ import annotations

from typing import Any

from tempo_agents.errors import ConfigurationError
from tempo_agents.models.anthropic.adapter import AnthropicModel
from tempo_agents.models.anthropic.wire import PROVIDER

__all__ = ["anthropic", "from_model_string"]


def anthropic(model: str, **options: Any) -> AnthropicModel:
    """An :class:`AnthropicModel` for ``model`` (``"claude-sonnet-4-5"`` or ``"anthropic/claude-sonnet-4-5"``)."""
    if model.startswith(f"{PROVIDER}/"):
        model = model.split("/", 1)[1]
    return AnthropicModel(model, **options)


def from_model_string(spec: str, **options: Any) -> AnthropicModel:
    """The model an ``anthropic/<model>`` string names."""
    provider, sep, model = spec.partition("/")
    if provider != PROVIDER or not sep or not model.strip():
        raise ConfigurationError(
            f'"{spec}" is not an Anthropic model string; use anthropic/<model>, e.g. "anthropic/claude-sonnet-4-5"',
            code="MODEL_STRING_INVALID",
        )
    return AnthropicModel(model, **options)
