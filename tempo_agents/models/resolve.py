"""Turning an agent's ``model`` setting into a :class:`Model` on the worker."""

from __future__ import annotations

from tempo_agents.errors import ConfigurationError
from tempo_agents.models.model import Model

__all__ = ["resolve_model"]

_cache: dict[str, Model] = {}
_model_types: set[type] = set()


def resolve_model(spec: Model | str, *, agent_id: str) -> Model:
    """The model object an agent's ``model`` names.

    Model objects (``ScriptedModel``, ``openai_compatible(...)``, ``anthropic(...)``) are used as
    they are; ``openai/<model>`` and ``anthropic/<model>`` strings become the provider adapters, with
    keys and base URLs read from the worker's environment when a step runs.
    """
    if not isinstance(spec, str):
        if type(spec) in _model_types:  # a runtime protocol check is slow: once per class
            return spec
        if isinstance(spec, Model):
            _model_types.add(type(spec))
            return spec
    elif "/" in spec:
        if spec in _cache:
            return _cache[spec]
        provider = spec.split("/", 1)[0]
        model: Model
        if provider == "openai":
            from tempo_agents.models.openai_compatible import from_model_string as openai_model

            model = openai_model(spec)
        elif provider == "anthropic":
            from tempo_agents.models.anthropic import from_model_string as anthropic_model

            model = anthropic_model(spec)
        else:
            raise ConfigurationError(
                f'agent "{agent_id}": no adapter for model provider "{provider}" (model "{spec}") is installed '
                'on this worker; use "openai/<model>", "anthropic/<model>", openai_compatible(...) for other '
                "OpenAI-compatible servers, or a Model object such as ScriptedModel"
            )
        _cache[spec] = model
        return model
    raise ConfigurationError(
        f'agent "{agent_id}": model must be a Model object or a "provider/model" string, got {spec!r}'
    )
