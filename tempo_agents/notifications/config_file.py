"""Notification settings from a file (``tempo-agents dev/serve/worker --notifications FILE``, or
``$TEMPO_AGENTS_NOTIFICATIONS``): JSON, or TOML for a name ending in ``.toml``.

The file holds :class:`NotificationSettings` (``channels``, ``default``, ``public_url``, ``retry_for`` ... with
durations in seconds). A secret need not be written in it: a channel's ``secrets_env`` (a list of variable names),
``url_env``, ``password_env``, and a Slack app's ``bot_token_env`` and ``signing_secret_env`` name environment
variables that hold them.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

import pydantic

from tempo_agents.errors import ConfigurationError
from tempo_agents.notifications.channels import NotificationSettings

__all__ = ["NOTIFICATIONS_ENV", "load_notification_settings"]

NOTIFICATIONS_ENV = "TEMPO_AGENTS_NOTIFICATIONS"
"""The default of ``--notifications``: the path of a notification settings file."""

_FROM_ENV = {
    "secrets_env": "secrets",
    "url_env": "url",
    "password_env": "password",
    "bot_token_env": "bot_token",
    "signing_secret_env": "signing_secret",
}


def load_notification_settings(path: str | os.PathLike[str]) -> NotificationSettings:
    """The settings the file at ``path`` holds; a :class:`ConfigurationError` names what is wrong (never a secret)."""
    file = Path(path)
    try:
        text = file.read_text()
        raw: Any = tomllib.loads(text) if file.suffix == ".toml" else json.loads(text)
    except (OSError, ValueError) as error:
        raise ConfigurationError(f"notification settings {file}: {error}") from None
    if not isinstance(raw, dict):
        raise ConfigurationError(f"notification settings {file}: expected an object with 'channels'")
    raw["channels"] = [_with_env(channel, file) for channel in raw.get("channels", [])]
    try:
        return NotificationSettings.model_validate(raw)
    except pydantic.ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise ConfigurationError(f"notification settings {file}: {problems}") from None


def _with_env(channel: Any, file: Path) -> Any:
    if not isinstance(channel, dict):
        return channel
    resolved = dict(channel)
    for key, field in _FROM_ENV.items():
        if key not in resolved:
            continue
        names = resolved.pop(key)
        values = [_variable(name, file) for name in (names if isinstance(names, list) else [names])]
        resolved[field] = values if field == "secrets" else values[0]
    return resolved


def _variable(name: str, file: Path) -> str:
    value = os.environ.get(str(name))
    if not value:
        raise ConfigurationError(f"notification settings {file}: environment variable {name} is not set")
    return value
