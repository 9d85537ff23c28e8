"""Turning an agent's ``model`` setting into a :class:`Model` on the worker."""

from __future__ import annotations

from tempo_agents.errors import ConfigurationError
from tempo_agents.models.model import Model


def resolve_model(spec: Model | str, *, agent_id: str) -> Model:
    """The model object an agent's ``model`` names.

    Model objects (for example :class:`ScriptedModel`) are used as they are. Provider strings
    (``provider/model``) are resolved by the provider adapters installed on the worker.
    """
    if isinstance(spec, Model):
        return spec
    if isinstance(spec, str) and "/" in spec:
        provider = spec.split("/", 1)[0]
        raise ConfigurationError(
            f'agent "{agent_id}": no adapter for model provider "{provider}" (model "{spec}") is installed '
            "on this worker; pass a Model object such as ScriptedModel"
        )
    raise ConfigurationError(
        f'agent "{agent_id}": model must be a Model object or a "provider/model" string, got {spec!r}'
    )
