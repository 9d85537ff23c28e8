"""Webhook sources from a TOML file (``tempo-agents serve|dev --webhook-sources FILE``).

The file names each source's environment variables, never its secrets::

    [sources.tracker]
    agent = "triage"
    template = "ticket"
    secret_env = "TRACKER_WEBHOOK_SECRET"      # Standard Webhooks; secret_envs = [...] while rotating

    [sources.ci]
    agent = "triage"
    token_env = "CI_WEBHOOK_TOKEN"             # a shared token; token_envs = [...] while rotating
    token_header = "x-ci-token"
    event_id_field = "build.id"                # the sender's event id when it sends no webhook-id

A secret written in the file itself, an unknown key or an unset variable is a :class:`ConfigurationError` that
names the key or the variable, never a value.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from tempo_agents.errors import ConfigurationError
from tempo_agents.ingress.webhook_sources import WebhookSource

__all__ = ["load_webhook_sources"]

_KEYS = {
    "agent",
    "template",
    "secret_env",
    "secret_envs",
    "token_env",
    "token_envs",
    "token_header",
    "event_id_field",
    "tolerance_seconds",
    "thread",
    "thread_field",
    "resource",
    "resource_field",
}


def load_webhook_sources(path: str | Path, environ: Mapping[str, str] | None = None) -> list[WebhookSource]:
    """The sources of the TOML file at ``path``, their secrets read from ``environ`` (``os.environ``)."""
    env = os.environ if environ is None else environ
    try:
        document = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigurationError(f"cannot read the webhook sources file {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigurationError(f"the webhook sources file {path} is not TOML: {error}") from None
    sources = document.get("sources")
    if not isinstance(sources, dict) or set(document) != {"sources"}:
        raise ConfigurationError(f"the webhook sources file {path} must hold [sources.<name>] tables only")
    return [_source(str(name), table, env, path) for name, table in sources.items()]


def _source(name: str, table: Any, env: Mapping[str, str], path: str | Path) -> WebhookSource:
    where = f"webhook source {name} in {path}"
    if not isinstance(table, dict):
        raise ConfigurationError(f"{where} must be a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        hint = (
            " (secrets come from environment variables: secret_env, token_env)"
            if any(key in ("secret", "secrets", "token", "tokens") for key in unknown)
            else ""
        )
        raise ConfigurationError(f"{where}: unknown key(s) {', '.join(unknown)}{hint}")
    agent = table.get("agent")
    if not isinstance(agent, str):
        raise ConfigurationError(f'{where} needs agent = "<agent id>"')
    tolerance = table.get("tolerance_seconds")
    if tolerance is not None and (not isinstance(tolerance, int | float) or isinstance(tolerance, bool)):
        raise ConfigurationError(f"{where}: tolerance_seconds must be a number")
    tolerance_option = {} if tolerance is None else {"tolerance": timedelta(seconds=tolerance)}
    return WebhookSource(
        name=name,
        agent=agent,
        secrets=_from_env(table, "secret", env, where),
        tokens=_from_env(table, "token", env, where),
        token_header=_text(table, "token_header", where) or "authorization",
        template=_text(table, "template", where),
        event_id_field=_text(table, "event_id_field", where),
        thread=_text(table, "thread", where),
        thread_field=_text(table, "thread_field", where),
        resource=_text(table, "resource", where),
        resource_field=_text(table, "resource_field", where),
        **tolerance_option,
    )


def _text(table: Mapping[str, Any], key: str, where: str) -> str | None:
    value = table.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigurationError(f"{where}: {key} must be a string")
    return value


def _from_env(table: Mapping[str, Any], kind: str, env: Mapping[str, str], where: str) -> list[str]:
    names: list[Any] = []
    if f"{kind}_env" in table:
        names.append(table[f"{kind}_env"])
    if f"{kind}_envs" in table:
        listed = table[f"{kind}_envs"]
        if not isinstance(listed, list):
            raise ConfigurationError(f"{where}: {kind}_envs must be a list of variable names")
        names.extend(listed)
    values: list[str] = []
    for variable in names:
        if not isinstance(variable, str):
            raise ConfigurationError(f"{where}: {kind}_env must name an environment variable")
        value = env.get(variable)
        if not value:
            raise ConfigurationError(f"{where}: the environment variable {variable} is not set")
        values.append(value)
    return values
